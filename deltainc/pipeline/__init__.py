"""The pipeline layer: the controller (run, rerun, backfill, status) and one window's run (`window/`) above four
layers, each importing only those below it: `job/` (the job file, its join plan), `delta/` (Delta tables read
through their logs or Spark SQL, the sources), `state/` (run log, watermark, lock) and `target/` (the writers).
Data flows config -> controller -> engine -> writer (docs/design.md#where-the-code-is).

What this module exports is the layer's API, the one the command line calls."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deltainc.pipeline.controller import backfill, rerun, run
    from deltainc.pipeline.from_delta_logs.commands import from_logs_else_spark, unlock
    from deltainc.pipeline.from_delta_logs.status import status_from_log, status_with_problem
    from deltainc.pipeline.inspection import JobValidation, status, validate_from_logs, validate_job
    from deltainc.pipeline.job.job_config import JobConfig, load_job, resolve_job
    from deltainc.pipeline.plan import PipelineResult, WindowReport
    from deltainc.pipeline.prepared_job import prepare_job
    from deltainc.pipeline.state.job_status import JobStatus, status_document
    from deltainc.pipeline.verification import Verification, verify

__all__ = [
    "JobConfig",
    "JobStatus",
    "JobValidation",
    "PipelineResult",
    "Verification",
    "WindowReport",
    "backfill",
    "from_logs_else_spark",
    "load_job",
    "migrate",
    "prepare_job",
    "rerun",
    "resolve_job",
    "run",
    "status",
    "status_document",
    "status_from_log",
    "status_with_problem",
    "unlock",
    "validate_from_logs",
    "validate_job",
    "verify",
]

# Each name's module, imported on first use: `deltainc status` reads job files and Delta logs here without pyspark.
_HOMES = {
    "JobConfig": "deltainc.pipeline.job.job_config",
    **{name: "deltainc.pipeline.job.job_config" for name in ("load_job", "resolve_job")},
    **{name: "deltainc.pipeline.controller" for name in ("backfill", "rerun", "run")},
    "status": "deltainc.pipeline.inspection",
    **{name: "deltainc.pipeline.from_delta_logs.commands" for name in ("from_logs_else_spark", "unlock")},
    **{name: "deltainc.pipeline.state.job_status" for name in ("JobStatus", "status_document")},
    **{name: "deltainc.pipeline.from_delta_logs.status" for name in ("status_from_log", "status_with_problem")},
    "prepare_job": "deltainc.pipeline.prepared_job",
    "migrate": "deltainc.pipeline.migration",
    **{name: "deltainc.pipeline.plan" for name in ("PipelineResult", "WindowReport")},
    **{name: "deltainc.pipeline.inspection" for name in ("JobValidation", "validate_from_logs", "validate_job")},
    **{name: "deltainc.pipeline.verification" for name in ("Verification", "verify")},
}


def __getattr__(name: str) -> Any:
    """An exported name, imported from its module (`_HOMES`) on first use."""
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
