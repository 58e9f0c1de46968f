"""A job's history as the report reads it: every run-log row of the job, where it stands now and the target's layout,
through the Delta logs with delta-rs (no JVM), and the rows chosen by `--since` and `--last`.

A report only reads; what it cannot read from the logs (a state folder given by a URL delta-rs does not reach)
is an error naming it, not a reason to start Spark.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from deltainc.errors import ConfigError, DeltaincError
from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.delta_log_stats import latest_in_both, source_location
from deltainc.pipeline.delta.snapshot import log_else, log_required, look
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.state import JobStatus, describe, read_runs_from_log, read_state_from_log, state_paths
from deltainc.pipeline.state.job_status import utc
from deltainc.report.series import Row
from deltainc.settings import Settings
from deltainc.storage import is_s3

__all__ = ["History", "NoRuns", "read_history", "chosen", "layout_text"]

ALL_RUNS = 10_000_000


class NoRuns(DeltaincError):
    """The job never ran: there is nothing to report, which is no error (the command says so and exits 0)."""


@dataclass(frozen=True)
class History:
    """The job's run-log rows, oldest first (started_at aware UTC), and its status as `status` reads it."""

    rows: tuple[Row, ...]
    status: JobStatus


def read_history(job: JobConfig, settings: Settings) -> History:
    """Every run-log row of `job` and its status, from the Delta logs; ConfigError naming `state_dir` when they
    cannot be read. The run log is scanned twice (the state's few columns, then every row), not three times as
    `status_from_log` and a read of all runs would."""
    root = job.state_path(settings.state_dir)
    try:
        with log_required(f"state_dir: the run log of {job.name} cannot be read"):
            if ("://" in root or root.startswith("file:")) and not is_s3(root):
                raise LogUnreadable(f"the state folder is not a local path or in S3 ({root})")
            paths = state_paths(root)
            state = read_state_from_log(paths, job.name)
            newest_first = read_runs_from_log(paths, job.name, ALL_RUNS)
    except OSError as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]  # delta-rs may add a backtrace
        raise ConfigError(f"state_dir: the run log of {job.name} cannot be read: {first}") from exc
    # The header says why when the sources' logs cannot answer; the history is still the run log's.
    latest, problem = log_else("the sources' latest RecDate", lambda: (latest_in_both(job), None), _unanswered)
    status = describe(job, state, latest, newest_first[:1], settings.lock_expiry_seconds, problem, "delta_log")
    for row in newest_first:  # pyspark's naive local time made explicit, as status shows it
        row["started_at"] = utc(row.get("started_at"))
    return History(tuple(reversed(newest_first)), status)


def _started(row: Row) -> dt.datetime | None:
    value = row.get("started_at")
    return value if isinstance(value, dt.datetime) else None


def chosen(rows: Sequence[Row], job: str, since: dt.date | None, last: int | None) -> tuple[Row, ...]:
    """The rows a report shows: those started on or after `since` (a UTC date), then the `last` of them. NoRuns
    when the job never ran; ConfigError naming --since when no run started since then.

    >>> chosen(rows, "trx", dt.date(2025, 3, 1), 30)  # doctest: +SKIP
    """
    if not rows:
        raise NoRuns(f"{job}: no runs yet: nothing to report (run the job first: deltainc run {job})")
    kept = list(rows)
    if since is not None:
        kept = [r for r in kept if (s := _started(r)) is not None and s.date() >= since]
        if not kept:
            newest = max((s for r in rows if (s := _started(r)) is not None), default=None)
            when = "none" if newest is None else newest.date().isoformat()
            raise ConfigError(f"--since {since.isoformat()}: {job} has no run since then (its last run started {when})")
    if last is not None:
        kept = kept[-last:]
    return tuple(kept)


def _unanswered(why: Exception) -> tuple[int | None, str | None]:
    """No latest RecDate, and why (the page's header shows it)."""
    return None, str(why)


def layout_text(job: JobConfig) -> str:
    """The header's 'partitioned by IsFinal (the target's Delta log)', 'not partitioned (...)', or why it is unknown:
    read from the target's log, since a target created by an older version keeps its own layout whatever the job
    file's `target.partition_by` (or its default for the job's unit) now says."""

    def from_log() -> str:
        columns = look(source_location(job.target, "target")).partition_columns
        shown = f"partitioned by {', '.join(columns)}" if columns else "not partitioned"
        return f"{shown} (the target's Delta log)"

    def unknown(why: Exception) -> str:
        first = (str(why).strip().splitlines() or [type(why).__name__])[0]
        return f"unknown: the target's Delta log cannot be read ({first})"

    return log_else("the target's layout", from_log, unknown)
