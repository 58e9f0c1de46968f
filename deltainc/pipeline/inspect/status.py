"""`status` read with Spark, writing nothing: where a job stands (`status_from_logs.py` answers the same
from the Delta logs without a JVM, what `deltainc status` tries first). The command line only renders it."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from deltainc.errors import ConfigError, SchemaError
from deltainc.pipeline.controller.prepared_job import job_session
from deltainc.pipeline.delta.snapshot import one_look
from deltainc.pipeline.job.job_config import JobConfig, load
from deltainc.pipeline.state import (
    JobStatus,
    describe,
    latest_in_sources,
    read_runs,
    read_state,
    state_paths,
)
from deltainc.settings import Settings

__all__ = ["status"]


@one_look()
def status(
    job: JobConfig | str | Path, spark: SparkSession | None = None, settings: Settings | None = None, runs: int = 5
) -> JobStatus:
    """Where the job stands, read with Spark: watermark, latest data in every source, all that is pending, the
    lock and recent runs. A missing source is reported as the status's `problem`, not raised: the rest shows.

    Args:
        job: a job, a job name or a job file's path (as for `run`).
        spark: the session to read the sources with; None = `get_spark()` from the settings.
        settings: the global settings; None = read them.
        runs: how many of the latest run-log rows to return.

    Returns:
        The job's `JobStatus`: `watermark`, `latest_available`, `pending` (None when up to date), `lock`,
            `runs`, `changed_settings` and `problem`.

    Example:
        ```python
        from deltainc import status

        print(status("bank_trx").pending)  # None when nothing is pending
        ```
    """
    job, settings = load(job, settings)
    spark = job_session(spark, settings, job.on_s3)
    paths = state_paths(job.state_path(settings.state_dir))
    state = read_state(paths, job.name)
    recent = read_runs(paths, job.name, runs)
    latest: int | None = None
    problem = None

    try:
        latest = latest_in_sources(job, settings.state_dir, spark)
    except (ConfigError, SchemaError) as exc:
        problem = str(exc)
    return describe(job, state, latest, recent, settings.lock_expiry_seconds, problem, state_dir=settings.state_dir)
