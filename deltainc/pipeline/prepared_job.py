"""A job prepared for processing: loaded, validated against its sources, with the output the target needs.

Everything a command checks before it takes the lock is here, so that bad input fails before anything is
written: the job file, the join, the target's identity columns, and (`open_job`) the remembered settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from deltainc.join.features import FeatureSource
from deltainc.join.join_spec import JoinSpec, resolve_join_cond
from deltainc.join.time_units import TimeUnit
from deltainc.join.windows import from_index, to_index
from deltainc.pipeline.delta.sources import read_source
from deltainc.pipeline.job.feature_plan import (
    check_feature_job,
    feature_identity,
    feature_origins,
    feature_sources,
    reach,
)
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.job_file import load_job, resolve_job
from deltainc.pipeline.job.join_plan import Identity, plan_join
from deltainc.pipeline.state import JobState, StatePaths, check_unchanged, read_state, state_paths
from deltainc.pipeline.target.layout import target_partitioning
from deltainc.settings import Settings, load_settings
from deltainc.spark import job_session

__all__ = ["PreparedJob", "load", "prepare_job", "open_job"]


@dataclass(frozen=True)
class PreparedJob:
    """A job validated against its sources: everything needed to process windows."""

    spark: SparkSession
    job: JobConfig
    paths: StatePaths
    df_a: DataFrame
    df_b: DataFrame | None  # None for a feature job, whose sources are `features`
    spec: JoinSpec | None  # the two-source join; None for a feature job
    identity: Identity
    settings: Settings
    partition_by: tuple[str, ...]  # of a target this job creates
    features: tuple[FeatureSource, ...] = ()
    origins: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # output column -> (source role, column)

    @property
    def rec(self) -> str:
        """The output's RecDate column: the one the target's slices are cut by."""
        return self.job.join.inc_col

    @property
    def spine_reach(self) -> tuple[int, int, bool]:
        """look_back_time, max_waiting_time and b_waits_for_a as they bound the A rows a window can change."""
        if self.spec is None:
            return 0, reach(self.job), False
        return self.spec.look_back_time, self.spec.max_waiting_time, self.spec.b_waits

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


def load(job: JobConfig | str | Path, settings: Settings | None = None) -> tuple[JobConfig, Settings]:
    """The job (a config, or a job name or file under the settings' job_dir) and the settings to run it with."""
    settings = settings or load_settings()
    if not isinstance(job, JobConfig):
        job = load_job(resolve_job(str(job), settings.job_dir))
    return job, settings


def prepare_job(
    job: JobConfig | str | Path, spark: SparkSession | None = None, settings: Settings | None = None
) -> PreparedJob:
    """Load and validate a job against its sources; raises before anything is written."""
    job, settings = load(job, settings)
    spark = job_session(spark, settings, job.on_s3)
    df_a = read_source(spark, job.source_a, "source_a")
    paths = state_paths(job.state_path(settings.state_dir))
    partition_by = tuple(target_partitioning(job.target.partition_by, job.join.inc_col, job.join.time_uom))
    if job.features:
        frames = {role: read_source(spark, ref, role) for role, ref in job.sources[1:]}
        sources = feature_sources(job, frames)
        check_feature_job(job, df_a, sources)
        origins = feature_origins(df_a, sources, job)
        return PreparedJob(spark, job, paths, df_a, None, None, feature_identity(job), settings, partition_by,
                           sources, origins)  # fmt: skip
    assert job.source_b is not None  # a job has source_b or features (JobConfig)
    df_b = read_source(spark, job.source_b, "source_b")
    spec, identity = plan_join(job, df_a.schema, df_b.schema)
    if job.join.join_cond is not None:
        resolve_join_cond(df_a, df_b, job.join.join_cond, spec.settings)
    layout = spec.layout
    origins = {out: ("source_a", col) for col, out in layout.a_names} | {
        out: ("source_b", col) for col, out in layout.b_names
    }
    return PreparedJob(spark, job, paths, df_a, df_b, spec, identity, settings, partition_by, (), origins)


def open_job(
    job: JobConfig | str | Path,
    spark: SparkSession | None,
    settings: Settings | None,
    command: str,
    check_settings: bool = True,
) -> tuple[PreparedJob, JobState]:
    """The common start of a command: the prepared job and its state, refused (SettingsChangedError) when
    `check_settings` and the job's settings differ from those its target was built with."""
    prepared = prepare_job(job, spark, settings)
    state = read_state(prepared.paths, prepared.job.name)
    if check_settings:
        check_unchanged(prepared.job, state.settings, command)
    return prepared, state
