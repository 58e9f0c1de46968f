"""The one decision of the commands that may need no JVM: answer from the Delta logs, else start Spark and say why.

`status`, `validate`, and `run` with nothing pending are answered from the Delta logs with delta-rs in milliseconds;
starting Spark costs seconds. Each such command asks here, with what the logs can say and what Spark would do
instead, so the choice is made in one place and its reason logged once (at info: `--verbose` shows it).
The Spark side is the caller's, passed in: nothing here imports what starts Spark.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from deltainc.pipeline.delta.snapshot import log_else

__all__ = ["SparkNeeded", "from_logs_else_spark"]

log = logging.getLogger("deltainc")

T = TypeVar("T")
_STARTS_SPARK = "%s starts Spark: the Delta logs cannot answer: %s"


class SparkNeeded(Exception):
    """The Delta logs answered, and the answer is work only Spark can do (windows pending, a target to write)."""


def from_logs_else_spark(job: str, command: str, from_logs: Callable[[], T], with_spark: Callable[[], T]) -> T:
    """`from_logs()` when the Delta logs answer; else `with_spark()`, after one log line saying why.

    `from_logs` raises LogUnreadable where the logs cannot answer exactly (a catalog table, a remote path, a
    `join_cond` only Spark resolves) and SparkNeeded where they show work for Spark; any other error (a job that
    does not fit its sources, changed settings) is the command's answer and goes to the caller, Spark unstarted.

    Args:
        job: the job's name, for the log line.
        command: the command, for the log line (`status`, `validate`, `run`, ...).
        from_logs: the answer from the Delta logs alone.
        with_spark: the answer with Spark, started by it.

    Example:
        ```python
        state = from_logs_else_spark(job.name, "status", lambda: status_from_log(job, settings, 5), with_spark)
        ```
    """
    try:
        return log_else(f"{job}: {command}", from_logs, lambda _why: with_spark(), _STARTS_SPARK)
    except SparkNeeded as exc:
        log.info("%s: %s starts Spark: %s", job, command, exc)
    return with_spark()
