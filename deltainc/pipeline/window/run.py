"""Processing one window: engine -> write -> one run-log row, the state commit that moves the watermark.

The watermark only moves forward and only after the target's commit, so a run killed at any point can simply
be run again. A window that fails still leaves its row (failed, or cancelled), which releases the lock.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame

from deltainc.join.join_types import counted_types
from deltainc.join.windows import Window
from deltainc.pipeline.delta.delta_log import LogUnreadable, asking_spark
from deltainc.pipeline.delta.delta_log_stats import (
    files_in_units,
    latest_unit_from_log,
    null_count_from_log,
    null_keys_in_units,
    source_location,
)
from deltainc.pipeline.delta.sources import ScanStats, count_null_inc, count_null_keys, scan_stats
from deltainc.pipeline.delta.sql import table_exists
from deltainc.pipeline.job.kinds import JobKind
from deltainc.pipeline.job.table_refs import SourceRef
from deltainc.pipeline.prepared_job import PreparedJob
from deltainc.pipeline.results import WindowReport
from deltainc.pipeline.state import Command, Lease, RunRecord, RunStatus, append_run, built_with, encode
from deltainc.pipeline.target.merge import count_and_check
from deltainc.pipeline.target.write_mode import WriteMode, Written
from deltainc.pipeline.window.commits_on_stop import finish_commit
from deltainc.pipeline.window.counted_write import Counting, written_counted
from deltainc.pipeline.window.failure_row import record_failure
from deltainc.pipeline.window.join import SourceScan, join_window
from deltainc.pipeline.window.target_writes import fitted, shaped, write_window
from deltainc.pipeline.window.too_late_writes import (
    LateRows,
    keep_too_late,
    search_too_late,
    searches_output,
    settled,
    too_late_found,
)
from deltainc.spark import take_startup_seconds
from deltainc.spark_compat import labelled_jobs, observes_writes
from deltainc.text_enum import TextEnum

__all__ = ["StepHook", "CommandRun", "begin", "process_window", "record_stop"]

log = logging.getLogger("deltainc")


class Step(TextEnum):
    """The steps of one window, told to `on_step` as they begin or end (a hook compares them as strings)."""

    START = "start"  # the window begins
    READ = "read"  # planned (joined, counted and checked, unless its write does that): nothing written yet
    WRITING = "writing"  # the target's commit begins
    WRITTEN = "written"  # the target's commit is done; the run-log row that moves the watermark is not
    WATERMARK = "watermark"  # the window's run-log row is committed


StepHook = Callable[[Step], None]


@dataclass
class _Clock:
    """Where a command's time went so far: Spark's start, not yet recorded by a window, and when the last window
    ended (or the command began). A window's duration runs from there, so nothing of the command is left out."""

    spark_start_s: float | None
    since: float = field(default_factory=time.monotonic)


@dataclass(frozen=True)
class CommandRun:
    """What the windows of one command share: the job, the command, its hold on the lock, and more."""

    prepared: PreparedJob
    command: Command
    lease: Lease
    null_counts: tuple[int, int]  # rows with a NULL inc_col in source_a, source_b: never joined
    on_step: StepHook | None = None  # told each Step of a window
    source_latest: str | None = None  # JSON: each source's latest RecDate when the command began (the lag)
    clock: _Clock = field(default_factory=lambda: _Clock(None))


def begin(prepared: PreparedJob, command: Command, lease: Lease, on_step: StepHook | None = None) -> CommandRun:
    """The run of `command` under `lease`; counts the sources' rows with a NULL inc_col (and warns of them)."""
    clock = _Clock(None)
    inc, job = prepared.job.join.inc_col, prepared.job
    frames = prepared.join.frames
    found = {role: _null_inc(ref, role, frames[role], inc) for role, ref in job.sources}
    if any(found.values()):
        counted = ", ".join(f"{n} in {role}" for role, n in found.items())
        log.warning("%s: rows with a NULL %s are never joined: %s", prepared.job.name, inc, counted)
    counts = (found["source_a"], sum(n for role, n in found.items() if role != "source_a"))
    clock.spark_start_s = take_startup_seconds(prepared.spark)
    return CommandRun(prepared, command, lease, counts, on_step, _latest_labels(prepared), clock)


def _latest_labels(prepared: PreparedJob) -> str | None:
    """Each source's latest RecDate from its Delta log, as JSON labels (`{"source_a": "2025-03-02", ...}`); None
    where a log cannot tell (a catalog table, deletion vectors): the report then shows no lag for the run."""
    inc, uom, latest = prepared.job.join.inc_col, prepared.uom, {}
    for role, ref in prepared.job.sources:
        try:
            latest[role] = prepared.label(latest_unit_from_log(source_location(ref, role), inc, uom.value))
        except (LogUnreadable, FileNotFoundError):
            return None
    return json.dumps(latest)


