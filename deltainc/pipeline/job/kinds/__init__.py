"""The kinds of job behind one interface (`JobKind`): a two-source job and a feature job. `kind_of` is the one
place that asks which kind a job file describes; everything past it asks the kind."""

from __future__ import annotations

from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds.feature_job import FeatureJob
from deltainc.pipeline.job.kinds.job_kind import (
    JobKind,
    JoinPlan,
    LateSearch,
    PreparedJoin,
    SourceScan,
    SpineReach,
    WindowJoin,
    WindowRows,
    whole_tables,
)
from deltainc.pipeline.job.kinds.two_source import TwoSourceJob

__all__ = [
    "JobKind",
    "JoinPlan",
    "PreparedJoin",
    "LateSearch",
    "SourceScan",
    "SpineReach",
    "WindowJoin",
    "WindowRows",
    "kind_of",
    "whole_tables",
]


def kind_of(job: JobConfig) -> JobKind:
    """The job's kind: a feature job when it lists `[[features]]`, else a two-source job (`JobConfig` accepts one
    form or the other).

    Example:
        ```python
        kind = kind_of(load_job("conf/jobs/bank_trx.toml"))
        kind.read_ranges(first, last)  # {'source_a': (...), 'source_b': (...)}
        ```
    """
    return FeatureJob(job) if job.features else TwoSourceJob(job)
