"""`deltainc migrate JOB`: bring a job an earlier version built up to date: its target into the current layout,
which holds its open rows apart (`IsFinal`, docs/design.md#the-two-slices-and-the-forward-write), in one commit;
and its too-late rows (`target.late_rows`) onto the current rule, in one commit when they differ.

A target keeps the layout it was created with, and works in it: its forward writes find the open rows by
JoinType and delete them with deletion vectors. Migrating makes every later forward write move whole files.
The rows do not change (the new column is derived from JoinType), so the watermark and the run log stay as they
are; the commits are made under the job's lock and record `"command": "migrate"` in their userMetadata.

An earlier release counted as too late only the B rows of A rows that had timed out; the current rule also
counts a B row arriving after the window of an A row that other B rows matched (a second parcel,
docs/design.md#the-b-side-and-too-late-rows). The windows the earlier release ran keep their rows until run
again. Recomputing them needs no rerun: the target holds every final A row, so one search over [start_date,
watermark] gives the rows a `rerun --start start_date` would write, and those replace the table's rows of those
days in one commit when they differ (so a second migrate writes nothing).

An earlier release created every target and too-late rows' table with deletion vectors, a Delta reader feature that
delta-rs' pyarrow path (pandas, polars' and DuckDB's readers built on it) refuses, although a target that holds its
open rows apart never makes one. Migrating drops the feature from such a table (unless the job asks for deletion
vectors: `[target] deletion_vectors = true`) with Delta's `ALTER TABLE ... DROP FEATURE deletionVectors`. On Delta
4.0+ that is immediate and keeps the history: Delta purges any deletion vector by rewriting its files, commits
checkpoints that readers of the older protocol start from, downgrades the protocol (reader version 1) and adds the
writer feature `checkpointProtection` (writers need Delta 4.0+; `TRUNCATE HISTORY`, 24 hours later, would remove it).
`dry_run` says what migrate would do and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession

from deltainc.errors import ConfigError
from deltainc.join.output_layout import IS_FINAL
from deltainc.join.windows import Window
from deltainc.pipeline.controller.prepared_job import PreparedJob, open_job
from deltainc.pipeline.controller.too_late_search import late_rows_slice, replace_late_rows, search_a_rows
from deltainc.pipeline.delta.sources import read, table_exists, table_shape
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.state import locked
from deltainc.pipeline.target.forward_write import overwrite_target
from deltainc.pipeline.target.layout import DELETION_VECTORS_FEATURE, holds_open_rows_apart, lay_out, with_is_final
from deltainc.pipeline.target.reader_features import drop_deletion_vectors, dropped_message, unused_deletion_vectors
from deltainc.pipeline.target.too_late import too_late_rows
from deltainc.pipeline.target.write_mode import Destination
from deltainc.settings import Settings
from deltainc.time_units import to_index, unit_label

__all__ = [
    "Migration",
    "migrate",
    "LateRowsRecompute",
    "current_late_rows",
    "recompute_late_rows",
]


@dataclass(frozen=True)
class LateRowsRecompute:
    """What `migrate` did to `target.late_rows`: the days it recomputed (first and last, as labels), the rows the
    current rule added and removed there, and the commit (None: the table held those rows already)."""

    job: str
    table: str
    first: str
    last: str
    added: int
    removed: int
    version: int | None

    @property
    def message(self) -> str:
        """One line for `deltainc migrate`: what changed and what a rerun would have done."""
        days = f"{self.first} to {self.last}"
        if self.version is None:
            return f"{self.job}: the too-late rows ({self.table}) of {days} follow the current rule; nothing written"
        return (
            f"{self.job}: recomputed the too-late rows ({self.table}) of {days} under the current rule (a B row "
            f"arriving after its A row's sliding join window closed, whether that A row timed out or was matched): "
            f"{self.added} added, {self.removed} removed in version {self.version}, the rows "
            f"`deltainc rerun {self.job} --start {self.first}` would write; the run log keeps those windows' "
            "rows_too_late as they were counted"
        )


def current_late_rows(prepared: PreparedJob, window: Window) -> DataFrame | None:
    """The too-late rows of every B row dated in `window` under the current rule, one row per (A row, B row), as
    a window's search gives them: the A rows the target published up to the window's end (source_a where the
    target cannot answer). None when the job does not look for too-late rows or has no target yet.

    Parameters: `prepared`, the job; `window`, the units of the B rows. Example:
    `current_late_rows(prepared, Window(to_index(job.start_date, uom), watermark, uom))`.
    """
    job, search = prepared.job, prepared.join.late_search
    if search is None or not table_exists(prepared.spark, job.target):
        return None
    target = read(prepared.spark, job.target)
    a_rows = search_a_rows(prepared, search, target, None, window.start - search.horizon, window.end + 1)
    if a_rows is None:
        return None
    spec = replace(search.spec, start=window.start, end=window.end)
    identity, keys = prepared.identity, job.target
    return too_late_rows(a_rows, search.rows, spec, identity, keys.keys, keys.b_keys, search.horizon)


def recompute_late_rows(
    prepared: PreparedJob, watermark: int | None, metadata: dict[str, str]
) -> LateRowsRecompute | None:
    """Replace the rows of `target.late_rows` from the job's start_date to its `watermark` (a unit index) by
    those of the current rule, in one commit, when they differ; the caller holds the job's lock.

    Parameters: `prepared`, the job; `watermark`, its state's; `metadata`, the commit's userMetadata.
    Returns None when the job keeps no too-late rows, or has run no window yet. Example:
    `recompute_late_rows(prepared, state.watermark, {"job": "trx", "command": "migrate"}).added`.
    """
    job = prepared.job
    ref = job.target.late_rows_ref
    if ref is None or watermark is None:
        return None
    window = Window(to_index(job.start_date, prepared.uom), watermark, prepared.uom)
    rows = current_late_rows(prepared, window)
    if rows is None:
        return None
    rows = rows.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        spark = prepared.spark
        kept = spark.createDataFrame([], rows.schema)
        if table_exists(spark, ref):
            condition = late_rows_slice(prepared, window, rows.schema[prepared.rec].dataType)
            kept = read(spark, ref).where(condition).select(*rows.columns)
        added, removed = rows.exceptAll(kept).count(), kept.exceptAll(rows).count()
        version = replace_late_rows(prepared, window, rows, metadata) if added or removed else None
    finally:
        rows.unpersist()
    labels = [unit_label(unit, prepared.uom) for unit in (window.start, window.end)]
    return LateRowsRecompute(job.name, ref.label, labels[0], labels[1], added, removed, version)


@dataclass(frozen=True)
class Migration:
    """What `migrate` did (with `dry_run`: would do): the target's partition columns before and after, the
    commit's version (None when the target already held its open rows apart and nothing was written), what it
    did to the too-late rows (None when the job keeps none or has run no window), and the tables it dropped the
    unused deletion-vector feature from (their labels)."""

    job: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    version: int | None
    message: str
    late_rows: LateRowsRecompute | None = None
    dropped_features: tuple[str, ...] = ()
    dry_run: bool = False


def migrate(
    job: JobConfig | str | Path,
    spark: SparkSession | None = None,
    settings: Settings | None = None,
    dry_run: bool = False,
) -> Migration:
    """Rewrite the job's target into the layout that holds its open rows apart, and its too-late rows under the
    current rule, each in one commit under its lock, then drop the deletion-vector feature from the tables whose
    writes never use it (`reader_features.unused_deletion_vectors`); what is already current is not written again.

    Parameters: `job`, a job config or a job name or file; `spark` and `settings` as for `run`; `dry_run`: only
    say what would be done (no lock taken, nothing written).
    Example: `migrate("bank_trx").after == ("RecDate", "IsFinal")` for a day job.
    Raises ConfigError when the target does not exist, or when `target.partition_by` names a layout without
    `IsFinal` (the job asks for the old layout); DeltaincError when Delta refuses to drop the feature.
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
    unused = unused_deletion_vectors(spark, config.target, after)
    labels = tuple(ref.label for ref in unused)
    if dry_run:
        message = _dry_run_message(config.name, before, after, late_rows_kept, labels)
        return Migration(config.name, before, after, None, message, None, labels, dry_run=True)
    if before == after and not late_rows_kept and not unused:
        message = _layout_message(config.name, before, after, None)
        return Migration(config.name, before, before, None, f"{message}\n{dropped_message(config.name, [])}")
    version = None
    dropped: list[tuple[str, int]] = []
    with locked(prepared.paths, config.name, prepared.settings.lock_expiry_seconds, state) as lease:
        metadata = {"job": config.name, "run_id": lease.run_id, "command": "migrate"}
        if before != after:
            rows = with_is_final(read(spark, config.target))
            destination = Destination(spark, config.target, metadata)
            version = overwrite_target(destination, lay_out(rows, after, prepared.rec), after).version
        late = recompute_late_rows(prepared, lease.state.watermark, metadata)
        for ref in unused:  # after the rewrite: its overwrite left no deletion vector to purge
            dropped.append((ref.label, drop_deletion_vectors(spark, ref, metadata)))
    message = _layout_message(config.name, before, after, version)
    if late is not None:
        message = f"{message}\n{late.message}"
    message = f"{message}\n{dropped_message(config.name, dropped)}"
    return Migration(config.name, before, after, version, message, late, labels)


