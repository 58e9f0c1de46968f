"""`deltainc migrate JOB`: rewrite a target created by an earlier version into the current layout, which holds
its open rows apart (`IsFinal`, docs/design.md#the-two-slices-and-the-forward-write), in one commit.

A target keeps the layout it was created with, and works in it: its forward writes find the open rows by
JoinType and delete them with deletion vectors. Migrating makes every later forward write move whole files.
The rows do not change (the new column is derived from JoinType), so the watermark and the run log stay as they
are; the commit is made under the job's lock and records `"command": "migrate"` in its userMetadata.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import SparkSession

from deltainc.errors import ConfigError
from deltainc.join.output_layout import IS_FINAL
from deltainc.pipeline.delta.sources import table_shape
from deltainc.pipeline.delta.sql import read
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.prepared_job import open_job
from deltainc.pipeline.state import locked
from deltainc.pipeline.target.layout import holds_open_rows_apart, lay_out, with_is_final
from deltainc.pipeline.target.slices import Destination, overwrite_target
from deltainc.settings import Settings

__all__ = ["Migration", "migrate"]


@dataclass(frozen=True)
class Migration:
    """What `migrate` did: the target's partition columns before and after, and the commit's version (None when
    the target already held its open rows apart and nothing was written)."""

    job: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    version: int | None
    message: str


def migrate(
    job: JobConfig | str | Path, spark: SparkSession | None = None, settings: Settings | None = None
) -> Migration:
    """Rewrite the job's target into the layout that holds its open rows apart, in one commit under its lock.

    Parameters: `job`, a job config or a job name or file; `spark` and `settings` as for `run`.
    Example: `migrate("bank_trx").after == ("RecDate", "IsFinal")` for a day job.
    Raises ConfigError when the target does not exist, or when `target.partition_by` names a layout without
    `IsFinal` (the job asks for the old layout).
    """
    prepared, state = open_job(job, spark, settings, "migrate")
    config, spark = prepared.job, prepared.spark
    before = table_shape(spark, config.target, "target").partition_by
    if holds_open_rows_apart(before):
        message = f"{config.name}: the target already holds its open rows apart (partitioned by {', '.join(before)})"
        return Migration(config.name, before, before, None, message)
    after = prepared.partition_by
    if not holds_open_rows_apart(after):
        raise ConfigError(
            f"target.partition_by: {list(after)} has no {IS_FINAL!r}, so the migrated target would keep its open rows "
            f"with the final ones; add {IS_FINAL!r} to target.partition_by, or drop the setting for the default layout"
        )
    with locked(prepared.paths, config.name, prepared.settings.lock_expiry_seconds, state) as lease:
        rows = with_is_final(read(spark, config.target))
        metadata = {"job": config.name, "run_id": lease.run_id, "command": "migrate"}
        commit = overwrite_target(
            Destination(spark, config.target, metadata), lay_out(rows, after, prepared.rec), after
        )
    message = (
        f"{config.name}: rewrote the target from partitions ({', '.join(before) or 'none'}) to "
        f"({', '.join(after)}) in version {commit.version}"
    )
    return Migration(config.name, before, after, commit.version, message)
