"""`deltainc migrate JOB`: bring a job an earlier version built up to date: its target into the current layout,
which holds its open rows apart (`IsFinal`, docs/design.md#the-two-slices-and-the-forward-write), in one commit;
and its too-late rows (`target.late_rows`) onto the current rule, in one commit when they differ
(`too_late_recompute`).

A target keeps the layout it was created with, and works in it: its forward writes find the open rows by
JoinType and delete them with deletion vectors. Migrating makes every later forward write move whole files.
The rows do not change (the new column is derived from JoinType), so the watermark and the run log stay as they
are; the commits are made under the job's lock and record `"command": "migrate"` in their userMetadata.
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
from deltainc.pipeline.target.forward_write import overwrite_target
from deltainc.pipeline.target.layout import holds_open_rows_apart, lay_out, with_is_final
from deltainc.pipeline.target.write_mode import Destination
from deltainc.pipeline.too_late_recompute import LateRowsRecompute, recompute_late_rows
from deltainc.settings import Settings

__all__ = ["Migration", "migrate"]


@dataclass(frozen=True)
class Migration:
    """What `migrate` did: the target's partition columns before and after, the commit's version (None when
    the target already held its open rows apart and nothing was written), and what it did to the too-late rows
    (None when the job keeps none or has run no window)."""

    job: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    version: int | None
    message: str
    late_rows: LateRowsRecompute | None = None


def migrate(
    job: JobConfig | str | Path, spark: SparkSession | None = None, settings: Settings | None = None
) -> Migration:
    """Rewrite the job's target into the layout that holds its open rows apart, and its too-late rows under the
    current rule, each in one commit under its lock; what is already current is not written again.

    Parameters: `job`, a job config or a job name or file; `spark` and `settings` as for `run`.
    Example: `migrate("bank_trx").after == ("RecDate", "IsFinal")` for a day job.
    Raises ConfigError when the target does not exist, or when `target.partition_by` names a layout without
    `IsFinal` (the job asks for the old layout).
    """
    prepared, state = open_job(job, spark, settings, "migrate")
    config, spark = prepared.job, prepared.spark
    before = table_shape(spark, config.target, "target").partition_by
    after = before if holds_open_rows_apart(before) else prepared.partition_by
    if not holds_open_rows_apart(after):
        raise ConfigError(
            f"target.partition_by: {list(after)} has no {IS_FINAL!r}, so the migrated target would keep its open rows "
            f"with the final ones; add {IS_FINAL!r} to target.partition_by, or drop the setting for the default layout"
        )
    late_rows_kept = config.target.late_rows_ref is not None and prepared.join.late_search is not None
    if before == after and not late_rows_kept:
        return Migration(config.name, before, before, None, _layout_message(config.name, before, after, None))
    version = None
    with locked(prepared.paths, config.name, prepared.settings.lock_expiry_seconds, state) as lease:
        metadata = {"job": config.name, "run_id": lease.run_id, "command": "migrate"}
        if before != after:
            rows = with_is_final(read(spark, config.target))
            destination = Destination(spark, config.target, metadata)
            version = overwrite_target(destination, lay_out(rows, after, prepared.rec), after).version
        late = recompute_late_rows(prepared, lease.state.watermark, metadata)
    message = _layout_message(config.name, before, after, version)
    if late is not None:
        message = f"{message}\n{late.message}"
    return Migration(config.name, before, after, version, message, late)


def _layout_message(job: str, before: tuple[str, ...], after: tuple[str, ...], version: int | None) -> str:
    """What migrate says of the target's layout: rewritten in `version`, or (None) already current."""
    if version is None:
        return f"{job}: the target already holds its open rows apart (partitioned by {', '.join(before)})"
    old, new = ", ".join(before) or "none", ", ".join(after)
    return f"{job}: rewrote the target from partitions ({old}) to ({new}) in version {version}"
