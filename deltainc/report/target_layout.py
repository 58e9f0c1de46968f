"""The target's layout as its Delta log says it, for the report's header (delta-rs, no JVM).

The job file's `target.partition_by` is what a new target is created with, and unset it means a default that
depends on the job's unit (`IsFinal` alone for an hour job); a target created by an older version keeps its
own layout. So the header reads the partition columns from the target's log, and says so when it cannot.
"""

from __future__ import annotations

from deltainc.pipeline.delta.delta_log_stats import source_location
from deltainc.pipeline.delta.snapshot import log_else, look
from deltainc.pipeline.job.job_config import JobConfig

__all__ = ["layout_text"]


def layout_text(job: JobConfig) -> str:
    """'partitioned by IsFinal (the target's Delta log)', 'not partitioned (...)', or why it is unknown.

    >>> layout_text(load_job("conf/jobs/trx_hourly.toml"))  # doctest: +SKIP
    "partitioned by IsFinal (the target's Delta log)"
    """

    def from_log() -> str:
        columns = look(source_location(job.target, "target")).partition_columns
        shown = f"partitioned by {', '.join(columns)}" if columns else "not partitioned"
        return f"{shown} (the target's Delta log)"

    def unknown(why: Exception) -> str:
        first = (str(why).strip().splitlines() or [type(why).__name__])[0]
        return f"unknown: the target's Delta log cannot be read ({first})"

    return log_else("the target's layout", from_log, unknown)
