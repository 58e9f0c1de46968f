"""A stop during a window's commit (SIGTERM, Ctrl-C; docs/design.md#state-tables-and-the-lock).

A stop interrupts the command's main thread, not the Spark call: the JVM goes on and may still commit. So each
commit runs in a thread of its own while the main thread waits (`finish_commit`); a stop meanwhile cancels the
session's Spark jobs and still waits for the call to return. Then the stop ends the command's own driver JVM
(`end_stopped`), and only then does the run record `cancelled` and free its lock; what did land is read back
from the target's history by the run id its userMetadata carries (`landed_commit`).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from pyspark.sql import SparkSession

from deltainc import spark_driver
from deltainc.errors import Cancelled
from deltainc.pipeline.delta.sources import latest_commit
from deltainc.pipeline.job.sections import TableRef
from deltainc.pipeline.target.write_mode import CommitResult, last_commit
from deltainc.spark_compat import cancel_all_jobs, job_thread

__all__ = ["finish_commit", "end_stopped", "StoppedWindow", "landed_commit"]


T = TypeVar("T")


log = logging.getLogger("deltainc")


_CANCEL_SECONDS = 5.0  # at most this long for Spark to take the cancellation of the session's jobs


def finish_commit(spark: SparkSession, commit: Callable[[], T]) -> T:
    """`commit()`, run so that a stop waits for it: in a thread of its own, the caller waiting. A stop (Cancelled,
    KeyboardInterrupt) that arrives meanwhile cancels the Spark jobs, waits until the call has returned (further
    signals do not cut the wait short) and is then raised; otherwise the call's result or error is the caller's.

    Example: ``written = finish_commit(spark, lambda: write_window(prepared, found, window, mode, output, meta))``.
    """
    outcome: dict[str, object] = {}

    def call() -> None:
        try:
            outcome["result"] = commit()
        except BaseException as exc:  # handed to the waiting thread
            outcome["error"] = exc

    # The commit's Spark jobs carry the caller's labels (the window's job group), as a plain thread's would not
    # (pinned threads start with no JVM local properties).
    worker = job_thread(spark, call, "deltainc-commit")
    worker.start()
    try:
        worker.join()
    except (KeyboardInterrupt, Cancelled):
        log.info("stopping: cancelling the Spark jobs and waiting for the commit under way to end")
        threading.Thread(target=cancel_all_jobs, args=(spark,), daemon=True).start()
        while worker.is_alive():
            try:
                worker.join()
            except (KeyboardInterrupt, Cancelled):
                log.info("still waiting for the commit under way to end")
        raise
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["result"]  # type: ignore[return-value]


def end_stopped(spark: SparkSession) -> bool:
    """After a stop, end what can still commit for the run: cancel the session's Spark jobs (waiting at most
    `_CANCEL_SECONDS` for the call), then end the command's own driver JVM, if it claimed one (`spark_driver.stop`),
    and wait until it has exited. Call it once no commit is under way (`finish_commit` waited for it). True when
    the JVM is gone, False when it was not the command's (a library caller's session stays up).

    Example: ``end_stopped(spark)`` before the cancelled row frees the lock.
    """
    canceller = threading.Thread(target=cancel_all_jobs, args=(spark,), name="deltainc-cancel", daemon=True)
    canceller.start()
    spark_driver.joined(canceller, _CANCEL_SECONDS)
    return spark_driver.stop()


@dataclass(frozen=True)
class StoppedWindow:
    """What a stopped window left in the target: the commit of this run and window that landed (None: none did),
    and the target's last commit (its version and the window its userMetadata names); `readable` False when the
    history could not be read."""

    landed: CommitResult | None
    last_version: int | None = None
    last_window: str | None = None
    readable: bool = True

    def summary(self, job: str, window: str) -> str:
        """The one line a stopped command ends with: what was stopped and what the last commit was."""
        if self.landed is not None:
            return (
                f"{job}: stopped in window {window} after its target commit landed (version {self.landed.version}); "
                "the watermark stays and the next run writes the window again"
            )
        if not self.readable:
            return (
                f"{job}: stopped in window {window}; whether it committed could not be read (see the target's history)"
            )
        if self.last_version is None:
            return f"{job}: stopped in window {window}, which committed nothing; the target has no commit yet"
        of = f" (window {self.last_window})" if self.last_window else ""
        last = f"the target's last commit is version {self.last_version}{of}"
        return f"{job}: stopped in window {window}, which committed nothing; {last}"


def landed_commit(spark: SparkSession, ref: TableRef, run_id: str, window: str) -> StoppedWindow:
    """What a stopped window left: the target's latest commit, and its metrics if it is this run's for `window`
    (its userMetadata says so). Read with delta-rs where the target is a path, so the JVM, gone with the stop, is
    not needed; `readable` False when the history cannot be read (the reason is logged at debug level)."""
    try:
        latest = latest_commit(spark, ref)
        if latest is None:
            return StoppedWindow(None)
        stamp = json.loads(str(latest.get("userMetadata") or "{}"))
        version, of = int(latest["version"]), stamp.get("window")
        if stamp.get("run_id") != run_id or of != window:
            return StoppedWindow(None, version, of)
        return StoppedWindow(last_commit(spark, ref), version, of)
    except Exception:
        log.debug("could not read whether the stopped window's commit landed in %s", ref.label, exc_info=True)
        return StoppedWindow(None, readable=False)