def _null_inc(ref: SourceRef, role: str, frame: DataFrame, inc: str) -> int:
    """A source's rows with a NULL inc_col: from its Delta log's statistics where they are exact, else counted."""
    if ref.where is not None:  # the log counts the whole table, the job joins only the rows `where` keeps
        return count_null_inc(frame, inc)
    try:
        return null_count_from_log(source_location(ref, role), inc)
    except (LogUnreadable, FileNotFoundError) as exc:
        asking_spark(f"{role}'s NULL {inc} count", exc)
        return count_null_inc(frame, inc)


def _key_sources(prepared: PreparedJob) -> list[tuple[str, SourceRef, DataFrame, tuple[str, ...]]]:
    """Each source with the join keys its rows need to match (role, table, rows, keys): A with every key a source
    joins it on, then B or each feature source joined on keys; empty when no source is joined on keys."""
    refs, frames = dict(prepared.job.sources), prepared.join.frames
    return [(role, refs[role], frames[role], keys) for role, keys in prepared.kind.key_columns()]


def _null_keys(prepared: PreparedJob, window: Window) -> tuple[int | None, int | None]:
    """The window's rows of A and of B (of the feature sources together) with a NULL join key, which never match
    (None when no source is joined on keys): from the Delta logs' statistics where they are exact (one key
    column, no `where`), the others in one Spark job."""
    inc, uom = prepared.job.join.inc_col, prepared.uom
    sources = _key_sources(prepared)
    if not sources:
        return None, None
    counts: dict[str, int] = {}
    for role, ref, _, keys in sources:
        if len(keys) == 1 and ref.where is None:
            try:
                location = source_location(ref, role)
                counts[role] = null_keys_in_units(location, keys[0], inc, uom, window.start, window.end)
            except (LogUnreadable, FileNotFoundError) as exc:
                asking_spark(f"{window}'s NULL {keys[0]} counts in {role}", exc)
    rest = [(role, df, keys) for role, _, df, keys in sources if role not in counts]
    counted = count_null_keys([(df, keys) for _, df, keys in rest], inc, uom, window.start, window.end)
    counts |= {role: n for (role, _, _), n in zip(rest, counted, strict=True)}
    return counts["source_a"], sum(n for role, n in counts.items() if role != "source_a")


def _scanned(prepared: PreparedJob, read: SourceScan) -> ScanStats:
    """The files and bytes a source's scan of units [first, last] reads: from its Delta log when the source is
    partitioned by its inc_col, else as Spark plans the scan."""
    ref = dict(prepared.job.sources)[read.role]
    try:
        location = source_location(ref, read.role)
        files, size = files_in_units(location, prepared.job.join.inc_col, prepared.uom, *read.units)
    except (LogUnreadable, FileNotFoundError) as exc:
        asking_spark(f"{read.role}'s files read", exc)
        return scan_stats(prepared.spark, read.scan)
    return ScanStats(files, size)


def process_window(run: CommandRun, window: Window, mode: WriteMode, *, last: bool) -> WindowReport:
    """Join one window, write it to the target, then one run-log row that moves the watermark (a forward
    window or a rebuild; a re-run not) and, on the run's `last` window, releases the lock. Its Spark jobs are
    labelled with the job, the command and the window (group `deltainc`) in Spark's UI."""
    label = f"{run.prepared.job.name} {run.command.value} {window}"
    with labelled_jobs(run.prepared.spark, "deltainc", label):
        return _process(run, window, mode, last=last)


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
        null_keys = _null_keys(prepared, window)
        record = replace(record, null_key_a=null_keys[0], null_key_b=null_keys[1])
        if any(null_keys):
            log.warning(
                "%s %s: rows with a NULL join key never match (SQL semantics): %s in source_a, %s in %s",
                job.name,
                window,
                *null_keys,
                prepared.kind.others,
            )
        joined = join_window(prepared, window.start, window.end)
        reads = {read.role: _scanned(prepared, read) for read in joined.scans}
        counting = _counting(prepared, window, mode)
        output = shaped(prepared, mode, joined.output, counting)
        if not mode.replaces_columns:  # a rebuild replaces the target's columns too
            scans = {read.role: read.scan for read in joined.scans}
            output = fitted(prepared, output, scans)  # checked against the target before the join runs
        if counting is None:  # two passes: the join runs once, counted and checked, and is read again to write
            output = output.persist(StorageLevel.MEMORY_AND_DISK)
            found = count_and_check(output, prepared.identity, prepared.sources)
        phases["join_s"] = time.monotonic() - clock
        # Beside the write: it reads the target's final rows before the window, which the write never changes.
        own = output if searches_output(prepared, window) else None
        search = search_too_late(pool, prepared, window, mode, own)
        step(Step.READ)

        lease.check(job.name)
        step(Step.WRITING)
        writing = time.monotonic()
        metadata = {"job": job.name, "run_id": lease.run_id, "command": run.command.value, "window": str(window)}
        ready, unchecked = output, joined.output  # a stop while the commit is under way waits for it
        written = finish_commit(
            prepared.spark,
            lambda: written_counted(counting, lambda: write_window(prepared, window, mode, ready, metadata), unchecked),
        )
        if counting is not None:
            found = counting.counts()
        phases["write_s"] = time.monotonic() - writing
        step(Step.WRITTEN)
        late = too_late_found(search)
        if late is not None:
            finish_commit(prepared.spark, lambda: keep_too_late(prepared, window, mode, late, metadata))
        moves = mode.moves_watermark
        done = replace(
            _with_writes(
                _with_reads(record, found, prepared.kind, reads), written, None if late is None else late.count
            ),
            status=RunStatus.SUCCEEDED.value,
            **_timed(run, phases),
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
        _record_failure(run, record, exc, phases)
        raise
    finally:
        _uncache(output)
        pool.shutdown(wait=True)  # a failed window still waits for its search, so no Spark job outlives it
        searched = settled(search)
        _uncache(None if searched is None else searched.rows)


def _counting(prepared: PreparedJob, window: Window, mode: WriteMode) -> Counting | None:
    """The counts and identity check the window's write makes itself (one pass), where it can: the target exists
    (a job's first write creates it, so a refused first window must fail before that), its write reads the
    output once, the too-late search does without the output, and the session reports observations. None: the
    window is counted and checked before its write (two passes)."""
    spark, job = prepared.spark, prepared.job
    single = mode.single_pass(job) and not searches_output(prepared, window) and observes_writes(spark)
    return Counting.of(prepared.identity, prepared.sources) if single and table_exists(spark, job.target) else None


def record_stop(run: CommandRun, upcoming: Window | None, exc: BaseException) -> None:
    """A command stopped outside a window (SIGTERM or Ctrl-C between two windows): the cancelled row of the window
    it would have processed next, which releases the lock. Nothing when a window's own row already released it."""
    if upcoming is not None and not run.lease.released:
        _record_failure(run, _started(run, upcoming), exc, {})


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
        run.command.value,
        prepared.label(window.start),
        prepared.label(window.end),
        RunStatus.FAILED.value,
        None,
        dt.datetime.now(dt.timezone.utc).replace(tzinfo=None),
        0.0,
        null_inc_a=run.null_counts[0],
        null_inc_b=run.null_counts[1],
        time_uom=prepared.uom.value,
        releases_lock=True,
        took_over=run.lease.took_over,
        job_settings=encode(built_with(prepared.job)),
        source_latest=run.source_latest,
    )


