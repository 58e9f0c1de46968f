"""The controller: which window to process next, and processing it (engine -> MERGE -> watermark -> run log).

Data flows one way: job config -> controller -> engine -> MERGE writer. The watermark only moves
forward and only after the MERGE committed, so a run killed at any point can simply be run again.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deltainc.errors import Cancelled, ConfigError, JobLockedError, SchemaError
from deltainc.join.engine import JoinSpec, join_prepared, prepare_join, read_sources
from deltainc.join.join_types import JOIN_TYPE_NAMES, counted_types
from deltainc.join.output_layout import JOIN_TYPE, RESERVED_PREFIX, WAITING_TIME, plan_layout
from deltainc.join.settings import DEFAULT_OUTPUT_SELECT, IncJoinSettings
from deltainc.join.windows import Window, chunk_windows, from_index, next_window, parse_point, read_bounds, to_index
from deltainc.pipeline.commit_metrics import NO_COMMIT, CommitResult
from deltainc.pipeline.config import JobConfig, load_job, resolve_job
from deltainc.pipeline.job_status import JobStatus, describe
from deltainc.pipeline.lock import Heartbeat, release_lock, start_heartbeat
from deltainc.pipeline.merge import ACTION, Identity, count_and_check, merge_window, plan_actions
from deltainc.pipeline.remembered_settings import built_with, check_unchanged, encode
from deltainc.pipeline.slice_writer import (
    forward_slices,
    merge_slices,
    overwrite_target,
    replace_slices,
    replace_where,
    sql_literal,
)
from deltainc.pipeline.sources import ScanStats, count_null_inc, latest_unit, read_table, scan_stats
from deltainc.pipeline.state import (
    JobState,
    RunRecord,
    StatePaths,
    acquire,
    append_run,
    ensure_state_tables,
    read_runs,
    read_state,
    state_paths,
)
from deltainc.pipeline.target_layout import default_partitioning, ensure_target, lay_out
from deltainc.pipeline.target_schema import new_columns
from deltainc.pipeline.too_late import too_late_rows
from deltainc.settings import Settings, load_settings
from deltainc.spark import get_spark

__all__ = ["WindowReport", "PipelineResult", "JobStatus", "run", "rerun", "backfill", "status", "prepare_job"]

log = logging.getLogger("deltainc")
StepHook = Callable[[str], None]
WindowHook = Callable[["WindowReport"], None]
WriteMode = Literal["forward", "rerun", "recompute", "rebuild"]
ProgressHook = Callable[[int, int, "WindowReport | None", Window], None]


@dataclass(frozen=True)
class WindowReport:
    """What processing one window did."""

    window: str
    counts: dict[str, int]
    inserted: int
    updated: int
    deleted: int
    files_read_a: int
    bytes_read_a: int
    files_read_b: int
    bytes_read_b: int
    files_read_target: int
    bytes_read_target: int
    duration_s: float
    target_write: str | None = None
    target_files_added: int = 0
    target_files_removed: int = 0
    target_rows_copied: int = 0
    target_deletion_vectors: int = 0
    too_late: int | None = None  # B rows that came after the A row they match timed out; None: not looked for


@dataclass(frozen=True)
class PipelineResult:
    """The outcome of one command: the windows processed and where the watermark stands."""

    job: str
    command: str
    run_id: str | None
    windows: tuple[WindowReport, ...]
    watermark: str | None
    message: str

    @property
    def nothing_pending(self) -> bool:
        return not self.windows


@dataclass(frozen=True)
class PreparedJob:
    """A job validated against its sources: everything needed to process windows."""

    spark: SparkSession
    job: JobConfig
    paths: StatePaths
    df_a: DataFrame
    df_b: DataFrame
    spec: JoinSpec
    identity: Identity
    settings: Settings
    partition_by: tuple[str, ...]  # of a target this job creates

    @property
    def uom(self) -> str:
        return self.job.join.time_uom

    def label(self, unit: int | None) -> str | None:
        return None if unit is None else from_index(unit, self.uom).isoformat()


def _output_select(job: JobConfig, a_cols: list[str], b_cols: list[str], base: IncJoinSettings) -> tuple[str, Identity]:
    """The engine's output_select for the target: the job's choice plus every column the MERGE needs."""
    join = job.join
    layout = plan_layout(a_cols, b_cols, join.join_cols, join.how, base)
    for field_name, columns, source, side in (
        ("target.keys", job.target.keys, a_cols, "source_a"),
        ("target.b_keys", job.target.b_keys, b_cols, "source_b"),
    ):
        for column in columns:
            if column not in source:
                raise SchemaError(f"{field_name}: column {column!r} missing from {side} (columns: {', '.join(source)})")
    if join.how == "left_anti" and job.target.b_keys:
        raise ConfigError("target.b_keys: a left_anti job outputs no B columns; remove target.b_keys")
    identity = Identity(
        a_keys=tuple(layout.a_name(k) for k in job.target.keys),
        a_rec=layout.a_name(join.inc_col),
        b_keys=tuple(layout.b_name(k) for k in job.target.b_keys),
        b_rec=None if join.how == "left_anti" else layout.b_name(join.inc_col),
    )
    # The output RecDate places every row in time: the forward write replaces slices of it.
    required = [*identity.columns, layout.inc_col, *([WAITING_TIME] if join.include_waiting else []), JOIN_TYPE]
    chosen = join.output_select or DEFAULT_OUTPUT_SELECT
    select = ", ".join([chosen, *required])
    selected = plan_layout(a_cols, b_cols, join.join_cols, join.how, base.model_copy(update={"output_select": select}))
    for column in job.target.partition_by or ():
        if column not in selected.selected:
            raise ConfigError(
                f"target.partition_by: {column!r} is not an output column (output: {', '.join(selected.selected)})"
            )
    return select, identity


def prepare_job(
    job: JobConfig | str | Path, spark: SparkSession | None = None, settings: Settings | None = None
) -> PreparedJob:
    """Load and validate a job against its sources; raises before anything is written."""
    settings = settings or load_settings()
    if not isinstance(job, JobConfig):
        job = load_job(resolve_job(str(job), settings.job_dir))
    spark = spark or get_spark(settings)
    df_a = read_table(spark, job.source_a, "source_a")
    df_b = read_table(spark, job.source_b, "source_b")
    join = job.join
    base = join.engine_settings(job.target.b_keys).model_copy(update={"output_select": DEFAULT_OUTPUT_SELECT})

    def validated(options: IncJoinSettings) -> JoinSpec:
        return prepare_join(df_a, df_b, join.how, join.join_cols, join.join_cond, join.look_back_time,
                            join.max_waiting_time, None, None, options)  # fmt: skip

    validated(base)  # the sources and the join first, so that their errors come before the target's
    select, identity = _output_select(job, df_a.columns, df_b.columns, base)
    spec = validated(base.model_copy(update={"output_select": select}))
    paths = state_paths(job.state_path(settings.state_dir))
    partition_by = default_partitioning(job.target.partition_by, spec.layout.inc_col, join.time_uom)
    return PreparedJob(spark, job, paths, df_a, df_b, spec, identity, settings, tuple(partition_by))


def _latest_available(prepared: PreparedJob) -> int | None:
    """The latest unit present in both sources."""
    inc, uom = prepared.job.join.inc_col, prepared.uom
    latest_a = latest_unit(prepared.df_a, inc, uom)
    latest_b = latest_unit(prepared.df_b, inc, uom)
    return None if latest_a is None or latest_b is None else min(latest_a, latest_b)


def _pending(prepared: PreparedJob, watermark: int | None, latest: int | None, until: int | None) -> Window | None:
    """The next window after `watermark`, up to the latest unit in both sources (and `until`)."""
    start = to_index(prepared.job.start_date, prepared.uom)
    return next_window(watermark, start, latest, until, prepared.job.max_window, prepared.uom)


@dataclass
class _Lease:
    """This run's hold on the job's lock; `released` once a committed run-log row has released it."""

    run_id: str
    state: JobState  # as of taking the lock
    took_over: str | None
    heartbeat: Heartbeat
    released: bool = False

    def check(self, job: str) -> None:
        """Raise before a commit if another run took the lock (this run's heartbeats stopped reaching it)."""
        if self.heartbeat.lost.is_set():
            raise JobLockedError(
                f"job {job!r}: run {self.run_id} lost its lock to another run (its heartbeat could not be renewed "
                "in time); it stops before writing more"
            )


@contextmanager
def _locked(prepared: PreparedJob, state: JobState | None = None) -> Iterator[_Lease]:
    """Hold the job's lock for the block, renewing it; released by the run's last run-log row, or here."""
    spark, paths, name = prepared.spark, prepared.paths, prepared.job.name
    run_id = uuid.uuid4().hex[:12]
    ensure_state_tables(spark, paths)
    expiry = prepared.settings.lock_expiry_seconds
    acquired = acquire(spark, paths, name, run_id, expiry, state)
    if acquired.took_over:
        log.warning("%s: took over the lock of run %s", name, acquired.took_over)
    heartbeat = start_heartbeat(
        spark, paths.locks, name, run_id, expiry / 4, lambda exc: log.warning("%s: heartbeat failed: %s", name, exc)
    )
    lease = _Lease(run_id, acquired.state, acquired.took_over, heartbeat)
    try:
        yield lease
    finally:
        heartbeat.end()
        if not lease.released:
            release_lock(spark, paths.locks, name, run_id)


def _counts(found: dict[int, int], how: str) -> dict[str, int]:
    """Output rows by JoinType name, of the types a job of this kind outputs."""
    return {JOIN_TYPE_NAMES[code]: found.get(int(code), 0) for code in counted_types(how)}


@dataclass(frozen=True)
class _Written:
    """What writing one window did to the target, and what of the target it read."""

    how: str
    commit: CommitResult
    read: ScanStats
    too_late: int = 0  # matches of timed-out A rows a re-run kept out (corrections = "keep")


def _fit_target(prepared: PreparedJob, target: DataFrame, output: DataFrame) -> bool:
    """Check the output against the target's columns (target_schema); True when the write adds new columns."""
    job, layout = prepared.job, prepared.spec.layout
    added = new_columns(target.schema, output.schema, layout, job.target.label, job.target.schema_evolution)
    if added:
        log.warning("%s: adding the sources' new column(s) %s to the target %s", job.name, added, job.target.label)
    return bool(added)


def _write_forward(prepared: PreparedJob, window: Window, output: DataFrame, metadata: dict[str, str]) -> _Written:
    """A window right after the watermark: replace the target's two slices by the window's output."""
    spark, job = prepared.spark, prepared.job
    target = read_table(spark, job.target, "target")
    add = _fit_target(prepared, target, output)
    rec = prepared.spec.layout.inc_col
    slices = forward_slices(rec, from_index(window.start - 1, prepared.uom), target.schema[rec].dataType)
    read = scan_stats(spark, target.where(slices.condition()))
    if job.target.forward_write == "merge":
        commit = merge_slices(spark, job.target, output, prepared.identity.columns, slices, metadata, add)
    else:
        commit = replace_slices(spark, job.target, output, slices, metadata, add)
    return _Written(job.target.forward_write, commit, read)


def _write_forward_only(prepared: PreparedJob, window: Window, output: DataFrame, metadata: dict[str, str]) -> _Written:
    """A re-run (or a job without the sliding join window): MERGE only what moves a target row forward."""
    spark, job, identity = prepared.spark, prepared.job, prepared.identity
    target = read_table(spark, job.target, "target")
    add = _fit_target(prepared, target, output)
    bounds = read_bounds(window, job.join.look_back_time, job.join.max_waiting_time)
    a_first, a_after = from_index(bounds.a_start, prepared.uom), from_index(bounds.a_end + 1, prepared.uom)
    a_rec = F.col(f"`{identity.a_rec}`")
    target_rows = target.where((a_rec >= F.lit(a_first)) & (a_rec < F.lit(a_after)))
    read = scan_stats(spark, target_rows)
    actions = plan_actions(output, target_rows, identity).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        planned = {row[ACTION]: int(row["count"]) for row in actions.groupBy(ACTION).count().collect()}
        ignored = planned.pop("ignore", 0)
        commit = NO_COMMIT
        if planned:
            commit = merge_window(spark, job.target, actions, identity, a_first, a_after, metadata, add)
    finally:
        actions.unpersist()
    return _Written("forward_only_merge", commit, read, too_late=ignored)


def _write_recompute(prepared: PreparedJob, window: Window, output: DataFrame, metadata: dict[str, str]) -> _Written:
    """A re-run that applies corrections: the window runs from --start to the watermark, and the target's rows
    from --start on are replaced by its output, so the target equals a reload (no commit when nothing changed).

    Rows before --start are final and cannot depend on the window; rows from --start on are exactly the
    window's output (window-size invariance), whatever the sources' corrections changed in between.
    """
    spark, job = prepared.spark, prepared.job
    target = read_table(spark, job.target, "target")
    add = _fit_target(prepared, target, output)
    rec = prepared.spec.layout.inc_col
    condition = f"`{rec}` >= {sql_literal(from_index(window.start, prepared.uom), target.schema[rec].dataType)}"
    # A column the sources added is NULL in the target's rows so far (compared as such).
    held = [F.col(f"`{c}`") if c in target.columns else F.lit(None).cast(f.dataType).alias(c) for c, f in
            ((f.name, f) for f in output.schema.fields)]  # fmt: skip
    current = target.where(condition).select(*held)
    read = scan_stats(spark, current)
    mark = f"{RESERVED_PREFIX}change"
    changes = (
        output.exceptAll(current)
        .withColumn(mark, F.lit("inserted"))
        .unionByName(current.exceptAll(output).withColumn(mark, F.lit("deleted")))
    )
    changed = {row[mark]: int(row["count"]) for row in changes.groupBy(mark).count().collect()}
    if not changed:
        return _Written("recompute", NO_COMMIT, read)
    commit = replace_where(spark, job.target, output, condition, metadata, add)
    exact = replace(commit, inserted=changed.get("inserted", 0), updated=0, deleted=changed.get("deleted", 0))
    return _Written("recompute", exact, read)


def _write_rebuild(prepared: PreparedJob, window: Window, output: DataFrame, metadata: dict[str, str]) -> _Written:
    """A rebuild (one window from start_date): the output replaces the whole target, columns included."""
    spark, job = prepared.spark, prepared.job
    commit = overwrite_target(spark, job.target, output, prepared.partition_by, metadata)
    return _Written("rebuild", commit, ScanStats(0, 0))


def _too_late(prepared: PreparedJob, window: Window, mode: WriteMode, metadata: dict[str, str]) -> int | None:
    """Count the window's too-late B rows (None when the job does not look for them) and, with
    `target.late_rows`, replace the window's slice of that table by them (idempotent, like the target)."""
    job, spark = prepared.job, prepared.spark
    horizon = job.join.horizon
    if horizon == 0:
        return None
    spec = replace(prepared.spec, start=window.start, end=window.end)
    rows = too_late_rows(
        prepared.df_a, prepared.df_b, spec, prepared.identity, job.target.keys, job.target.b_keys, horizon
    )
    ref = job.target.late_rows_ref
    if ref is None:
        return rows.count()
    rows = rows.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        count = rows.count()
        if count or mode != "forward":  # a forward window with none has nothing to replace
            rec = prepared.spec.layout.inc_col
            partitioning = default_partitioning(None, rec, prepared.uom)
            ensure_target(spark, ref, rows.schema, partitioning, deletion_vectors=True)
            rec_type = rows.schema[rec].dataType
            first, last = (sql_literal(from_index(unit, prepared.uom), rec_type) for unit in (window.start, window.end))
            condition = f"`{rec}` >= {first} AND `{rec}` <= {last}"
            replace_where(spark, ref, lay_out(rows, partitioning, rec), condition, metadata)
    finally:
        rows.unpersist()
    return count


def _writer(mode: WriteMode, forward: bool) -> Callable[[PreparedJob, Window, DataFrame, dict[str, str]], _Written]:
    """How a window's output reaches the target (DESIGN.md 4)."""
    if mode == "rebuild":
        return _write_rebuild
    if mode == "recompute":
        return _write_recompute
    return _write_forward if forward else _write_forward_only


def _process_window(
    prepared: PreparedJob,
    window: Window,
    command: str,
    lease: _Lease,
    mode: WriteMode,
    last: bool,
    on_step: StepHook | None,
    null_counts: tuple[int, int],
) -> WindowReport:
    """Join one window, write it to the target, then one run-log row that moves the watermark (and on the
    run's last window releases the lock). A forward window or a rebuild moves the watermark; a re-run not."""
    spark, job, identity = prepared.spark, prepared.job, prepared.identity
    started_at, clock = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None), time.monotonic()
    step = on_step or (lambda _name: None)
    step("start")
    record = RunRecord(
        job.name,
        lease.run_id,
        command,
        prepared.label(window.start),
        prepared.label(window.end),
        "failed",
        None,
        started_at,
        0.0,
        null_inc_a=null_counts[0],
        null_inc_b=null_counts[1],
        time_uom=prepared.uom,
        releases_lock=True,  # a failed window ends the run
        took_over=lease.took_over,
        job_settings=encode(built_with(job)),
    )
    advance = mode in ("forward", "rebuild")
    output: DataFrame | None = None
    try:
        spec = replace(prepared.spec, start=window.start, end=window.end)
        scan_a, scan_b = read_sources(prepared.df_a, prepared.df_b, spec)
        stats_a, stats_b = scan_stats(spark, scan_a), scan_stats(spark, scan_b)
        # A forward write replaces slices by the output, which needs the sliding join window to be exact.
        forward = mode == "forward" and job.join.enforce_sliding_join_window
        output = join_prepared(prepared.df_a, prepared.df_b, spec)
        if forward or mode in ("rebuild", "recompute"):
            output = lay_out(output, prepared.partition_by, prepared.spec.layout.inc_col)
        output = output.persist(StorageLevel.MEMORY_AND_DISK)
        counts = _counts(count_and_check(output, identity), job.join.how)
        step("read")

        lease.check(job.name)
        step("writing")
        made = job.target
        ensure_target(spark, made, output.schema, prepared.partition_by, made.deletion_vectors, made.change_data_feed)
        metadata = {"job": job.name, "run_id": lease.run_id, "command": command, "window": str(window)}
        written = _writer(mode, forward)(prepared, window, output, metadata)
        commit = written.commit
        step("merged")
        late = _too_late(prepared, window, mode, metadata)
        too_late = None if late is None and not written.too_late else (late or 0) + written.too_late

        read: dict[str, Any] = {
            "files_read_a": stats_a.files,
            "bytes_read_a": stats_a.bytes,
            "files_read_b": stats_b.files,
            "bytes_read_b": stats_b.bytes,
            "files_read_target": written.read.files,
            "bytes_read_target": written.read.bytes,
        }
        wrote: dict[str, Any] = {
            "target_write": written.how if commit.version is not None else None,
            "target_files_added": commit.files_added,
            "target_files_removed": commit.files_removed,
            "target_rows_copied": commit.rows_copied,
            "target_deletion_vectors": commit.deletion_vectors,
        }
        by_type: dict[str, Any] = {f"rows_{name}": rows for name, rows in counts.items()}
        duration = time.monotonic() - clock
        report = WindowReport(
            str(window),
            counts,
            commit.inserted,
            commit.updated,
            commit.deleted,
            duration_s=duration,
            too_late=too_late,
            **read,
            **wrote,
        )
        done = replace(
            record,
            status="succeeded",
            duration_s=duration,
            **by_type,
            rows_inserted=commit.inserted,
            rows_updated=commit.updated,
            rows_deleted=commit.deleted,
            rows_too_late=too_late,
            **read,
            **wrote,
            target_version=commit.version,
            watermark=prepared.label(window.end) if advance else None,
            watermark_unit=window.end if advance else None,
            releases_lock=last,
        )
        append_run(spark, prepared.paths, done)  # the one state commit: watermark, run log, lock release
        lease.released, lease.took_over = last, None
        step("watermark")
        log.info(
            "%s %s %s: %s, +%d ~%d -%d rows",
            job.name,
            command,
            window,
            counts,
            commit.inserted,
            commit.updated,
            commit.deleted,
        )
        return report
    except BaseException as exc:
        try:
            cancelled = isinstance(exc, (KeyboardInterrupt, Cancelled))
            failed = replace(
                record,
                status="cancelled" if cancelled else "failed",
                error=f"{type(exc).__name__}: {exc}"[:4000],
                duration_s=time.monotonic() - clock,
            )
            append_run(spark, prepared.paths, failed)
            lease.released = True
        except Exception:  # the run log is best effort when the run already failed
            log.exception("could not record the failed run of %s", job.name)
        raise
    finally:
        if output is not None:
            output.unpersist()


