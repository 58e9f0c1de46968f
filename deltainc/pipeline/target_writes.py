"""The writes of one window (docs/design.md#the-two-slices-and-the-forward-write): its output reaches the target by
a forward write, the forward-only MERGE, a recompute or a rebuild, each in one commit (its too-late B rows:
`too_late_writes`).

Each write reads only the target's rows it may change, and says what it read and committed (`Written`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Literal

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from deltainc.join.output_layout import RESERVED_PREFIX
from deltainc.join.windows import Window, from_index, read_bounds
from deltainc.pipeline.delta.log_stats import files_in_units
from deltainc.pipeline.delta.log_tables import LogUnreadable, asking_spark
from deltainc.pipeline.delta.sources import ScanStats, read_table, scan_stats
from deltainc.pipeline.delta.sql import table_exists
from deltainc.pipeline.prepared_job import PreparedJob
from deltainc.pipeline.target.commit_metrics import NO_COMMIT, CommitResult
from deltainc.pipeline.target.layout import ensure_target, lay_out
from deltainc.pipeline.target.merge import ACTION, merge_window, plan_actions
from deltainc.pipeline.target.schema import new_columns
from deltainc.pipeline.target.slice_writer import (
    Destination,
    forward_slices,
    merge_slices,
    overwrite_target,
    replace_slices,
    replace_where,
    sql_literal,
)
from deltainc.spark_compat import is_connect

__all__ = ["WriteMode", "Written", "shaped", "fitted", "write_window"]

log = logging.getLogger("deltainc")
WriteMode = Literal["forward", "rerun", "recompute", "rebuild"]


@dataclass(frozen=True)
class Written:
    """What writing one window did to the target, and what of the target it read."""

    how: str
    commit: CommitResult
    read: ScanStats
    too_late: int = 0  # matches of timed-out A rows a re-run kept out (corrections = "keep")


Write = Callable[[PreparedJob, Window, DataFrame, dict[str, str]], Written]


def fitted(prepared: PreparedJob, output: DataFrame, scans: Mapping[str, DataFrame]) -> DataFrame:
    """The window's output checked against the target's columns before the join runs, from its schema alone: a
    dropped or retyped column is refused at once. A new source column the job does not add (schema_evolution
    "none") is refused only when the window's reads (`scans`, A's and B's) hold a value of it: a window from
    before the column appeared is written without it, so a job catching up runs to the day before the change."""
    spark, job, origins = prepared.spark, prepared.job, prepared.origins
    if not table_exists(spark, job.target):
        return output
    target = read_table(spark, job.target, "target").schema
    added = new_columns(target, output.schema, origins, job.target.label, "add_columns")
    if not added or job.target.schema_evolution == "add_columns":
        return output

    def read(column: str) -> bool:
        if column not in origins:
            return True
        role, source = origins[column]
        return bool(scans[role].where(F.col(f"`{source}`").isNotNull()).limit(1).count())

    unread = [column for column in added if not read(column)]
    new_columns(target, output.drop(*unread).schema, origins, job.target.label, "none")  # refuses what is read
    return output.drop(*unread)


def _target(prepared: PreparedJob, output: DataFrame, metadata: dict[str, str]) -> tuple[DataFrame, Destination]:
    """The target as it stands, and where the window's commit goes; the output is checked against the target's
    columns (target_schema), and the sources' new columns, where the job allows them, are added by the commit."""
    spark, job = prepared.spark, prepared.job
    target = read_table(spark, job.target, "target")
    added = new_columns(target.schema, output.schema, prepared.origins, job.target.label, job.target.schema_evolution)
    if added:
        log.warning("%s: adding the sources' new column(s) %s to the target %s", job.name, added, job.target.label)
    return target, Destination(spark, job.target, metadata, bool(added))


def _write_forward(prepared: PreparedJob, window: Window, output: DataFrame, metadata: dict[str, str]) -> Written:
    """A window right after the watermark: replace the target's two slices by the window's output."""
    target, to = _target(prepared, output, metadata)
    rec = prepared.rec
    slices = forward_slices(rec, from_index(window.start - 1, prepared.uom), target.schema[rec].dataType)
    read = _slices_read(prepared, window, target.where(slices.condition()))
    if prepared.job.target.forward_write == "merge":
        commit = merge_slices(to, output, prepared.identity.columns, slices)
    else:
        commit = replace_slices(to, output, slices)
    return Written(prepared.job.target.forward_write, commit, read)