def _layout_message(job: str, before: tuple[str, ...], after: tuple[str, ...], version: int | None) -> str:
    """What migrate says of the target's layout: rewritten in `version`, or (None) already current."""
    if version is None:
        return f"{job}: the target already holds its open rows apart (partitioned by {', '.join(before)})"
    old, new = ", ".join(before) or "none", ", ".join(after)
    return f"{job}: rewrote the target from partitions ({old}) to ({new}) in version {version}"


def _dry_run_message(
    job: str, before: tuple[str, ...], after: tuple[str, ...], late_rows_kept: bool, unused: tuple[str, ...]
) -> str:
    """What a dry run says migrate would do, one line per step, and that nothing was written."""
    steps = []
    if before != after:
        steps.append(f"rewrite the target from partitions ({', '.join(before) or 'none'}) to ({', '.join(after)})")
    if late_rows_kept:
        steps.append(
            "recompute the too-late rows from start_date to the watermark under the current rule, replacing them "
            "where they differ"
        )
    steps += [f"drop the Delta reader feature {DELETION_VECTORS_FEATURE} from {label}" for label in unused]
    if not steps:
        return f"{job}: dry run: nothing to do (the target holds its open rows apart, no unused reader feature)"
    return "\n".join([f"{job}: dry run, nothing written; migrate would:", *(f"  - {step}" for step in steps)])