def _null_counts(prepared: PreparedJob) -> tuple[int, int]:
    inc = prepared.job.join.inc_col
    counts = count_null_inc(prepared.df_a, inc), count_null_inc(prepared.df_b, inc)
    if any(counts):
        log.warning(
            "%s: rows with a NULL %s are never joined: %d in source_a, %d in source_b", prepared.job.name, inc, *counts
        )
    return counts


def _result(
    prepared: PreparedJob,
    command: str,
    run_id: str | None,
    reports: list[WindowReport],
    message: str,
    watermark: int | None,
) -> PipelineResult:
    return PipelineResult(prepared.job.name, command, run_id, tuple(reports), prepared.label(watermark), message)


def _nothing_pending(prepared: PreparedJob, watermark: int | None, latest: int | None, until: int | None) -> str:
    """Why a run has nothing to do, naming the fact that stops it (start_date, until, or no new data)."""
    name, job = prepared.job.name, prepared.job
    start = to_index(job.start_date, prepared.uom)
    facts = (
        f"watermark {prepared.label(watermark) or 'none'}, "
        f"latest {job.join.inc_col} in both sources {prepared.label(latest) or 'none'}"
    )
    if latest is None:
        return f"nothing pending for {name}: a source has no rows with a {job.join.inc_col} yet ({facts})"
    if watermark is None and start > latest:
        return (
            f"nothing pending for {name}: start_date {job.start_date} is after the latest {job.join.inc_col} "
            f"in both sources {prepared.label(latest)}"
        )
    if until is not None and (start - 1 if watermark is None else watermark) >= until:
        return f"nothing pending for {name} until {prepared.label(until)}: {facts}"
    return f"nothing pending for {name}: {facts}"


