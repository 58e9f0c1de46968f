"""A job checked against its sources' schemas read from their Delta logs, before Spark starts.

A missing source, a missing or mistyped column, an hour job on a DATE column: Spark would say the same after
its start (half a minute on a busy machine); the logs say it in milliseconds. The checks are `plan_join`'s (a
feature job's: `check_feature_job`'s), the ones `prepare_job` runs again once Spark is up. A source the logs
cannot describe (a catalog table, a remote path, a table delta-rs cannot read) is left to Spark, and so is
resolving a `join_cond` (of the join or of a feature source): both paths run every check on the schemas before
it, so the logs refuse a job only where Spark would, with the same message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyspark.sql import types as T

from deltainc.errors import ConfigError
from deltainc.pipeline.delta.delta_log import LogUnreadable, open_table, reading
from deltainc.pipeline.delta.delta_log_stats import source_location
from deltainc.pipeline.job.feature_plan import check_feature_job, feature_identity, feature_sources
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.join_plan import Identity, plan_join
from deltainc.pipeline.job.table_refs import TableRef

if TYPE_CHECKING:
    from deltainc.join.join_spec import JoinSpec

__all__ = ["CheckedJob", "log_schema", "source_schema", "check_from_logs"]


@dataclass(frozen=True)
class CheckedJob:
    """A job whose join fits its sources' schemas as their Delta logs give them."""

    schema_a: T.StructType
    schema_b: T.StructType | None  # None for a feature job, whose sources are `features`
    spec: JoinSpec | None  # the two-source join; None for a feature job
    identity: Identity
    features: dict[str, T.StructType] = field(default_factory=dict)  # a feature job's sources' schemas, by role


def log_schema(location: str) -> T.StructType:
    """The schema of the local Delta table at `location`, as Spark would read it (its log's schema string is
    Spark's StructType JSON); LogUnreadable when there is no table or delta-rs cannot read it."""
    table = open_table(location)
    if table is None:
        raise LogUnreadable(f"no Delta table at {location}")
    with reading(location):
        text = table.schema().to_json()
    try:
        return T.StructType.fromJson(json.loads(text))
    except (ValueError, KeyError) as exc:  # a type this pyspark does not know: Spark reads the table itself
        raise LogUnreadable(f"{location}: pyspark cannot parse the schema in the log: {exc}") from exc


def source_schema(ref: TableRef, role: str) -> T.StructType:
    """A source's schema from its Delta log: ConfigError naming the role when no table is at its path,
    LogUnreadable when the log cannot say (a catalog table, a remote path)."""
    try:
        return log_schema(source_location(ref, role))
    except FileNotFoundError:
        raise ConfigError(f"{role}: no Delta table at {ref.label}") from None


def check_from_logs(job: JobConfig) -> CheckedJob:
    """The job checked against its sources' logs (raises ConfigError or SchemaError naming the setting, as
    `prepare_job` would); LogUnreadable when a source's log cannot tell, so Spark checks it."""
    # In the order prepare_job reads them, so that a missing source is named as it would name it.
    schemas = {role: source_schema(ref, role) for role, ref in job.sources}
    schema_a = schemas.pop("source_a")
    if job.features:
        check_feature_job(job, schema_a, feature_sources(job, schemas))
        return CheckedJob(schema_a, None, None, feature_identity(job), schemas)
    spec, identity = plan_join(job, schema_a, schemas["source_b"])
    return CheckedJob(schema_a, schemas["source_b"], spec, identity)
