"""The pipeline layer: the controller (run, rerun, backfill, status) and one window's run (`window/`) above four
layers, each importing only those below it: `job/` (the job file, its join plan), `delta/` (Delta tables read
through their logs or Spark SQL, the sources), `state/` (run log, watermark, lock) and `target/` (the writers).
Data flows config -> controller -> engine -> writer (docs/design.md#where-the-code-is).

What this module exports is the layer's API, the one the command line calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from deltainc.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from deltainc.pipeline.controller import backfill, rerun, run
    from deltainc.pipeline.from_delta_logs.commands import from_logs_else_spark, unlock
    from deltainc.pipeline.from_delta_logs.status import status_from_log, status_with_problem
    from deltainc.pipeline.inspection import JobValidation, status, validate_from_logs, validate_job
    from deltainc.pipeline.job.job_config import JobConfig
    from deltainc.pipeline.job.job_file import load_job, resolve_job
    from deltainc.pipeline.prepared_job import prepare_job
    from deltainc.pipeline.results import PipelineResult, WindowReport
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

# Imported on first use: `deltainc status` reads job files and Delta logs here without pyspark.
__getattr__ = lazy_exports(
    "deltainc.pipeline",
    {
        "JobConfig": "deltainc.pipeline.job.job_config",
        **{name: "deltainc.pipeline.job.job_file" for name in ("load_job", "resolve_job")},
        **{name: "deltainc.pipeline.controller" for name in ("backfill", "rerun", "run")},
        **{name: "deltainc.pipeline.from_delta_logs.commands" for name in ("from_logs_else_spark", "unlock")},
        **{name: "deltainc.pipeline.state.job_status" for name in ("JobStatus", "status_document")},
        **{name: "deltainc.pipeline.from_delta_logs.status" for name in ("status_from_log", "status_with_problem")},
        "prepare_job": "deltainc.pipeline.prepared_job",
        "migrate": "deltainc.pipeline.migration",
        **{name: "deltainc.pipeline.results" for name in ("PipelineResult", "WindowReport")},
        **{
            name: "deltainc.pipeline.inspection"
            for name in ("JobValidation", "status", "validate_from_logs", "validate_job")
        },
        **{name: "deltainc.pipeline.verification" for name in ("Verification", "verify")},
    },
)
