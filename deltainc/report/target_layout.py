"""The target's layout as its Delta log says it, for the report's header (delta-rs, no JVM).

The job file's `target.partition_by` is what a new target is created with, and unset it means a default that
depends on the job's unit (`IsFinal` alone for an hour job); a target created by an older version keeps its
own layout. So the header reads the partition columns from the target's log, and says so when it cannot.
"""

from __future__ import annotations

from deltainc.pipeline.delta.delta_log import LogUnreadable, open_table, reading
from deltainc.pipeline.delta.delta_log_stats import source_location
from deltainc.pipeline.job.job_config import JobConfig

__all__ = ["layout_text"]


def layout_text(job: JobConfig) -> str:
    """'partitioned by IsFinal (the target's Delta log)', 'not partitioned (...)', or why it is unknown.

    >>> layout_text(load_job("conf/jobs/trx_hourly.toml"))  # doctest: +SKIP
    "partitioned by IsFinal (the target's Delta log)"
    """
    try:
        location = source_location(job.target, "target")
        table = open_table(location)
        if table is None:
            raise FileNotFoundError(f"no Delta table at {job.target.label}")
        with reading(location):
            columns = list(table.metadata().partition_columns)
    except (LogUnreadable, FileNotFoundError, OSError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return f"unknown: the target's Delta log cannot be read ({first})"
    shown = f"partitioned by {', '.join(columns)}" if columns else "not partitioned"
    return f"{shown} (the target's Delta log)"
