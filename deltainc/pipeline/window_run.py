"""Processing one window: engine -> write -> one run-log row, the state commit that moves the watermark.

The watermark only moves forward and only after the target's commit, so a run killed at any point can simply
be run again. A window that fails still leaves its row (failed, or cancelled), which releases the lock.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame

from deltainc.errors import Cancelled
from deltainc.join.engine import join_prepared, read_sources
from deltainc.join.join_types import counted_types
from deltainc.join.windows import Window, open_read_bounds
from deltainc.pipeline.config import SourceRef
from deltainc.pipeline.lease import Lease
from deltainc.pipeline.log_reader import LogUnreadable, files_in_units, null_count_from_log, null_keys_in_units
from deltainc.pipeline.log_status import source_location
from deltainc.pipeline.merge import count_and_check
from deltainc.pipeline.prepared_job import PreparedJob
from deltainc.pipeline.remembered_settings import built_with, encode
from deltainc.pipeline.results import WindowReport
from deltainc.pipeline.run_record import RunRecord
from deltainc.pipeline.sources import ScanStats, count_null_inc, count_null_keys, scan_stats
from deltainc.pipeline.state import append_run
from deltainc.pipeline.target_writes import WriteMode, Written, fitted, shaped, write_window
from deltainc.pipeline.too_late_writes import (
    LateRows,
    keep_too_late,
    search_too_late,
    settled,
    too_late_found,
)

__all__ = ["StepHook", "CommandRun", "begin", "process_window", "record_stop"]

log = logging.getLogger("deltainc")
StepHook = Callable[[str], None]
_MOVES_WATERMARK: tuple[WriteMode, ...] = ("forward", "rebuild")  # a re-run or recompute leaves it where it is


@dataclass(frozen=True)
class CommandRun:
    """What the windows of one command share: the job, the command, its hold on the lock, and more."""

    prepared: PreparedJob
    command: str
    lease: Lease
    null_counts: tuple[int, int]  # rows with a NULL inc_col in source_a, source_b: never joined
    on_step: StepHook | None = None  # told each step of a window ("start", "read", "writing", ...)


def begin(prepared: PreparedJob, command: str, lease: Lease, on_step: StepHook | None = None) -> CommandRun:
    """The run of `command` under `lease`; counts the sources' rows with a NULL inc_col (and warns of them)."""
    inc, job = prepared.job.join.inc_col, prepared.job
    counts = (
        _null_inc(job.source_a, "source_a", prepared.df_a, inc),
        _null_inc(job.source_b, "source_b", prepared.df_b, inc),
    )
    if any(counts):
        log.warning(
            "%s: rows with a NULL %s are never joined: %d in source_a, %d in source_b", prepared.job.name, inc, *counts
        )
    return CommandRun(prepared, command, lease, counts, on_step)


def _null_inc(ref: SourceRef, role: str, frame: DataFrame, inc: str) -> int:
    """A source's rows with a NULL inc_col: from its Delta log's statistics where they are exact, else counted."""
    if ref.where is not None:  # the log counts the whole table, the job joins only the rows `where` keeps
        return count_null_inc(frame, inc)
    try:
        return null_count_from_log(source_location(ref, role), inc)
    except (LogUnreadable, FileNotFoundError):
        return count_null_inc(frame, inc)


def _null_keys(prepared: PreparedJob, window: Window) -> tuple[int | None, int | None]:
    """The window's rows of A and of B with a NULL join key, which never match (None for a join_cond job): from
    the Delta logs' statistics where they are exact (one key column, no `where`), else in one Spark job."""
    job = prepared.job
    keys, inc = job.join.join_cols, job.join.inc_col
    if not keys:
        return None, None
    sources = ((job.source_a, "source_a"), (job.source_b, "source_b"))
    if len(keys) == 1 and all(ref.where is None for ref, _ in sources):
        try:
            a, b = (
                null_keys_in_units(source_location(ref, role), keys[0], inc, prepared.uom, window.start, window.end)
                for ref, role in sources
            )
            return a, b
        except (LogUnreadable, FileNotFoundError):
            pass
    return count_null_keys(prepared.df_a, prepared.df_b, keys, inc, prepared.uom, window.start, window.end)


