"""A stop (SIGTERM, Ctrl-C) that lands while a window's commit is under way: the run ends only once that commit has.

The signal interrupts the command's main thread, not the Spark call: the JVM goes on and may still commit. So each
commit of a window runs in a thread of its own while the main thread waits for it (`finish_commit`); a stop that
arrives meanwhile cancels the session's Spark jobs and still waits for the call to return, commit or failure.
Only then does the run record `cancelled` and release its lock, so nothing of it can commit after the lock is free
(docs/design.md#state-tables-and-the-lock). What did land is read back from the target's history by the run id
its userMetadata carries (`landed_commit`), so the cancelled row says what the window wrote.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import TypeVar

from pyspark.sql import SparkSession

from deltainc.errors import Cancelled
from deltainc.pipeline.delta.sql import latest_commit
from deltainc.pipeline.job.table_refs import TableRef
from deltainc.pipeline.target.commit_metrics import CommitResult, last_commit
from deltainc.spark_compat import is_connect

__all__ = ["finish_commit", "landed_commit"]

T = TypeVar("T")

log = logging.getLogger("deltainc")


def _cancel_jobs(spark: SparkSession) -> None:
    """Cancel the session's running Spark jobs (best effort: the JVM may be going down with the same signal)."""
    try:
        if is_connect(spark):
            spark.interruptAll()
        else:
            spark.sparkContext.cancelAllJobs()
    except Exception:
        log.debug("could not cancel the Spark jobs", exc_info=True)


def finish_commit(spark: SparkSession, commit: Callable[[], T]) -> T:
    """`commit()`, run so that a stop waits for it: in a thread of its own, the caller waiting. A stop (Cancelled,
    KeyboardInterrupt) that arrives meanwhile cancels the Spark jobs, waits until the call has returned (further
    signals do not cut the wait short) and is then raised; otherwise the call's result or error is the caller's.

    Example: ``written = finish_commit(spark, lambda: write_window(prepared, window, mode, output, metadata))``.
    """
    outcome: dict[str, object] = {}

    def call() -> None:
        try:
            outcome["result"] = commit()
        except BaseException as exc:  # handed to the waiting thread
            outcome["error"] = exc

    worker = threading.Thread(target=call, name="deltainc-commit", daemon=True)
    worker.start()
    try:
        worker.join()
    except (KeyboardInterrupt, Cancelled):
        log.warning("stopping: cancelling the Spark jobs and waiting for the commit under way to end")
        threading.Thread(target=_cancel_jobs, args=(spark,), daemon=True).start()
        while worker.is_alive():
            try:
                worker.join()
            except (KeyboardInterrupt, Cancelled):
                log.warning("still waiting for the commit under way to end")
        raise
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["result"]  # type: ignore[return-value]


def landed_commit(spark: SparkSession, ref: TableRef, run_id: str, window: str) -> CommitResult | None:
    """The target's latest commit if it is this run's for `window` (its userMetadata says so), else None: what a
    stopped window wrote. Read with delta-rs where the target is a path, so a JVM gone with the signal is not
    needed; None also when the history cannot be read."""
    try:
        latest = latest_commit(spark, ref)
        if latest is None or not latest.get("userMetadata"):
            return None
        stamp = json.loads(str(latest["userMetadata"]))
        if stamp.get("run_id") != run_id or stamp.get("window") != window:
            return None
        return last_commit(spark, ref)
    except Exception:
        log.warning("could not read whether the stopped window's commit landed in %s", ref.label, exc_info=True)
        return None
