"""A job prepared for processing: loaded, validated against its sources, with the output the target needs; and the
facts a command asks of its sources besides their rows (the latest RecDate in each and in all, the rows with a NULL
inc_col or join key, the files a window's scan reads), each from the sources' Delta logs where they answer exactly,
else from Spark.

Everything a command checks before it takes the lock is here, so that bad input fails before anything is
written: the job file, the join, the target's identity columns, and (`open_job`) the remembered settings.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from deltainc.join.windows import Window
from deltainc.pipeline.controller.planned_target import source_frames
from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.delta_log_stats import files_in_units, null_count_from_log, null_keys_in_units
from deltainc.pipeline.delta.sources import count_null_keys, window_rows
from deltainc.pipeline.delta.spark_counts import ScanStats, count_null_inc, scan_stats
from deltainc.pipeline.delta.table import Table, logs_else, open_handle
from deltainc.pipeline.job.job_config import JobConfig, load
from deltainc.pipeline.job.kinds import JobKind, JoinPlan, PreparedJoin, SourceScan, SpineReach
from deltainc.pipeline.job.kinds.job_kind import Identity, window_rows_of
from deltainc.pipeline.job.kinds.two_source import kind_of
from deltainc.pipeline.job.sections import SourceRef
from deltainc.pipeline.state import (
    JobState,
    StatePaths,
    check_unchanged,
    latest_in_sources,
    read_state,
    state_paths,
)
from deltainc.pipeline.target.duplicate_identity import WindowSources
from deltainc.pipeline.target.layout import target_partitioning
from deltainc.settings import Settings, resolved
from deltainc.settings import use as use_storage
from deltainc.spark import get_spark
from deltainc.storage import spark_conf
from deltainc.time_units import TimeUnit, to_index, unit_label

__all__ = [
    "PreparedJob",
    "job_session",
    "prepare_job",
    "open_job",
    "latest_available",
    "latest_labels",
    "null_inc",
    "null_keys",
    "scanned",
]


def job_session(spark: SparkSession | None, settings: Settings, s3: bool) -> SparkSession:
    """The session a job runs in: `spark` when given, else get_spark's. A job with tables in S3 also sets S3A's
    settings on the session, which Spark hands to Hadoop for this session's reads and writes: a session started
    elsewhere (a notebook's, a Spark Connect server's) reaches the same store. Its JVM needs hadoop-aws."""
    use_storage(settings.storage)
    session = spark or get_spark(settings, s3=s3)
    if s3:
        for key, value in spark_conf(resolved(settings.storage)).items():
            session.conf.set(key.removeprefix("spark.hadoop."), value)
    return session


@dataclass(frozen=True)
class PreparedJob:
    """A job validated against its sources: everything needed to process windows. Its kind (`kind`) and its
    join (`join`, checked once) answer every question that differs between a two-source and a feature job."""

    spark: SparkSession
    job: JobConfig
    paths: StatePaths
    kind: JobKind
    join: PreparedJoin
    settings: Settings
    partition_by: tuple[str, ...]  # of a target this job creates

    @property
    def identity(self) -> Identity:
        """The output columns that identify a target row."""
        return self.join.identity

    @property
    def sources(self) -> WindowSources:
        """The rows the join reads, by role: where the message of a duplicate identity finds its source."""
        return WindowSources(self.join.frames, {role: self.job.inc_col_of(role) for role, _ in self.job.sources})

    @property
    def origins(self) -> Mapping[str, tuple[str, str]]:
        """Output column -> (source role, column)."""
        return self.join.origins

    @property
    def rec(self) -> str:
        """The output's RecDate column: the one the target's slices are cut by."""
        return self.job.join.inc_col

    @property
    def spine_reach(self) -> SpineReach:
        """look_back_time, max_waiting_time and b_waits_for_a as they bound the A rows a window can change."""
        return self.kind.reach

    @property
    def uom(self) -> TimeUnit:
        """The job's time unit."""
        return self.job.join.time_uom

    @property
    def start(self) -> int:
        """The unit of the job's start_date."""
        return to_index(self.job.start_date, self.uom)

    @cached_property
    def tables(self) -> Mapping[str, Table]:
        """Each source's table handle, by role: opened once for the command, asked every question of its table."""
        return {role: open_handle(ref, role, self.spark) for role, ref in self.job.sources}

    def label(self, unit: int | None) -> str | None:
        """A unit as the user reads it (an ISO date or datetime); None stays None."""
        return unit_label(unit, self.uom)


def prepare_job(
    job: JobConfig | str | Path,
    spark: SparkSession | None = None,
    settings: Settings | None = None,
    checked: JoinPlan | None = None,
    planned: bool = False,
) -> PreparedJob:
    """Load and validate a job against its sources; raises before anything is written. The job's kind checks it
    once (`JobKind.plan`) and joins the plan to the sources' rows.

    Args:
        job: a job, a job name or a job file's path.
        spark: the session to read the sources with; None = `get_spark()` from the settings.
        settings: the global settings; None = read them.
        checked: the job as checked from its sources' Delta logs before Spark started (`check_from_logs`): taken
            on when Spark reads the same schemas, so the job is checked once per command; None = checked here.
        planned: a source that is the target of a job that has not run yet is an empty frame of the columns its
            first run will write (`planned_target`), as `validate` checks a chain before it runs; False = such a
            source is refused (a run needs its rows).

    Example:
        ```python
        prepared = prepare_job("bank_trx", spark)
        output = prepared.join.join(first, last).output
        ```
    """
    job, settings = load(job, settings)
    spark = job_session(spark, settings, job.on_s3)
    frames = source_frames(spark, job, planned)
    paths = state_paths(job.state_path(settings.state_dir))
    partition_by = tuple(target_partitioning(job.target.partition_by, job.join.inc_col, job.join.time_uom))
    kind, schemas = kind_of(job), frames.schemas
    plan = checked if checked is not None and checked.schemas == schemas else kind.plan(schemas)
    rows = window_rows(spark, dict(job.sources), frames.schemas, job.inc_col_of, job.join.time_uom)
    return PreparedJob(spark, job, paths, kind, plan.prepare(frames, rows), settings, partition_by)