def run(
    job: JobConfig | str | Path,
    until: str | dt.date | None = None,
    spark: SparkSession | None = None,
    settings: Settings | None = None,
    on_step: StepHook | None = None,
    on_window: WindowHook | None = None,
    rebuild: bool = False,
) -> PipelineResult:
    """Process every pending window: from the unit after the watermark to the latest RecDate in both sources.

    `rebuild` recomputes the whole target under the job's current settings instead: one window from
    start_date to the latest RecDate, written over the target in one commit (the way to change settings).
    `on_window` is called after each window committed (to report progress as it happens).
    """
    prepared = prepare_job(job, spark, settings)
    if rebuild and until is not None:
        raise ConfigError("--until: a rebuild always goes to the latest RecDate in both sources; drop --until")
    until_unit = None if until is None else parse_point(until, "--until", prepared.uom)
    latest = _latest_available(prepared)
    state = read_state(prepared.spark, prepared.paths, prepared.job.name)
    if not rebuild:
        check_unchanged(prepared.job, state.settings, "run")
    begin = to_index(prepared.job.start_date, prepared.uom)
    if rebuild and (latest is None or latest < begin):
        raise ConfigError(
            f"--rebuild: nothing to rebuild from, the latest {prepared.job.join.inc_col} in both sources "
            f"({prepared.label(latest) or 'none'}) is before start_date {prepared.job.start_date}"
        )
    if not rebuild and _pending(prepared, state.watermark, latest, until_unit) is None:
        message = _nothing_pending(prepared, state.watermark, latest, until_unit)
        return PipelineResult(prepared.job.name, "run", None, (), prepared.label(state.watermark), message)
    reports: list[WindowReport] = []
    with _locked(prepared, state) as lease:
        watermark = lease.state.watermark  # as of holding the lock
        nulls = _null_counts(prepared)
        if rebuild:
            if latest is not None and watermark is not None and latest < watermark:
                raise ConfigError(
                    f"--rebuild: the sources now end at {prepared.label(latest)}, before the watermark "
                    f"{prepared.label(watermark)}: rows after it would be lost; backfill into a new target instead"
                )
            window: Window | None = Window(begin, latest or begin, prepared.uom)
        else:
            check_unchanged(prepared.job, lease.state.settings, "run")  # as of holding the lock
            window = _pending(prepared, watermark, latest, until_unit)
        while window is not None:
            following = None if rebuild else _pending(prepared, window.end, latest, until_unit)
            mode: WriteMode = "rebuild" if rebuild else "forward"
            report = _process_window(prepared, window, "run", lease, mode, following is None, on_step, nulls)
            reports.append(report)
            if on_window:
                on_window(report)
            watermark, window = window.end, following  # only this run moves it while it holds the lock
    done = f"rebuilt the target in {reports[0].window}" if rebuild else f"processed {len(reports)} window(s)"
    return _result(prepared, "run", lease.run_id, reports, done, watermark)


