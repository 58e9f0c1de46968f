"""The run-log row of a window that failed or was stopped: it ends the run and frees the lock.

A stopped window (SIGTERM, Ctrl-C) first ends everything that can still commit for the run (`end_stopped`), then
reads what landed in the target, and hands the command the one line it ends with (`Cancelled.summary`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from deltainc.errors import Cancelled
from deltainc.pipeline.controller.prepared_job import PreparedJob
from deltainc.pipeline.controller.stop import end_stopped, landed_commit
from deltainc.pipeline.state import Lease, RunRecord, RunStatus, append_run

__all__ = ["record_failure", "FailedWindow", "note_failed_window", "failed_window"]

log = logging.getLogger("deltainc")


def record_failure(
    prepared: PreparedJob, lease: Lease, record: RunRecord, exc: BaseException, timed: Callable[[], dict[str, Any]]
) -> None:
    """Append the failed (or cancelled) window's row, which ends the run and releases the lock; best effort.
    `timed()`: the row's duration fields, taken as it is written. A stopped window's row records the target
    commit it made, if one landed before the stop, and is written only once the command's JVM is gone.

    Example: ``record_failure(prepared, lease, started_row, exc, lambda: {"duration_s": 1.0})``.
    """
    try:
        stopped = isinstance(exc, (KeyboardInterrupt, Cancelled))
        if stopped:
            record = _stopped(prepared, lease, record, exc)
        failed = replace(
            record,
            status=(RunStatus.CANCELLED if stopped else RunStatus.FAILED).value,
            error=f"{type(exc).__name__}: {exc}"[:4000],
            **timed(),
        )
        append_run(prepared.paths, failed)
        lease.released = True
    except Exception:  # the run log is best effort when the run already failed
        log.exception("could not record the failed run of %s", prepared.job.name)


def _stopped(prepared: PreparedJob, lease: Lease, record: RunRecord, exc: BaseException) -> RunRecord:
    """A stopped window's row with the target commit of this run and window that landed, if one did (its rows and
    version): the watermark stays, and the next run's forward write replaces that commit's rows. Sets the stop's
    one-line summary on `exc`."""
    end_stopped(prepared.spark)
    start, end = record.window_start, record.window_end
    window = str(start) if start == end else f"{start}..{end}"  # as str(Window) wrote it in the userMetadata
    found = landed_commit(prepared.spark, prepared.job.target, lease.run_id, window)
    if getattr(exc, "summary", None) is None:
        exc.summary = found.summary(prepared.job.name, window)  # type: ignore[attr-defined]
    landed = found.landed
    if landed is None:
        return record
    log.info("%s: the stopped window %s had committed target version %s", prepared.job.name, window, landed.version)
    return replace(
        record,
        rows_inserted=landed.inserted,
        rows_updated=landed.updated,
        rows_deleted=landed.deleted,
        target_write=landed.operation,
        target_version=landed.version,
        target_files_added=landed.files_added,
        target_files_removed=landed.files_removed,
        target_rows_copied=landed.rows_copied,
        target_deletion_vectors=landed.deletion_vectors,
    )


@dataclass(frozen=True)
class FailedWindow:
    """Which window of a command failed, for the command's one error line: the window as its run-log row names it,
    its place in the plan (a backfill's chunk `number` of `total`, from 1), and the watermark the windows before
    it left (None: nothing committed yet), from which the same command resumes at this window."""

    window: str
    number: int
    total: int
    watermark: str | None


def note_failed_window(exc: BaseException, failed: FailedWindow) -> None:
    """Attach `failed` to the error that ended the window (the first window's note stays, should it travel further);
    the command line reads it back with `failed_window`."""
    if getattr(exc, "deltainc_failed_window", None) is None:
        exc.deltainc_failed_window = failed  # type: ignore[attr-defined]


def failed_window(exc: BaseException) -> FailedWindow | None:
    """The window `exc` ended, if a command's window raised it (`note_failed_window`)."""
    found = getattr(exc, "deltainc_failed_window", None)
    return found if isinstance(found, FailedWindow) else None
