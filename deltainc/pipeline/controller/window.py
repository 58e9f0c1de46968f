"""Processing one window: engine -> write -> one run-log row, the state commit that moves the watermark.

The watermark only moves forward and only after the target's commit, so a run killed at any point can simply
be run again. A window that fails still leaves its row (failed, or cancelled), which releases the lock.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from pyspark import StorageLevel
from pyspark.sql import DataFrame

from deltainc.join.windows import Window
from deltainc.pipeline.controller.commit import Counting, fitted, shaped, write_window, written_counted
from deltainc.pipeline.controller.failure_row import FailedWindow, note_failed_window, record_failure
from deltainc.pipeline.controller.plan import Planned, WindowReport
from deltainc.pipeline.controller.prepared_job import PreparedJob, latest_labels, null_inc, null_keys, scanned
from deltainc.pipeline.controller.stop import finish_commit
from deltainc.pipeline.controller.too_late_search import (
    LateRows,
    keep_too_late,
    search_too_late,
    search_written_too_late,
    searches_output,
    settled,
    too_late_found,
)
from deltainc.pipeline.state import Command, Lease, RunRecord, RunStatus, append_run
from deltainc.pipeline.state.window_row import Clock, started, timed, with_reads, with_writes
from deltainc.pipeline.target.found import TargetFound, find_target
from deltainc.pipeline.target.merge import count_and_check
from deltainc.pipeline.target.modes import write_mode
from deltainc.pipeline.target.write_mode import WriteMode
from deltainc.spark_compat import labelled_jobs, observes_writes, take_startup_seconds
from deltainc.stop_notice import in_window
from deltainc.text_enum import TextEnum

__all__ = ["StepHook", "CommandRun", "begin", "process_window", "process_planned", "record_stop"]

log = logging.getLogger("deltainc")


class Step(TextEnum):
    """The steps of one window, told to `on_step` as they begin or end (a hook compares them as strings)."""

    START = "start"  # the window begins
    READ = "read"  # planned (joined, counted and checked, unless its write does that): nothing written yet
    WRITING = "writing"  # the target's commit begins
    WRITTEN = "written"  # the target's commit is done; the run-log row that moves the watermark is not
    WATERMARK = "watermark"  # the window's run-log row is committed


StepHook = Callable[[Step], None]


@dataclass(frozen=True)
class CommandRun:
    """What the windows of one command share: the job, the command, its hold on the lock, and more."""

    prepared: PreparedJob
    command: Command
    lease: Lease
    null_counts: tuple[int, int]  # rows with a NULL inc_col in source_a, source_b: never joined
    on_step: StepHook | None = None  # told each Step of a window
    source_latest: str | None = None  # JSON: each source's latest RecDate when the command began (the lag)
    downstream: str | None = None  # JSON, a rerun: the jobs below it and what each must re-run
    clock: Clock = field(default_factory=lambda: Clock(None))


def begin(
    prepared: PreparedJob,
    command: Command,
    lease: Lease,
    on_step: StepHook | None = None,
    downstream: str | None = None,
) -> CommandRun:
    """The run of `command` under `lease`; counts the sources' rows with a NULL inc_col (and warns of them)."""
    clock = Clock(None)
    job = prepared.job
    frames = prepared.join.frames
    found = {role: null_inc(table, frames, job.inc_col_of(role)) for role, table in prepared.tables.items()}
    if any(found.values()):
        counted = ", ".join(f"{n} in {role} ({job.inc_col_of(role)})" for role, n in found.items() if n)
        log.warning("%s: rows with a NULL inc_col are never joined: %s", prepared.job.name, counted)
    counts = (found["source_a"], sum(n for role, n in found.items() if role != "source_a"))
    clock.spark_start_s = take_startup_seconds(prepared.spark)
    return CommandRun(prepared, command, lease, counts, on_step, latest_labels(prepared), downstream, clock)


def process_window(run: CommandRun, window: Window, mode: WriteMode, *, last: bool) -> WindowReport:
    """Join one window, write it to the target, then one run-log row that moves the watermark (a forward
    window or a rebuild; a re-run not) and, on the run's `last` window, releases the lock. Its Spark jobs are
    labelled with the job, the command and the window (group `deltainc`) in Spark's UI."""
    label = f"{run.prepared.job.name} {run.command.value} {window}"
    with labelled_jobs(run.prepared.spark, "deltainc", label), in_window(str(window)):
        return _process(run, window, mode, last=last)


def process_planned(run: CommandRun, item: Planned, total: int, watermark: str | None, *, last: bool) -> WindowReport:
    """`process_window` of a plan's `item`; an error it ends with names the window, its place among the plan's
    `total` windows and the `watermark` the windows before it left (`FailedWindow`), for the command's error line.
    E.g. `process_planned(run, plan[7], len(plan), "2024-07-31", last=False)`."""
    try:
        return process_window(run, item.window, write_mode(item.mode), last=last)
    except Exception as exc:
        note_failed_window(exc, FailedWindow(str(item.window), item.number, total, watermark))
        raise


