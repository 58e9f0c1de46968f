"""What the command's one error line adds when Spark failed a window: which window (a backfill's chunk k of n),
what is committed, that the same command resumes there, and, when Spark ran out of memory, the setting to raise.

Spark's own message says none of it (docs/performance.md#memory); its Java stack goes to the job's Spark log and
the window's run-log row (`error`), not to the terminal.
"""

from __future__ import annotations

__all__ = ["MEMORY_SIGNS", "MEMORY_HINT", "window_note", "memory_note"]

# Spark's words when the driver (a local session's executors too) or an executor ran out of heap.
MEMORY_SIGNS = (
    "Not enough memory to build and broadcast",
    "java.lang.OutOfMemoryError",
    "SparkOutOfMemoryError",
    "Java heap space",
    "GC overhead limit exceeded",
)
MEMORY_HINT = (
    "Spark ran out of memory: raise spark.driver.memory (a local session; spark.executor.memory on a cluster) under "
    """[spark.conf] in the settings file, or e.g. DELTAINC_SPARK__CONF='{"spark.driver.memory": "8g"}'"""
)


def memory_note(text: str) -> str | None:
    """`MEMORY_HINT` when the error's `text` (its Java exception's, stack included) says Spark ran out of memory."""
    return MEMORY_HINT if any(sign in text for sign in MEMORY_SIGNS) else None


def window_note(exc: BaseException, chunks: bool) -> str | None:
    """Which window `exc` ended and how to go on, or None when no window of the command raised it. `chunks`: the
    command is a backfill, whose windows are chunks of the range.

    Example: "chunk 8 of 12 (2024-08-01..2024-08-31) failed; chunks 1-7 are committed (watermark 2024-07-31);
    run the same command again to resume at chunk 8: processed chunks are skipped".
    """
    from deltainc.pipeline import failed_window

    failed = failed_window(exc)
    if failed is None:
        return None
    k, n, window = failed.number, failed.total, failed.window
    committed = f"the watermark is {failed.watermark}" if failed.watermark else "nothing is committed yet"
    if not chunks:
        return f"window {window} ({k} of {n}) failed; {committed}; run the same command again to resume at {window}"
    if k > 1:
        before = "chunk 1 is" if k == 2 else f"chunks 1-{k - 1} are"
        committed = f"{before} committed ({committed})"
    return (
        f"chunk {k} of {n} ({window}) failed; {committed}; run the same command again to resume at chunk {k}: "
        "processed chunks are skipped"
    )
