"""The kinds of job behind one interface (`JobKind`): a two-source job and a feature job. `kind_of`
(`two_source.py`) is the one place that asks which kind a job file describes; everything past it asks the kind."""

from __future__ import annotations

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

__all__ = [
    "JobKind",
    "JoinPlan",
    "PreparedJoin",
    "LateSearch",
    "SourceScan",
    "SpineReach",
    "WindowJoin",
    "WindowRows",
    "whole_tables",
]
