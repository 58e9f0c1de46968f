"""A feature job as a kind of job (`job_kind.JobKind`): one spine (source_a) joined with several feature sources,
each by its own `[[features]]` entry (docs/concepts/features.md).

What it says from the job file alone needs no pyspark; its check against the sources' schemas is
`check_feature_job`'s, and the plan it gives (`feature_job_join`) joins a window with `join_features`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds.job_kind import JoinPlan, SpineReach

if TYPE_CHECKING:
    from pyspark.sql import types as T

    from deltainc.join.options import How

__all__ = ["FeatureJob"]


@dataclass(frozen=True)
class FeatureJob:
    """A job with `[[features]]`: a spine row is final once it is final for every feature source."""

    job: JobConfig

    @property
    def reach(self) -> SpineReach:
        """A spine row can change until the longest max_waiting_time has passed; no source's rows wait for it."""
        return SpineReach(0, max(f.max_waiting_time for f in self.job.features), False)

    @property
    def others(self) -> str:
        return "the feature sources"

    @property
    def outcome_kind(self) -> How:
        """An asof job's: matched, waiting, timed out, provisional."""
        return "asof"

    def source_reads(self, reads: Mapping[str, tuple[int, int]]) -> str | None:
        """Each feature source's files and bytes, by role: files_read_b sums them."""
        return json.dumps({role: {"files": files, "bytes": size} for role, (files, size) in reads.items()
                           if role != "source_a"})  # fmt: skip

    def read_ranges(self, first: int, last: int) -> dict[str, tuple[int, int]]:
        """The spine in [s - max mw, e] and each source in that range widened by its own look_back_time."""
        spine_first = first - self.reach.wait
        ranges = {"source_a": (spine_first, last)}
        ranges.update({f.role: (spine_first - f.look_back_time, last) for f in self.job.features})
        return ranges

    def join_conds(self) -> tuple[str | None, ...]:
        return tuple(f.join_cond for f in self.job.features)

    def key_columns(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        joined = [(f.role, tuple(f.join_cols)) for f in self.job.features if f.join_cols]
        spine_keys = tuple(dict.fromkeys(key for _, keys in joined for key in keys))
        return (("source_a", spine_keys), *joined) if joined else ()

    def remembered(self) -> dict[str, object]:
        """The spine's settings, the sources by name, and each source's join."""
        job = self.job
        spine: dict[str, object] = {
            "start_date": job.start_date.isoformat(),
            "source_a.where": job.source_a.where,
            "join.how": None,  # as a two-source job records it: a job turned into a feature job is a change
            "join.inc_col": job.join.inc_col,
            "join.time_uom": job.join.time_uom,
            "join.include_waiting": job.join.include_waiting,
            "target.keys": list(job.target.keys),
            "features": [f.name for f in job.features],
        }
        for feature in job.features:
            spine[feature.role] = feature.model_dump(
                mode="json", exclude={"path", "table", "name"}, exclude_defaults=False
            )
        return spine

    def summary(self) -> list[tuple[str, str]]:
        return [
            (
                f.role,
                f"{f.how} on {', '.join(f.join_cols) or str(f.join_cond)}; look back {f.look_back_time}, "
                f"wait {f.max_waiting_time}",
            )
            for f in self.job.features
        ]

    def described(self) -> list[tuple[str, str]]:
        job = self.job
        lines = [("spine", f"{job.source_a.label} (A): {job.join.inc_col} present")]
        lines += [
            (f.role, f"{f.label}: {f.how} on {', '.join(f.join_cols) or f.join_cond}, columns {f.out_prefix}*")
            for f in job.features
        ]
        return lines

    def plan(self, schemas: Mapping[str, T.StructType]) -> JoinPlan:
        """`check_feature_job` on the spine's and the sources' schemas (pyspark is imported here, not by the
        commands that need no Spark)."""
        from deltainc.pipeline.job.kinds.feature_job_join import plan_features

        return plan_features(self.job, schemas, self.read_ranges)
