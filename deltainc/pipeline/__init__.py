"""The pipeline: folders by command (`controller/`: run, rerun, backfill, migrate; `inspect/`: status, validate,
verify; `explain/`; `profile/`) above four layers, each importing only those below it: `job/` (the job file, its
join plan), `delta/` (Delta tables read through their logs or Spark SQL, the sources), `state/` (run log,
watermark, lock) and `target/` (the writers). Data flows config -> controller -> engine -> writer
(docs/design.md#where-the-code-is).

What this module exports is what the command line calls, and the command line calls the pipeline only through it.
Each name is imported from its home on first use (`deltainc.lazy_front`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from deltainc.lazy_front import lazy_names

if TYPE_CHECKING:
    from deltainc.pipeline.controller.before_spark import from_logs_else_spark, unlock
    from deltainc.pipeline.controller.commands import backfill, rerun, run
    from deltainc.pipeline.controller.failure_row import failed_window
    from deltainc.pipeline.controller.migrate import migrate
    from deltainc.pipeline.controller.plan import PipelineResult, WindowReport
    from deltainc.pipeline.explain.key import explain_key
    from deltainc.pipeline.explain.rules import history_line
    from deltainc.pipeline.inspect.status import status
    from deltainc.pipeline.inspect.status_from_logs import health_from_log, status_from_log, status_with_problem
    from deltainc.pipeline.inspect.validate import JobValidation, validate_from_logs, validate_job
    from deltainc.pipeline.inspect.verify import Verification, verify
    from deltainc.pipeline.job.job_config import JobConfig, TOMLDecodeError, load_job, resolve_job
    from deltainc.pipeline.job.order import run_order
    from deltainc.pipeline.profile.delays import format_profile, plot_profile, profile_job
    from deltainc.pipeline.state.downstream import downstream_reruns
    from deltainc.pipeline.state.health import JobHealth, Level
    from deltainc.pipeline.state.job_status import JobStatus, status_document

_HOMES = {
    **{
        name: "deltainc.pipeline.job.job_config" for name in ("JobConfig", "TOMLDecodeError", "load_job", "resolve_job")
    },
    "run_order": "deltainc.pipeline.job.order",
    **{name: "deltainc.pipeline.controller.commands" for name in ("backfill", "rerun", "run")},
    "migrate": "deltainc.pipeline.controller.migrate",
    **{name: "deltainc.pipeline.controller.before_spark" for name in ("from_logs_else_spark", "unlock")},
    **{name: "deltainc.pipeline.controller.plan" for name in ("PipelineResult", "WindowReport")},
    "failed_window": "deltainc.pipeline.controller.failure_row",
    "status": "deltainc.pipeline.inspect.status",
    **{
        name: "deltainc.pipeline.inspect.status_from_logs"
        for name in ("health_from_log", "status_from_log", "status_with_problem")
    },
    **{name: "deltainc.pipeline.inspect.validate" for name in ("JobValidation", "validate_from_logs", "validate_job")},
    **{name: "deltainc.pipeline.inspect.verify" for name in ("Verification", "verify")},
    "explain_key": "deltainc.pipeline.explain.key",
    "history_line": "deltainc.pipeline.explain.rules",
    **{name: "deltainc.pipeline.profile.delays" for name in ("format_profile", "plot_profile", "profile_job")},
    **{name: "deltainc.pipeline.state.job_status" for name in ("JobStatus", "status_document")},
    **{name: "deltainc.pipeline.state.health" for name in ("JobHealth", "Level")},
    "downstream_reruns": "deltainc.pipeline.state.downstream",
}

__all__ = [
    "JobConfig",
    "JobHealth",
    "JobStatus",
    "JobValidation",
    "Level",
    "PipelineResult",
    "TOMLDecodeError",
    "Verification",
    "WindowReport",
    "backfill",
    "downstream_reruns",
    "explain_key",
    "failed_window",
    "format_profile",
    "from_logs_else_spark",
    "health_from_log",
    "history_line",
    "load_job",
    "migrate",
    "plot_profile",
    "profile_job",
    "rerun",
    "resolve_job",
    "run",
    "run_order",
    "status",
    "status_document",
    "status_from_log",
    "status_with_problem",
    "unlock",
    "validate_from_logs",
    "validate_job",
    "verify",
]

__getattr__ = lazy_names(__name__, _HOMES)