def _scanned(prepared: PreparedJob, ref: SourceRef, role: str, scan: DataFrame, first: int, last: int) -> ScanStats:
    """The files and bytes a source's scan of units [first, last] reads: from its Delta log when the source is
    partitioned by its inc_col, else as Spark plans the scan."""
    try:
        location = source_location(ref, role)
        files, size = files_in_units(location, prepared.job.join.inc_col, prepared.uom, first, last)
    except (LogUnreadable, FileNotFoundError):
        return scan_stats(prepared.spark, scan)
    return ScanStats(files, size)


def process_window(run: CommandRun, window: Window, mode: WriteMode, *, last: bool) -> WindowReport:
    """Join one window, write it to the target, then one run-log row that moves the watermark (a forward
    window or a rebuild; a re-run not) and, on the run's `last` window, releases the lock."""
    prepared, lease, job = run.prepared, run.lease, run.prepared.job
    clock = time.monotonic()
    record = _started(run, window)
    step = run.on_step or (lambda _name: None)
    step("start")
    output: DataFrame | None = None
    search: Future[LateRows | None] | None = None
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="deltainc-too-late")
    try:
        search = search_too_late(pool, prepared, window)  # beside the join and the write: it reads only the sources
        null_keys = _null_keys(prepared, window)
        record = replace(record, null_key_a=null_keys[0], null_key_b=null_keys[1])
        if any(null_keys):
            log.warning(
                "%s %s: rows with a NULL join key never match (SQL semantics): %s in source_a, %s in source_b",
                job.name,
                window,
                *null_keys,
            )
        spec = replace(prepared.spec, start=window.start, end=window.end)
        scan_a, scan_b = read_sources(prepared.df_a, prepared.df_b, spec)
        bounds = open_read_bounds(window.start, window.end, spec.look_back_time, spec.max_waiting_time, spec.b_waits)
        reads = (
            _scanned(prepared, job.source_a, "source_a", scan_a, bounds.a_start, bounds.a_end),
            _scanned(prepared, job.source_b, "source_b", scan_b, bounds.b_start, bounds.b_end),
        )
        output = shaped(prepared, mode, join_prepared(prepared.df_a, prepared.df_b, spec))
        if mode != "rebuild":  # a rebuild replaces the target's columns too
            output = fitted(prepared, output, (scan_a, scan_b))  # checked against the target before the join runs
        output = output.persist(StorageLevel.MEMORY_AND_DISK)
        found = count_and_check(output, prepared.identity)
        step("read")

        lease.check(job.name)
        step("writing")
        metadata = {"job": job.name, "run_id": lease.run_id, "command": run.command, "window": str(window)}
        written = write_window(prepared, window, mode, output, metadata)
        step("merged")
        late = too_late_found(search)
        if late is not None:
            keep_too_late(prepared, window, mode, late, metadata)
        moves = mode in _MOVES_WATERMARK
        done = replace(
            record,
            status="succeeded",
            duration_s=time.monotonic() - clock,
            **_read_fields(found, job.join.how, *reads),
            **_written_fields(written, None if late is None else late.count),
            watermark=prepared.label(window.end) if moves else None,
            watermark_unit=window.end if moves else None,
            releases_lock=last,
        )
        append_run(prepared.paths, done)  # the one state commit: watermark, run log, lock release
        lease.released, lease.took_over = last, None
        step("watermark")
        report = WindowReport(window, done, job.join.how)
        changed = done.rows_inserted, done.rows_updated, done.rows_deleted
        log.info("%s %s %s: %s, +%d ~%d -%d rows", job.name, run.command, window, report.counts, *changed)
        return report
    except BaseException as exc:
        _record_failure(run, record, exc, clock)
        raise
    finally:
        _uncache(output)
        pool.shutdown(wait=True)  # a failed window still waits for its search, so no Spark job outlives it
        searched = settled(search)
        _uncache(None if searched is None else searched.rows)


