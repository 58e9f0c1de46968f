"""A two-source job as a kind of job (`job_kind.JobKind`): A joined with one B by `[join]`.

What it says from the job file alone needs no pyspark; its check against the sources' schemas is `plan_join`'s,
and the plan it gives (`two_source_join`) joins a window with the engine's prepared path."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from deltainc.join.windows import open_read_bounds
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds.job_kind import JoinPlan, SpineReach

if TYPE_CHECKING:
    from pyspark.sql import types as T

    from deltainc.join.options import How

__all__ = ["TwoSourceJob"]


@dataclass(frozen=True)
class TwoSourceJob:
    """A job with `[source_b]`: A waits for its B within the sliding join window of `[join]`."""

    job: JobConfig

    @property
    def reach(self) -> SpineReach:
        join = self.job.join
        return SpineReach(join.look_back_time, join.max_waiting_time, join.how == "full_outer")  # B waits for A

    @property
    def others(self) -> str:
        return "source_b"

    @property
    def outcome_kind(self) -> How:
        return self.job.outcome_kind  # its join.how

    def source_reads(self, reads: Mapping[str, tuple[int, int]]) -> str | None:
        """None: files_read_a and files_read_b are A's and B's own."""
        return None

    def read_ranges(self, first: int, last: int) -> dict[str, tuple[int, int]]:
        """A in [s - mw, e] and B in [s - lb - mw, e] (A from further back when B waits: `open_read_bounds`)."""
        bounds = open_read_bounds(first, last, *self.reach)
        return {"source_a": (bounds.a_start, bounds.a_end), "source_b": (bounds.b_start, bounds.b_end)}

    def join_conds(self) -> tuple[str | None, ...]:
        return (self.job.join.join_cond,)

    def key_columns(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        keys = tuple(self.job.join.join_cols)
        return (("source_a", keys), ("source_b", keys)) if keys else ()

    def remembered(self) -> dict[str, object]:
        job, join, target = self.job, self.job.join, self.job.target
        asof = {f"join.{name}": getattr(join, name) for name in ("asof_strategy", "asof_col", "asof_col_b")}
        return {
            "start_date": job.start_date.isoformat(),
            "source_a.where": job.source_a.where,
            "source_b.where": dict(job.sources)["source_b"].where,
            "join.how": join.how,
            "join.join_cols": list(join.join_cols),
            "join.join_cond": join.join_cond,
            "join.inc_col": join.inc_col,
            "join.time_uom": join.time_uom,
            "join.look_back_time": join.look_back_time,
            "join.max_waiting_time": join.max_waiting_time,
            "join.include_waiting": join.include_waiting,
            "join.enforce_sliding_join_window": join.enforce_sliding_join_window,
            "target.keys": list(target.keys),
            "target.b_keys": list(target.b_keys),
            **(asof if join.how == "asof" else {}),
        }

    def _on(self) -> str:
        join = self.job.join
        return ", ".join(join.join_cols) or str(join.join_cond)

    def summary(self) -> list[tuple[str, str]]:
        join = self.job.join
        return [
            ("join", f"{join.how} on {self._on()}"),
            ("look back / wait", f"{join.look_back_time} / {join.max_waiting_time} {join.time_uom}(s)"),
        ]

    def described(self) -> list[tuple[str, str]]:
        join, sources = self.job.join, dict(self.job.sources)
        return [
            (
                "sources",
                f"{sources['source_a'].label} (A), {sources['source_b'].label} (B): join {join.how} on {self._on()}, "
                f"{join.inc_col} present, types compatible",
            )
        ]

    def plan(self, schemas: Mapping[str, T.StructType]) -> JoinPlan:
        """`plan_join` on A's and B's schemas (pyspark is imported here, not by the commands that need no Spark)."""
        from deltainc.pipeline.job.kinds.two_source_join import plan_two_source

        return plan_two_source(self.job, schemas)