def open_job(
    job: JobConfig | str | Path,
    spark: SparkSession | Callable[[], SparkSession] | None,
    settings: Settings | None,
    command: str,
    check_settings: bool = True,
    checked: JoinPlan | None = None,
    state: JobState | None = None,
) -> tuple[PreparedJob, JobState]:
    """The common start of a command: the prepared job in `spark` (a session, a function that starts one, or None
    for `get_spark()`), taking on the plan `checked` from the Delta logs, and its state, refused
    (SettingsChangedError) when `check_settings` and the job's settings differ from those its target was built with.
    `state`: the job's state as the command read it already, under the lock it holds (`hold_lock`, which checked
    its settings as `check_settings` says), taken on as it is: the state is read, and checked, once per command."""
    prepared = prepare_job(job, spark() if callable(spark) else spark, settings, checked)
    if state is not None:
        return prepared, state
    state = read_state(prepared.paths, prepared.job.name)
    if check_settings:
        check_unchanged(prepared.job, state.settings, command)
    return prepared, state


def latest_available(prepared: PreparedJob) -> int | None:
    """The latest unit present in every source (another job's target: that job's watermark): from their Delta logs
    where they answer exactly, else with Spark."""
    inc, state_dir = prepared.job.join.inc_col, prepared.settings.state_dir

    return logs_else(
        f"{prepared.job.name}: the latest {inc} in the sources",
        lambda: latest_in_sources(prepared.job, state_dir),
        lambda _why: latest_in_sources(prepared.job, state_dir, prepared.spark),  # each table's whole latest
    )


def latest_labels(prepared: PreparedJob) -> str | None:
    """Each source's latest RecDate from its Delta log, as JSON labels (`{"source_a": "2025-03-02", ...}`); None
    where a log cannot tell (a catalog table, deletion vectors): the report then shows no lag for the run."""
    job, uom = prepared.job, prepared.uom

    def from_logs() -> str:
        return json.dumps(
            {
                role: prepared.label(table.latest_unit(job.inc_col_of(role), uom.value, upstream=None))
                for role, table in prepared.tables.items()
            }
        )

    return logs_else("each source's latest RecDate", from_logs, lambda _why: None)


def null_inc(table: Table, frames: Mapping[str, DataFrame], inc: str) -> int:
    """A source's rows with a NULL inc_col: from its Delta log's statistics where they are exact, else counted."""
    role = table.role

    def from_log(location: str) -> int:
        if isinstance(table.ref, SourceRef) and table.ref.where is not None:  # the log counts the whole table
            raise LogUnreadable(f"{role}.where: only Spark applies it")
        return null_count_from_log(location, inc)

    return table.answer(f"{role}'s NULL {inc} count", from_log, lambda _why: count_null_inc(frames[role], inc))


def null_keys(prepared: PreparedJob, window: Window) -> tuple[int | None, int | None]:
    """The window's rows of A and of B (of the feature sources together) with a NULL join key, which never match
    (None when no source is joined on keys): from the Delta logs' statistics where they are exact (one key
    column, no `where`), the others in one Spark job over the window's rows (read from their files where the
    window reads them so, `sources.window_rows`)."""
    inc, uom, join = prepared.job.inc_col_of, prepared.uom, prepared.join
    refs, first, last = dict(prepared.job.sources), window.start, window.end
    sources = prepared.kind.key_columns()
    if not sources:
        return None, None

    def from_log(role: str, keys: tuple[str, ...], location: str) -> int | None:
        if len(keys) != 1 or refs[role].where is not None:
            raise LogUnreadable(f"{role}: several keys, or a where, are counted by Spark")
        return null_keys_in_units(location, keys[0], inc(role), uom, first, last)

    tables = prepared.tables
    counts: dict[str, int | None] = {
        role: tables[role].answer(
            f"{window}'s NULL {keys} counts in {role}", partial(from_log, role, keys), lambda _why: None
        )
        for role, keys in sources
    }
    rest = [(role, keys) for role, keys in sources if counts[role] is None]
    frames = [(window_rows_of(join.rows, join.frames, role, first, last), keys, inc(role)) for role, keys in rest]
    counts |= dict(zip([role for role, _ in rest], count_null_keys(frames, uom, first, last), strict=True))
    return counts["source_a"], sum(n or 0 for role, n in counts.items() if role != "source_a")


def scanned(prepared: PreparedJob, read: SourceScan) -> ScanStats:
    """The files and bytes a source's scan of units [first, last] reads: from its Delta log when the source is
    partitioned by its inc_col, else as Spark plans the scan."""

    def from_log(location: str) -> ScanStats:
        return ScanStats(*files_in_units(location, prepared.job.inc_col_of(read.role), prepared.uom, *read.units))

    table = prepared.tables[read.role]
    return table.answer(f"{read.role}'s files read", from_log, lambda _why: scan_stats(prepared.spark, read.scan))