def _timed(run: CommandRun, phases: dict[str, float]) -> dict[str, Any]:
    """The window's duration and its phases, as run-log fields: the time since the command's previous window ended
    (or it began), plus Spark's start on the command's first window; bookkeeping is what the other phases leave."""
    clock, now = run.clock, time.monotonic()
    spark_start, clock.spark_start_s = clock.spark_start_s or 0.0, None
    duration = spark_start + now - clock.since
    clock.since = now
    join, write = phases.get("join_s"), phases.get("write_s")
    return {
        "duration_s": duration,
        "spark_start_s": spark_start,
        "join_s": join,
        "write_s": write,
        "bookkeeping_s": max(0.0, duration - spark_start - (join or 0.0) - (write or 0.0)),
    }


def _with_reads(record: RunRecord, found: dict[int, int], kind: JobKind, reads: dict[str, ScanStats]) -> RunRecord:
    """The run-log row with what the window read: its output rows by JoinType (of the types a job of its kind
    outputs), the files and bytes of A and of B (of the feature sources together), and each source's own where
    the kind keeps them (`source_reads`, JSON). Named arguments: mypy checks each against RunRecord's fields."""
    others = [read for role, read in reads.items() if role != "source_a"]
    counted: dict[str, Any] = {
        f"rows_{code.outcome}": found.get(int(code), 0) for code in counted_types(kind.outcome_kind)
    }
    return replace(
        record,
        files_read_a=reads["source_a"].files,
        bytes_read_a=reads["source_a"].bytes,
        files_read_b=sum(r.files for r in others),
        bytes_read_b=sum(r.bytes for r in others),
        source_reads=kind.source_reads({role: (r.files, r.bytes) for role, r in reads.items()}),
        **counted,  # one column per JoinType outcome (RunRecord.rows names them the same way)
    )


def _with_writes(record: RunRecord, written: Written, late: int | None) -> RunRecord:
    """The run-log row with what the window wrote: the target's commit, what of the target it read, and the
    too-late B rows (those a re-run kept out of the target, and those `write_too_late` found)."""
    commit = written.commit
    return replace(
        record,
        rows_inserted=commit.inserted,
        rows_updated=commit.updated,
        rows_deleted=commit.deleted,
        rows_too_late=None if late is None and not written.too_late else (late or 0) + written.too_late,
        files_read_target=written.read.files,
        bytes_read_target=written.read.bytes,
        target_write=written.how.value if commit.version is not None else None,
        target_version=commit.version,
        target_files_added=commit.files_added,
        target_files_removed=commit.files_removed,
        target_rows_copied=commit.rows_copied,
        target_deletion_vectors=commit.deletion_vectors,
    )


def _record_failure(run: CommandRun, record: RunRecord, exc: BaseException, phases: dict[str, float]) -> None:
    """The failed (or cancelled) window's run-log row, which ends the run and releases the lock (`failure_row`)."""
    record_failure(run.prepared, run.lease, record, exc, lambda: _timed(run, phases))
