"""A job checked against its sources' schemas read from their Delta logs, before Spark starts.

A missing source, a missing or mistyped column, an hour job on a DATE column: Spark would say the same after
its start (half a minute on a busy machine); the logs say it in milliseconds. The checks are `plan_join`'s (a
feature job's: `check_feature_job`'s, as the job's kind makes them), and `prepare_job` takes the plan on once Spark
is up rather than checking again. A source the logs
cannot describe (a catalog table, a remote path, a table delta-rs cannot read) is left to Spark, and so is
resolving a `join_cond` (of the join or of a feature source): both paths run every check on the schemas before
it, so the logs refuse a job only where Spark would, with the same message.
"""

from __future__ import annotations

from pyspark.sql import types as T

from deltainc.errors import ConfigError
from deltainc.pipeline.delta.delta_log_stats import source_location
from deltainc.pipeline.delta.sources import shape_from_log
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds import JoinPlan, kind_of
from deltainc.pipeline.job.sections import TableRef

__all__ = ["source_schema", "check_from_logs"]


def source_schema(ref: TableRef, role: str) -> T.StructType:
    """A source's schema from its Delta log: ConfigError naming the role when no table is at its path,
    LogUnreadable when the log cannot say (a catalog table, a remote path)."""
    try:
        return shape_from_log(source_location(ref, role)).schema
    except FileNotFoundError:
        raise ConfigError(f"{role}: no Delta table at {ref.label}") from None


def check_from_logs(job: JobConfig) -> JoinPlan:
    """The job checked by its kind against its sources' schemas in their logs (raises ConfigError or SchemaError
    naming the setting, as `prepare_job` would), for `prepare_job` to take on once Spark is up; LogUnreadable when a
    source's log cannot tell, so Spark checks it."""
    # In the order prepare_job reads them, so that a missing source is named as it would name it.
    schemas = {role: source_schema(ref, role) for role, ref in job.sources}
    return kind_of(job).plan(schemas)
