"""A job prepared for processing: loaded, validated against its sources, with the output the target needs.

Everything a command checks before it takes the lock is here, so that bad input fails before anything is
written: the job file, the join, the target's identity columns, and (`open_job`) the remembered settings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import SparkSession

from deltainc.join.windows import TimeUnit, from_index, to_index
from deltainc.pipeline.delta.sources import read_source, window_rows
from deltainc.pipeline.job.job_config import JobConfig, load
from deltainc.pipeline.job.kinds import JobKind, JoinPlan, PreparedJoin, SpineReach
from deltainc.pipeline.job.kinds.job_kind import Identity
from deltainc.pipeline.job.kinds.two_source import kind_of
from deltainc.pipeline.state import JobState, StatePaths, check_unchanged, read_state, state_paths
from deltainc.pipeline.target.duplicate_identity import WindowSources
from deltainc.pipeline.target.layout import target_partitioning
from deltainc.settings import Settings, resolved
from deltainc.settings import use as use_storage
from deltainc.spark import get_spark
from deltainc.storage import spark_conf

__all__ = ["PreparedJob", "job_session", "prepare_job", "open_job"]


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
        return WindowSources(self.join.frames, self.job.join.inc_col)

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

    def label(self, unit: int | None) -> str | None:
        """A unit as the user reads it (an ISO date or datetime); None stays None."""
        return None if unit is None else from_index(unit, self.uom).isoformat()


def prepare_job(
    job: JobConfig | str | Path,
    spark: SparkSession | None = None,
    settings: Settings | None = None,
    checked: JoinPlan | None = None,
) -> PreparedJob:
    """Load and validate a job against its sources; raises before anything is written. The job's kind checks it
    once (`JobKind.plan`) and joins the plan to the sources' rows.

    Args:
        job: a job, a job name or a job file's path.
        spark: the session to read the sources with; None = `get_spark()` from the settings.
        settings: the global settings; None = read them.
        checked: the job as checked from its sources' Delta logs before Spark started (`check_from_logs`): taken
            on when Spark reads the same schemas, so the job is checked once per command; None = checked here.

    Example:
        ```python
        prepared = prepare_job("bank_trx", spark)
        output = prepared.join.join(first, last).output
        ```
    """
    job, settings = load(job, settings)
    spark = job_session(spark, settings, job.on_s3)
    df_a = read_source(spark, job.source_a, "source_a")
    paths = state_paths(job.state_path(settings.state_dir))
    partition_by = tuple(target_partitioning(job.target.partition_by, job.join.inc_col, job.join.time_uom))
    frames = {"source_a": df_a} | {role: read_source(spark, ref, role) for role, ref in job.sources[1:]}
    kind, schemas = kind_of(job), {role: frame.schema for role, frame in frames.items()}
    plan = checked if checked is not None and checked.schemas == schemas else kind.plan(schemas)
    rows = window_rows(spark, dict(job.sources), frames, job.join.inc_col, job.join.time_uom)
    return PreparedJob(spark, job, paths, kind, plan.prepare(frames, rows), settings, partition_by)


def open_job(
    job: JobConfig | str | Path,
    spark: SparkSession | Callable[[], SparkSession] | None,
    settings: Settings | None,
    command: str,
    check_settings: bool = True,
    checked: JoinPlan | None = None,
) -> tuple[PreparedJob, JobState]:
    """The common start of a command: the prepared job in `spark` (a session, a function that starts one, or None
    for `get_spark()`), taking on the plan `checked` from the Delta logs, and its state, refused
    (SettingsChangedError) when `check_settings` and the job's settings differ from those its target was built with."""
    prepared = prepare_job(job, spark() if callable(spark) else spark, settings, checked)
    state = read_state(prepared.paths, prepared.job.name)
    if check_settings:
        check_unchanged(prepared.job, state.settings, command)
    return prepared, state