def _process(run: CommandRun, window: Window, mode: WriteMode, *, last: bool) -> WindowReport:
    """`process_window` inside its jobs' label."""
    prepared, lease, job = run.prepared, run.lease, run.prepared.job
    clock = time.monotonic()
    phases: dict[str, float] = {}
    record = _started(run, window)
    step = run.on_step or (lambda _name: None)
    step(Step.START)
    output: DataFrame | None = None
    search: Future[LateRows | None] | None = None
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="deltainc-too-late")
    try:
        nulls = null_keys(prepared, window)
        record = replace(record, null_key_a=nulls[0], null_key_b=nulls[1])
        if any(nulls):
            log.warning(
                "%s %s: rows with a NULL join key never match (SQL semantics): %s in source_a, %s in %s",
                job.name,
                window,
                *nulls,
                prepared.kind.others,
            )
        joined = prepared.join.join(window.start, window.end)
        reads = {read.role: scanned(prepared, read) for read in joined.scans}
        # The target as this window finds it, once: found again only by the next window, after this one's commit.
        target = find_target(prepared.spark, job.target, prepared.partition_by)
        counting = _counting(prepared, target, mode)
        output = shaped(prepared, mode, target, joined.output, counting)
        if not mode.replaces_columns:  # a rebuild replaces the target's columns too
            scans = {read.role: read.scan for read in joined.scans}
            output = fitted(prepared, target, output, scans)  # checked against the target before the join runs
        if counting is None:  # two passes: the join runs once, counted and checked, and is read again to write
            output = output.persist(StorageLevel.MEMORY_AND_DISK)
            found = count_and_check(output, prepared.identity, prepared.sources)
        phases["join_s"] = time.monotonic() - clock
        # A window whose search needs its own output and whose write reads that output once searches the target
        # as written; any other searches beside the write the target's final rows before the window (which the
        # write never changes) and, if it needs them, the persisted output's.
        after = counting is not None and searches_output(prepared, window)
        if not after:
            own = output if searches_output(prepared, window) else None
            search = search_too_late(pool, prepared, target, window, mode, own)
        step(Step.READ)

        lease.check(job.name)
        step(Step.WRITING)
        writing = time.monotonic()
        metadata = {"job": job.name, "run_id": lease.run_id, "command": run.command.value, "window": str(window)}
        ready, unchecked = output, joined.output  # a stop while the commit is under way waits for it
        written = finish_commit(
            prepared.spark,
            lambda: written_counted(
                counting, lambda: write_window(prepared, target, window, mode, ready, metadata), unchecked
            ),
        )
        if counting is not None:
            found = counting.counts()
        phases["write_s"] = time.monotonic() - writing
        step(Step.WRITTEN)
        if after:
            search = search_written_too_late(pool, prepared, window)
        late = None if search is None else too_late_found(search)
        if late is not None:
            finish_commit(prepared.spark, lambda: keep_too_late(prepared, window, mode, late, metadata))
        moves = mode.moves_watermark
        done = replace(
            with_writes(with_reads(record, found, prepared.kind, reads), written, None if late is None else late.count),
            status=RunStatus.SUCCEEDED.value,
            **timed(run.clock, phases),
            watermark=prepared.label(window.end) if moves else None,
            watermark_unit=window.end if moves else None,
            releases_lock=last,
        )
        append_run(prepared.paths, done)  # the one state commit: watermark, run log, lock release
        lease.released, lease.took_over = last, None
        step(Step.WATERMARK)
        report = WindowReport(window, done, prepared.kind.outcome_kind)
        changed = done.rows_inserted, done.rows_updated, done.rows_deleted
        log.info("%s %s %s: %s, +%d ~%d -%d rows", job.name, run.command.value, window, report.counts, *changed)
        return report
    except BaseException as exc:
        record_failure(prepared, lease, record, exc, lambda: timed(run.clock, phases))  # it ends the run
        raise
    finally:
        _uncache(output)
        pool.shutdown(wait=True)  # a failed window still waits for its search, so no Spark job outlives it
        searched = settled(search)
        _uncache(None if searched is None else searched.rows)


def _counting(prepared: PreparedJob, target: TargetFound, mode: WriteMode) -> Counting | None:
    """The counts and identity check the window's write makes itself (one pass), where it can: its write reads the
    output once (the mode's `single_pass`, or a job's first write, which creates a `target` at a path) and the
    session reports observations. A refused window fails inside its write's query, before Delta commits anything
    (a first window's leaves no table: `create_table` removes the empty folders Delta made). A catalog table is
    created in two passes: `saveAsTable` reports no observations of its query (Spark 4.2 fails reading them).
    None: the window is counted and checked before its write (two passes)."""
    spark, job = prepared.spark, prepared.job
    writes_once = mode.single_pass(job) if target.exists else job.target.path is not None
    return Counting.of(prepared.identity, prepared.sources) if writes_once and observes_writes(spark) else None


def record_stop(run: CommandRun, upcoming: Window | None, exc: BaseException) -> None:
    """A command stopped outside a window (SIGTERM or Ctrl-C between two windows): the cancelled row of the window
    it would have processed next, which releases the lock. Nothing when a window's own row already released it."""
    if upcoming is not None and not run.lease.released:
        record_failure(run.prepared, run.lease, _started(run, upcoming), exc, lambda: timed(run.clock, {}))


def _uncache(frame: DataFrame | None) -> None:
    """Drop a window's cached rows. Best effort: a SIGTERM that arrived inside a Spark call can leave that
    call's connection unusable, and cleaning up must not hide the error that ended the window."""
    if frame is None:
        return
    try:
        frame.unpersist(blocking=True)  # released before the next window: its memory is the next one's
    except Exception:
        log.debug("could not drop the window's cached rows", exc_info=True)


def _started(run: CommandRun, window: Window) -> RunRecord:
    """The window's run-log row as it starts (`window_row.started`)."""
    return started(run.prepared.job, run.lease, run.command, window, run.null_counts, run.source_latest, run.downstream)