def record_stop(run: CommandRun, upcoming: Window | None, exc: BaseException) -> None:
    """A command stopped outside a window (SIGTERM or Ctrl-C between two windows): the cancelled row of the window
    it would have processed next, which releases the lock. Nothing when a window's own row already released it."""
    if upcoming is not None and not run.lease.released:
        _record_failure(run, _started(run, upcoming), exc, time.monotonic())


def _uncache(frame: DataFrame | None) -> None:
    """Drop a window's cached rows. Best effort: a SIGTERM that arrived inside a Spark call can leave that
    call's connection unusable, and cleaning up must not hide the error that ended the window."""
    if frame is None:
        return
    try:
        frame.unpersist()
    except Exception:
        log.debug("could not drop the window's cached rows", exc_info=True)


def _started(run: CommandRun, window: Window) -> RunRecord:
    """The window's run-log row as it stands when it starts: failed, releasing the lock (a failure ends the run)."""
    prepared = run.prepared
    return RunRecord(
        prepared.job.name,
        run.lease.run_id,
        run.command,
        prepared.label(window.start),
        prepared.label(window.end),
        "failed",
        None,
        dt.datetime.now(dt.timezone.utc).replace(tzinfo=None),
        0.0,
        null_inc_a=run.null_counts[0],
        null_inc_b=run.null_counts[1],
        time_uom=prepared.uom.value,
        releases_lock=True,
        took_over=run.lease.took_over,
        job_settings=encode(built_with(prepared.job)),
    )


def _read_fields(found: dict[int, int], how: str, scan_a: ScanStats, scan_b: ScanStats) -> dict[str, Any]:
    """The run-log fields of what the window read: its output rows by JoinType (of the types a job of this kind
    outputs), and the files and bytes of A and B."""
    return {
        **{f"rows_{code.outcome}": found.get(int(code), 0) for code in counted_types(how)},
        "files_read_a": scan_a.files,
        "bytes_read_a": scan_a.bytes,
        "files_read_b": scan_b.files,
        "bytes_read_b": scan_b.bytes,
    }


def _written_fields(written: Written, late: int | None) -> dict[str, Any]:
    """The run-log fields of what the window wrote: the target's commit, what of the target it read, and the
    too-late B rows (those a re-run kept out of the target, and those `write_too_late` found)."""
    commit = written.commit
    return {
        "rows_inserted": commit.inserted,
        "rows_updated": commit.updated,
        "rows_deleted": commit.deleted,
        "rows_too_late": None if late is None and not written.too_late else (late or 0) + written.too_late,
        "files_read_target": written.read.files,
        "bytes_read_target": written.read.bytes,
        "target_write": written.how if commit.version is not None else None,
        "target_version": commit.version,
        "target_files_added": commit.files_added,
        "target_files_removed": commit.files_removed,
        "target_rows_copied": commit.rows_copied,
        "target_deletion_vectors": commit.deletion_vectors,
    }


def _record_failure(run: CommandRun, record: RunRecord, exc: BaseException, clock: float) -> None:
    """The failed (or cancelled) window's run-log row, which ends the run and releases the lock; best effort."""
    try:
        cancelled = isinstance(exc, (KeyboardInterrupt, Cancelled))
        failed = replace(
            record,
            status="cancelled" if cancelled else "failed",
            error=f"{type(exc).__name__}: {exc}"[:4000],
            duration_s=time.monotonic() - clock,
        )
        append_run(run.prepared.paths, failed)
        run.lease.released = True
    except Exception:  # the run log is best effort when the run already failed
        log.exception("could not record the failed run of %s", run.prepared.job.name)