def rerun(
    job: JobConfig | str | Path,
    start: str | dt.date,
    end: str | dt.date | None = None,
    spark: SparkSession | None = None,
    settings: Settings | None = None,
    on_step: StepHook | None = None,
    on_window: WindowHook | None = None,
) -> PipelineResult:
    """Recompute an already processed window; the target changes only where the sources changed."""
    prepared = prepare_job(job, spark, settings)
    first = parse_point(start, "--start", prepared.uom)
    last = first if end is None else parse_point(end, "--end", prepared.uom)
    # Name the argument the user gave: with no --end, the window is the one unit of --start.
    last_arg = "--start" if end is None else "--end"
    window = Window(first, last, prepared.uom)
    state = read_state(prepared.spark, prepared.paths, prepared.job.name)
    watermark = state.watermark
    begin = to_index(prepared.job.start_date, prepared.uom)
    if watermark is None:
        raise ConfigError(f"rerun: job {prepared.job.name!r} has not run yet; use run")
    check_unchanged(prepared.job, state.settings, "rerun")
    if first < begin:
        raise ConfigError(
            f"rerun: --start {prepared.label(first)} is before the job's start_date {prepared.job.start_date}"
        )
    if last > watermark:
        raise ConfigError(
            f"rerun: {last_arg} {prepared.label(last)} is after the watermark {prepared.label(watermark)}; "
            "only processed windows can be re-run (use run for the rest)"
        )
    # With the sliding join window, rows from --start on are the output of [--start, watermark] whatever the
    # schedule: recomputing that applies every correction of the sources. Otherwise (or corrections = "keep")
    # the forward-only MERGE keeps what the target has and never moves a row back.
    recompute = prepared.job.join.enforce_sliding_join_window and prepared.job.target.corrections == "apply"
    todo = Window(first, watermark, prepared.uom) if recompute else window
    mode: WriteMode = "recompute" if recompute else "rerun"
    with _locked(prepared, state) as lease:
        report = _process_window(prepared, todo, "rerun", lease, mode, True, on_step, _null_counts(prepared))
        if on_window:
            on_window(report)
    done = f"re-ran {window}" + (f" (recomputed {todo}: rows after it depend on it)" if todo != window else "")
    return _result(prepared, "rerun", lease.run_id, [report], done, watermark)


