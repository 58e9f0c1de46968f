"""A two-source job's join, checked once from A's and B's schemas (`plan_two_source`) and joined to their rows:
every window goes through the engine's prepared path (`join_prepared`), with no check again."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from deltainc.join.engine import join_prepared, read_sources
from deltainc.join.join_spec import JoinSpec, resolve_join_cond
from deltainc.join.windows import open_read_bounds
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.join_plan import Identity, plan_join
from deltainc.pipeline.job.kinds.job_kind import (
    LateSearch,
    SourceScan,
    WindowJoin,
    WindowRows,
    whole_tables,
    window_rows_of,
)

__all__ = ["TwoSourcePlan", "TwoSourceJoin", "plan_two_source"]


@dataclass(frozen=True)
class TwoSourceJoin:
    """The join of A and B for any window: the checked spec, the rows, the target's identity."""

    spec: JoinSpec
    identity: Identity
    origins: Mapping[str, tuple[str, str]]
    frames: Mapping[str, DataFrame]
    horizon: int  # how far after its A row a too-late B row is looked for; 0 = not at all
    rows: WindowRows = whole_tables  # A's and B's rows of a window's units, where read apart from the tables

    @property
    def late_search(self) -> LateSearch | None:
        return None if self.horizon == 0 else LateSearch(self.frames["source_b"], self.spec, self.horizon)

    def join(self, first: int, last: int) -> WindowJoin:
        """The engine's output for [first, last]: A read in [s - mw, e], B in [s - lb - mw, e] (the files of
        those units where `rows` reads them, else the whole tables, pruned by Spark)."""
        spec = replace(self.spec, start=first, end=last)
        bounds = open_read_bounds(first, last, spec.look_back_time, spec.max_waiting_time, spec.b_waits)
        df_a = window_rows_of(self.rows, self.frames, "source_a", bounds.a_start, bounds.a_end)
        df_b = window_rows_of(self.rows, self.frames, "source_b", bounds.b_start, bounds.b_end)
        scan_a, scan_b = read_sources(df_a, df_b, spec)
        scans = (
            SourceScan("source_a", scan_a, (bounds.a_start, bounds.a_end)),
            SourceScan("source_b", scan_b, (bounds.b_start, bounds.b_end)),
        )
        return WindowJoin(join_prepared(df_a, df_b, spec), scans)


@dataclass(frozen=True)
class TwoSourcePlan:
    """A two-source job checked against A's and B's schemas."""

    job: JobConfig
    spec: JoinSpec
    identity: Identity
    schemas: Mapping[str, T.StructType]

    def prepare(self, frames: Mapping[str, DataFrame], rows: WindowRows = whole_tables) -> TwoSourceJoin:
        """Joined to A's and B's rows (a window's through `rows` where it reads them apart); the one check left,
        resolving `join_cond`, is Spark's analyzer's."""
        df_a, df_b = frames["source_a"], frames["source_b"]
        if self.spec.join_cond is not None:
            resolve_join_cond(df_a, df_b, self.spec.join_cond, self.spec.settings)
        layout = self.spec.layout
        origins = {out: ("source_a", col) for col, out in layout.a_names} | {
            out: ("source_b", col) for col, out in layout.b_names
        }
        frames = {"source_a": df_a, "source_b": df_b}
        return TwoSourceJoin(self.spec, self.identity, origins, frames, self.job.join.horizon, rows)


def plan_two_source(job: JobConfig, schemas: Mapping[str, T.StructType]) -> TwoSourcePlan:
    """The two-source job checked against its sources' schemas (by role): `plan_join`'s checks, once."""
    spec, identity = plan_join(job, schemas["source_a"], schemas["source_b"])
    return TwoSourcePlan(job, spec, identity, schemas)
