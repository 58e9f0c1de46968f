"""`status` without a JVM: the job's state and its sources' latest RecDate read from the Delta logs alone.

Starting Spark costs seconds; status only needs a lock row, a few run-log rows and the latest RecDate of
two sources, which a Delta log answers. Where it cannot answer exactly (a table given by catalog name, a
source with deletion vectors, a file without statistics) this raises LogUnreadable and the caller's Spark answers
(`commands.from_logs_else_spark`). When neither can (Spark or its metastore fails), `status_with_problem` shows what
the state tables still say.
"""

from __future__ import annotations

from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.snapshot import one_look
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.state import (
    JobStatus,
    describe,
    latest_in_sources,
    state_paths,
)
from deltainc.pipeline.state.from_delta_log import read_state_and_runs_from_log
from deltainc.pipeline.state.health import JobHealth, judge_health, runs_to_read
from deltainc.pipeline.state.job_status import UNREAD
from deltainc.pipeline.state.model import JobState
from deltainc.settings import Settings, is_s3

__all__ = ["state_from_log", "status_from_log", "status_with_problem", "health_from_log"]


def state_from_log(job: JobConfig, settings: Settings, runs: int) -> tuple[JobState, list[dict[str, object]]]:
    """The job's state and its latest `runs` run-log rows from the state tables' logs (LogUnreadable for a state
    folder delta-rs does not reach here)."""
    root = job.state_path(settings.state_dir)
    if ("://" in root or root.startswith("file:")) and not is_s3(root):
        raise LogUnreadable(f"the state folder is not a local path or in S3 ({root})")
    return read_state_and_runs_from_log(state_paths(root), job.name, runs)


@one_look()
def status_from_log(job: JobConfig, settings: Settings, runs: int) -> JobStatus:
    """The job's status as `pipeline.status` gives it, read from the Delta logs without Spark."""
    state, recent = state_from_log(job, settings, runs)
    latest: int | None = None
    problem = None
    try:
        latest = latest_in_sources(job, settings.state_dir)
    except FileNotFoundError as exc:
        problem = str(exc)
    return describe(job, state, latest, recent, settings.lock_expiry_seconds, problem, "delta_log", settings.state_dir)


def status_with_problem(job: JobConfig, settings: Settings, runs: int, problem: str) -> JobStatus:
    """The status of a job whose status could not be read as usual (`problem` says why: a source, Spark or its
    metastore failed): what the state tables' Delta logs still say (watermark, lock, recent runs), nothing pending,
    and the problem; so `status` of every job shows this one with its problem and goes on to the next.

    Args:
        job: the job whose status failed.
        settings: the global settings (its state_dir, the lock's expiry).
        runs: how many of the latest run-log rows to show.
        problem: what went wrong, one line.

    Example:
        ```python
        state = status_with_problem(job, settings, 5, "source_a: AnalysisException: ...")
        ```
    """
    try:
        state, recent = state_from_log(job, settings, runs)
    except Exception as exc:  # the state is unreadable too: say so rather than show a job that never ran
        return JobStatus(job.name, None, None, None, None, problem=f"{problem}; its state: {exc}", read_with=UNREAD)
    return describe(job, state, None, recent, settings.lock_expiry_seconds, problem, "delta_log", settings.state_dir)


def health_from_log(job: JobConfig, settings: Settings) -> JobHealth:
    """The job's `[checks]` judged on its status read from the Delta logs, without Spark (`deltainc check`).

    Example: ``health_from_log(load_job("trx"), load_settings()).level`` is `Level.PASS` for a healthy job.
    """
    return judge_health(job, status_from_log(job, settings, runs_to_read(job)))