def _slices_read(prepared: PreparedJob, window: Window, rows: DataFrame) -> ScanStats:
    """The target's files the slices from the watermark on span: from its Delta log when the target is a local
    table partitioned by the output RecDate (partition pruning keeps exactly those), else as Spark plans it."""
    ref = prepared.job.target
    if ref.path is not None and not is_connect(prepared.spark):
        try:
            rec = prepared.rec
            return ScanStats(*files_in_units(ref.path, rec, prepared.uom, window.start - 1, None))
        except LogUnreadable as exc:
            asking_spark("the target's files read", exc)
    return scan_stats(prepared.spark, rows)


def _write_forward_only(prepared: PreparedJob, window: Window, output: DataFrame, metadata: dict[str, str]) -> Written:
    """A re-run (or a job without the sliding join window): MERGE only what moves a target row forward."""
    target, to = _target(prepared, output, metadata)
    identity = prepared.identity
    bounds = read_bounds(window, *prepared.spine_reach)
    a_first, a_after = from_index(bounds.a_start, prepared.uom), from_index(bounds.a_end + 1, prepared.uom)
    a_rec = F.col(f"`{identity.a_rec}`")
    target_rows = target.where((a_rec >= F.lit(a_first)) & (a_rec < F.lit(a_after)))
    read = scan_stats(prepared.spark, target_rows)
    actions = plan_actions(output, target_rows, identity).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        planned = {row[ACTION]: int(row["count"]) for row in actions.groupBy(ACTION).count().collect()}
        ignored = planned.pop("ignore", 0)
        commit = merge_window(to, actions, identity, a_first, a_after) if planned else NO_COMMIT
    finally:
        actions.unpersist()
    return Written("forward_only_merge", commit, read, too_late=ignored)


def _write_recompute(prepared: PreparedJob, window: Window, output: DataFrame, metadata: dict[str, str]) -> Written:
    """A re-run that applies corrections: the window runs from --start to the watermark, and the target's rows
    from --start on are replaced by its output, so the target equals a reload (no commit when nothing changed).

    Rows before --start are final and cannot depend on the window; rows from --start on are exactly the
    window's output (window-size invariance), whatever the sources' corrections changed in between.
    """
    target, to = _target(prepared, output, metadata)
    rec = prepared.rec
    condition = f"`{rec}` >= {sql_literal(from_index(window.start, prepared.uom), target.schema[rec].dataType)}"
    # A column the sources added is NULL in the target's rows so far (compared as such).
    held = [F.col(f"`{c}`") if c in target.columns else F.lit(None).cast(f.dataType).alias(c) for c, f in
            ((f.name, f) for f in output.schema.fields)]  # fmt: skip
    current = target.where(condition).select(*held)
    read = scan_stats(prepared.spark, current)
    mark = f"{RESERVED_PREFIX}change"
    changes = (
        output.exceptAll(current)
        .withColumn(mark, F.lit("inserted"))
        .unionByName(current.exceptAll(output).withColumn(mark, F.lit("deleted")))
    )
    changed = {row[mark]: int(row["count"]) for row in changes.groupBy(mark).count().collect()}
    if not changed:
        return Written("recompute", NO_COMMIT, read)
    commit = replace_where(to, output, condition)
    exact = replace(commit, inserted=changed.get("inserted", 0), updated=0, deleted=changed.get("deleted", 0))
    return Written("recompute", exact, read)


def _write_rebuild(prepared: PreparedJob, window: Window, output: DataFrame, metadata: dict[str, str]) -> Written:
    """A rebuild (one window from start_date): the output replaces the whole target, columns included."""
    to = Destination(prepared.spark, prepared.job.target, metadata)
    return Written("rebuild", overwrite_target(to, output, prepared.partition_by), ScanStats(0, 0))


def _write_for(prepared: PreparedJob, mode: WriteMode) -> Write:
    """How a window's output reaches the target: a forward window replaces slices, which needs the sliding
    join window to be exact; any other forward or re-run window goes through the forward-only MERGE."""
    if mode == "rebuild":
        return _write_rebuild
    if mode == "recompute":
        return _write_recompute
    if mode == "forward" and prepared.job.join.enforce_sliding_join_window:
        return _write_forward
    return _write_forward_only


def shaped(prepared: PreparedJob, mode: WriteMode, output: DataFrame) -> DataFrame:
    """The window's output as its write wants it: laid out (`lay_out`) where its rows become the target's files,
    that is for every write but the forward-only MERGE."""
    if _write_for(prepared, mode) is _write_forward_only:
        return output
    return lay_out(output, prepared.partition_by, prepared.rec)


def write_window(
    prepared: PreparedJob, window: Window, mode: WriteMode, output: DataFrame, metadata: dict[str, str]
) -> Written:
    """Write the window's output to the target (created on the job's first write), in one commit at most."""
    made = prepared.job.target
    ensure_target(
        prepared.spark, made, output.schema, prepared.partition_by, made.deletion_vectors, made.change_data_feed
    )
    return _write_for(prepared, mode)(prepared, window, output, metadata)
