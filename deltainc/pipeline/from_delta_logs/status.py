"""`status` without a JVM: the job's state and its sources' latest RecDate read from the Delta logs alone.

Starting Spark costs seconds; status only needs a lock row, a few run-log rows and the latest RecDate of
two sources, which a Delta log answers. Where it cannot answer exactly (a table given by catalog name, a
source with deletion vectors, a file without statistics) this raises LogUnreadable and the caller's Spark answers
(`answer.from_logs_else_spark`).
"""

from __future__ import annotations

from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.delta_log_stats import latest_unit_from_log, source_location
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.table_refs import TableRef
from deltainc.pipeline.state import JobStatus, describe, read_runs_from_log, read_state_from_log, state_paths
from deltainc.settings import Settings
from deltainc.storage import is_s3

__all__ = ["latest_in_both", "status_from_log"]


def _latest(ref: TableRef, role: str, job: JobConfig) -> int | None:
    """The latest unit of a source given by a local path; raises LogUnreadable for anything else."""
    return latest_unit_from_log(source_location(ref, role), job.join.inc_col, job.join.time_uom)


def latest_in_both(job: JobConfig) -> int | None:
    """The latest unit present in every source, from their Delta logs (LogUnreadable, FileNotFoundError)."""
    units = [_latest(ref, role, job) for role, ref in job.sources]
    return None if None in units else min(u for u in units if u is not None)


def status_from_log(job: JobConfig, settings: Settings, runs: int) -> JobStatus:
    """The job's status as `pipeline.status` gives it, read from the Delta logs without Spark."""
    root = job.state_path(settings.state_dir)
    if ("://" in root or root.startswith("file:")) and not is_s3(root):
        raise LogUnreadable(f"the state folder is not a local path or in S3 ({root})")
    paths = state_paths(root)
    state = read_state_from_log(paths, job.name)
    recent = read_runs_from_log(paths, job.name, runs)
    latest: int | None = None
    problem = None
    try:
        latest = latest_in_both(job)
    except FileNotFoundError as exc:
        problem = str(exc)
    return describe(job, state, latest, recent, settings.lock_expiry_seconds, problem, read_with="delta_log")
