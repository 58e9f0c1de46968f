"""A feature job's join, checked once from the spine's and the sources' schemas (`plan_features`) and joined to
their rows: every window goes through `join_features`, the engine's path for checked sources."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from deltainc.join.features import JoinedFeatures, join_features, prepare_features, resolve_feature_conds
from deltainc.join.unit_columns import source_filter
from deltainc.pipeline.job.feature_plan import (
    check_feature_job,
    feature_identity,
    feature_origins,
    feature_sources,
    spine_settings,
)
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.join_plan import Identity
from deltainc.pipeline.job.kinds.feature_job import FeatureJob
from deltainc.pipeline.job.kinds.job_kind import LateSearch, SourceScan, WindowJoin

__all__ = ["FeaturePlan", "FeatureJoin", "plan_features"]


@dataclass(frozen=True)
class FeatureJoin:
    """The spine joined with its feature sources for any window."""

    job: JobConfig
    joined: JoinedFeatures  # the sources' joins, planned once
    identity: Identity
    origins: Mapping[str, tuple[str, str]]
    frames: Mapping[str, DataFrame]

    @property
    def late_search(self) -> LateSearch | None:
        """None: a feature job looks for no too-late rows (its sources have no single A row to be late for)."""
        return None

    def join(self, first: int, last: int) -> WindowJoin:
        """`join_features` for [first, last], as planned once; the scans are each source's rows in
        `FeatureJob.read_ranges`."""
        inc, uom = self.job.join.inc_col, self.job.join.time_uom
        ranges = FeatureJob(self.job).read_ranges(first, last)
        scans = tuple(
            SourceScan(role, frame.where(source_filter(frame, inc, uom, *ranges[role])), ranges[role])
            for role, frame in self.frames.items()
        )
        output = join_features(self.joined, first, last)
        return WindowJoin(output, scans)


@dataclass(frozen=True)
class FeaturePlan:
    """A feature job checked against its spine's and sources' schemas."""

    job: JobConfig
    identity: Identity
    schemas: Mapping[str, T.StructType]

    def prepare(self, frames: Mapping[str, DataFrame]) -> FeatureJoin:
        """Joined to the rows; the one check left, resolving the sources' join conditions, is Spark's analyzer's."""
        spine = frames["source_a"]
        sources = feature_sources(self.job, frames)
        settings = spine_settings(self.job)
        resolve_feature_conds(spine, sources, settings)
        origins = feature_origins(spine, sources, self.job)
        ordered = {"source_a": spine} | {f.role: frames[f.role] for f in self.job.features}
        return FeatureJoin(self.job, prepare_features(spine, sources, settings), self.identity, origins, ordered)


def plan_features(job: JobConfig, schemas: Mapping[str, T.StructType]) -> FeaturePlan:
    """The feature job checked against its sources' schemas (by role): `check_feature_job`'s checks, once."""
    check_feature_job(job, schemas["source_a"], feature_sources(job, schemas))
    return FeaturePlan(job, feature_identity(job), schemas)