def backfill(
    job: JobConfig | str | Path,
    start: str | dt.date,
    end: str | dt.date,
    chunk: str = "month",
    spark: SparkSession | None = None,
    settings: Settings | None = None,
    on_progress: ProgressHook | None = None,
    on_step: StepHook | None = None,
) -> PipelineResult:
    """Process a historic range in chunks (day, month, year, all); resumable: processed chunks are skipped."""
    prepared = prepare_job(job, spark, settings)
    first = parse_point(start, "--start", prepared.uom)
    last = parse_point(end, "--end", prepared.uom)
    whole = Window(first, last, prepared.uom)
    chunks = chunk_windows(whole, chunk)
    begin = to_index(prepared.job.start_date, prepared.uom)
    state = read_state(prepared.spark, prepared.paths, prepared.job.name)
    check_unchanged(prepared.job, state.settings, "backfill")
    watermark = state.watermark
    needed = begin if watermark is None else watermark + 1
    if first < begin:
        raise ConfigError(
            f"backfill: --start {prepared.label(first)} is before the job's start_date {prepared.job.start_date}"
        )
    if first > needed:
        raise ConfigError(
            f"backfill: --start {prepared.label(first)} would leave {prepared.label(needed)}.."
            f"{prepared.label(first - 1)} unprocessed; start at {prepared.label(needed)}"
        )
    latest = _latest_available(prepared)
    if latest is None or last > latest:
        raise ConfigError(
            f"backfill: --end {prepared.label(last)} is after the latest RecDate present in both sources "
            f"({prepared.label(latest) or 'none'})"
        )
    reports: list[WindowReport] = []
    with _locked(prepared, state) as lease:
        check_unchanged(prepared.job, lease.state.settings, "backfill")  # as of holding the lock
        done = lease.state.watermark
        nulls = _null_counts(prepared)
        for number, piece in enumerate(chunks, start=1):
            if done is not None and piece.end <= done:
                if on_progress:
                    on_progress(number, len(chunks), None, piece)
                continue
            todo = piece if done is None or piece.start > done else Window(done + 1, piece.end, piece.time_uom)
            final = number == len(chunks)
            report = _process_window(prepared, todo, "backfill", lease, "forward", final, on_step, nulls)
            reports.append(report)
            done = todo.end
            if on_progress:
                on_progress(number, len(chunks), report, todo)
    message = f"backfilled {len(reports)} of {len(chunks)} chunk(s)"
    return _result(prepared, "backfill", lease.run_id, reports, message, done)


def status(
    job: JobConfig | str | Path, spark: SparkSession | None = None, settings: Settings | None = None, runs: int = 5
) -> JobStatus:
    """Where the job stands, read with Spark: watermark, latest data in both sources, all that is pending, the
    lock and recent runs. A missing source is reported as the status's `problem`, not raised: the rest shows."""
    settings = settings or load_settings()
    if not isinstance(job, JobConfig):
        job = load_job(resolve_job(str(job), settings.job_dir))
    spark = spark or get_spark(settings)
    paths = state_paths(job.state_path(settings.state_dir))
    state = read_state(spark, paths, job.name)
    recent = [row.asDict() for row in read_runs(spark, paths, job.name, runs)]
    latest: int | None = None
    problem = None
    try:
        units = [
            latest_unit(read_table(spark, ref, role), job.join.inc_col, job.join.time_uom)
            for ref, role in ((job.source_a, "source_a"), (job.source_b, "source_b"))
        ]
        latest = None if None in units else min(u for u in units if u is not None)
    except (ConfigError, SchemaError) as exc:
        problem = str(exc)
    return describe(job, state, latest, recent, settings.lock_expiry_seconds, problem)
