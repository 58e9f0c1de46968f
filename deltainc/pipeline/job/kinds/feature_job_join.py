"""A feature job's join, checked once from the spine's and the sources' schemas (`plan_features`) and joined to
their rows: every window goes through `join_features`, the engine's path for checked sources."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from deltainc.join.columns import source_filter
from deltainc.join.feature_source import resolve_feature_conds
from deltainc.join.features import JoinedFeatures, join_features, prepare_features
from deltainc.pipeline.job.feature_plan import check_feature_job, feature_identity, feature_origins, feature_sources
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.join_plan import Identity
from deltainc.pipeline.job.kinds.job_kind import LateSearch, SourceScan, WindowJoin, whole_tables, window_rows_of

if TYPE_CHECKING:
    from deltainc.pipeline.job.kinds.job_kind import WindowRows

__all__ = ["FeaturePlan", "FeatureJoin", "plan_features"]

Ranges = Callable[[int, int], dict[str, tuple[int, int]]]  # a window's units -> each source's units read


@dataclass(frozen=True)
class FeatureJoin:
    """The spine joined with its feature sources for any window."""

    job: JobConfig
    joined: JoinedFeatures  # the sources' joins, planned once
    identity: Identity
    origins: Mapping[str, tuple[str, str]]
    frames: Mapping[str, DataFrame]
    read_ranges: Ranges  # FeatureJob.read_ranges: each source's units for a window
    rows: WindowRows = whole_tables  # each source's rows of a window's units, where read apart from the tables

    @property
    def late_search(self) -> LateSearch | None:
        """None: a feature job looks for no too-late rows (its sources have no single A row to be late for)."""
        return None

    def join(self, first: int, last: int) -> WindowJoin:
        """`join_features` for [first, last], as planned once; the scans are each source's rows in
        `FeatureJob.read_ranges` (the files of those units where `rows` reads them, else the whole tables)."""
        inc, uom = self.job.join.inc_col, self.job.join.time_uom
        ranges = self.read_ranges(first, last)
        frames = {role: window_rows_of(self.rows, self.frames, role, *ranges[role]) for role in self.frames}
        scans = tuple(
            SourceScan(role, frame.where(source_filter(frame, inc, uom, *ranges[role])), ranges[role])
            for role, frame in frames.items()
        )
        sources = {feature.name: frames[feature.role] for feature in self.job.features}
        output = join_features(self.joined, first, last, frames["source_a"], sources)
        return WindowJoin(output, scans)


@dataclass(frozen=True)
class FeaturePlan:
    """A feature job checked against its spine's and sources' schemas."""

    job: JobConfig
    identity: Identity
    schemas: Mapping[str, T.StructType]
    read_ranges: Ranges

    def prepare(self, frames: Mapping[str, DataFrame], rows: WindowRows = whole_tables) -> FeatureJoin:
        """Joined to the rows (a window's through `rows` where it reads them apart); the one check left, resolving
        the sources' join conditions, is Spark's analyzer's."""
        spine = frames["source_a"]
        sources = feature_sources(self.job, frames)
        settings = self.job.join.engine_settings()
        resolve_feature_conds(spine, sources, settings)
        origins = feature_origins(spine, sources, self.job)
        ordered = {"source_a": spine} | {f.role: frames[f.role] for f in self.job.features}
        joined = prepare_features(spine, sources, settings)
        return FeatureJoin(self.job, joined, self.identity, origins, ordered, self.read_ranges, rows)


def plan_features(job: JobConfig, schemas: Mapping[str, T.StructType], read_ranges: Ranges) -> FeaturePlan:
    """The feature job checked against its sources' schemas (by role): `check_feature_job`'s checks, once;
    `read_ranges` gives each source's units for a window (`FeatureJob.read_ranges`)."""
    check_feature_job(job, schemas["source_a"], feature_sources(job, schemas))
    return FeaturePlan(job, feature_identity(job), schemas, read_ranges)
