"""The forward write mode (docs/design.md#the-two-slices-and-the-forward-write): a window right after the watermark
replaces the target's two slices, the final rows of the window and the rows still open at its end, in one commit
(`replaceWhere`, or a MERGE of the same slices with `forward_write = "merge"`); the slices' conditions, and the
Delta writes that replace or merge them (`replace_where` and `overwrite_target` serve the other modes too).

After the job processed up to watermark `w`, every waiting row sits at output RecDate `w` and every other
row is final. So a forward window `[w+1, e]` can change only the waiting rows at `w` and rows after `w`
(left by an attempt that committed and died before its watermark moved). The new target is the target
minus those slices plus the window's output: one commit, idempotent, reading nothing else of the target.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame, DataFrameWriter
from pyspark.sql import functions as F
from pyspark.sql import types as T

from deltainc.join.options import WAITING_TYPES
from deltainc.join.output_layout import JOIN_TYPE, RESERVED_PREFIX
from deltainc.join.strategy import shuffled
from deltainc.join.windows import Window
from deltainc.pipeline.delta.delta_log_stats import Span, files_in_units, spans_by_partition
from deltainc.pipeline.delta.sources import read
from deltainc.pipeline.delta.spark_counts import ScanStats, scan_stats
from deltainc.pipeline.delta.sql import assignments, insert_values, merge_into
from deltainc.pipeline.delta.table import open_handle
from deltainc.pipeline.target.found import TargetFound
from deltainc.pipeline.target.layout import IS_FINAL
from deltainc.pipeline.target.write_mode import (
    CommitResult,
    Destination,
    TargetWrite,
    WriteInputs,
    WriteMode,
    Written,
    current_target,
    last_commit,
)
from deltainc.pipeline.target.write_mode import user_metadata as commit_metadata
from deltainc.spark_compat import session_conf
from deltainc.time_units import from_index

__all__ = [
    "FORWARD",
    "sql_literal",
    "Slices",
    "forward_slices",
    "replace_slices",
    "replace_open_rows",
    "replace_where",
    "merge_slices",
    "overwrite_target",
]

_ACTION = f"{RESERVED_PREFIX}action"
_SEEN = f"{RESERVED_PREFIX}seen_"
_CONSTRAINT_CHECK = "spark.databricks.delta.replaceWhere.constraintCheck.enabled"
_OVERWRITES = ("WRITE", "CREATE OR REPLACE TABLE AS SELECT", "REPLACE TABLE AS SELECT")  # by path; by name


def sql_literal(value: dt.date | dt.datetime, data_type: T.DataType) -> str:
    """A SQL literal of `value` typed like the column it is compared with (so Delta can prune on it)."""
    if isinstance(data_type, T.DateType):
        day = value.date() if isinstance(value, dt.datetime) else value
        return f"DATE'{day.isoformat()}'"
    stamp = value if isinstance(value, dt.datetime) else dt.datetime(value.year, value.month, value.day)
    kind = "TIMESTAMP_NTZ" if isinstance(data_type, T.TimestampNTZType) else "TIMESTAMP"
    return f"{kind}'{stamp.isoformat(sep=' ')}'"


@dataclass(frozen=True)
class Slices:
    """The two slices a forward window after the watermark may change, as a SQL condition on the target:
    the rows still open at the watermark (A rows waiting for their B, in full_outer jobs B rows for their A, in
    asof jobs provisional matches for a nearer B) and any row after it.

    A target that holds its open rows apart (`apart`: partitioned by `IsFinal`) names them by that column, so
    in a day job the condition is on partition columns only and Delta answers it from the log; an older target
    names them by their JoinType, which Delta finds by reading the watermark's files.
    """

    rec: str  # the output RecDate column
    watermark: str  # the watermark as a SQL literal of the column's type
    apart: bool = False  # the open rows are in a partition of their own (IsFinal = false)

    def condition(self, prefix: str = "") -> str:
        """Open rows at the watermark, and rows after it; columns qualified by `prefix` (e.g. 't.')."""
        column, w = f"{prefix}`{self.rec}`", self.watermark
        if self.apart:
            still_open = f"{prefix}`{IS_FINAL}` = false"
        else:
            codes = ", ".join(str(int(code)) for code in WAITING_TYPES)  # A rows for B, B rows for A, provisional
            still_open = f"{prefix}`{JOIN_TYPE}` IN ({codes})"
        # The leading bound repeats what the OR implies, as a conjunct on the RecDate column alone: that is
        # what Delta turns into a partition filter (or file skipping), so history is never looked at.
        return f"({column} >= {w} AND (({column} = {w} AND {still_open}) OR {column} > {w}))"


def forward_slices(rec: str, watermark: dt.date | dt.datetime, rec_type: T.DataType, apart: bool = False) -> Slices:
    """The slices for a window that starts the unit after `watermark`, of a target holding its open rows
    `apart` or not.

    >>> forward_slices("RecDate", dt.date(2025, 3, 6), T.DateType(), apart=True).condition()  # doctest: +ELLIPSIS
    "(`RecDate` >= DATE'2025-03-06' AND ((`RecDate` = DATE'2025-03-06' AND `IsFinal` = false) OR ...))"
    """
    return Slices(rec, sql_literal(watermark, rec_type), apart)


def replace_slices(to: Destination, output: DataFrame, slices: Slices) -> CommitResult:
    """Overwrite exactly the rows of `slices` with `output`: one Delta commit (replaceWhere).

    Delta removes the slices and appends the output, and checks that every output row satisfies the condition,
    so nothing outside the slices moves. Where the slices are whole partitions (a day target holding its open
    rows apart) the removal is a metadata operation: files removed, none read, no row copied. Otherwise Delta
    finds the slice rows in the files its statistics point to and deletes them with deletion vectors.
    """
    return replace_where(to, output, slices.condition())


def replace_open_rows(to: Destination, output: DataFrame) -> CommitResult:
    """Replace the target's open rows' partition (`IsFinal = false`) by `output`, in one commit: its files are
    removed unread (a condition on a partition column) and the output's files added, final and open rows alike.

    For a target whose log shows its open rows all at the watermark and no row after it, this is exactly the
    change `replace_slices` makes, without reading the open rows' files to find the rows to delete. Delta's check
    that every written row satisfies the condition is off for this one write: the output's final rows, dated
    after the watermark, lie outside that partition by design.
    """
    with session_conf(to.spark, _CONSTRAINT_CHECK, "false"):
        return replace_where(to, output, f"`{IS_FINAL}` = false")


def replace_where(to: Destination, output: DataFrame, condition: str) -> CommitResult:
    """Overwrite the rows of the table that satisfy the SQL `condition` with `output`, in one commit."""
    writer = _overwrite(to, output).option("replaceWhere", condition)
    if to.add_columns:
        writer = writer.option("mergeSchema", "true")
    _save(to, writer)
    return last_commit(to.spark, to.ref)


def merge_slices(to: Destination, output: DataFrame, identity_columns: list[str], slices: Slices) -> CommitResult:
    """The same change as `replace_slices` as one Delta MERGE: the slice rows the output does not hold are
    deleted, the output rows inserted (or updated where an earlier attempt left them)."""
    slice_rows = read(to.spark, to.ref).where(slices.condition())
    seen = output.select(*[F.col(f"`{c}`").alias(f"{_SEEN}{c}") for c in identity_columns])
    same = F.lit(True)
    for c in identity_columns:
        same = same & F.col(f"`{c}`").eqNullSafe(F.col(f"`{_SEEN}{c}`"))
    gone = shuffled(slice_rows).join(seen, same, "left_anti")
    held = [  # a column the output adds (add_columns) is NULL in the slice rows to delete
        F.col(f"`{f.name}`") if f.name in gone.columns else F.lit(None).cast(f.dataType).alias(f.name)
        for f in output.schema.fields
    ]
    source = output.withColumn(_ACTION, F.lit("put")).unionByName(
        gone.select(*held).withColumn(_ACTION, F.lit("delete"))
    )
    on = " AND ".join([f"t.`{c}` <=> s.`{c}`" for c in identity_columns] + [slices.condition("t.")])
    with commit_metadata(to.spark, to.user_metadata):
        merge_into(
            to.spark,
            to.ref,
            source,
            on,
            [
                f"WHEN MATCHED AND s.{_ACTION} = 'delete' THEN DELETE",
                f"WHEN MATCHED THEN UPDATE SET {assignments(output.columns)}",
                f"WHEN NOT MATCHED AND s.{_ACTION} = 'put' THEN INSERT {insert_values(output.columns)}",
            ],
            schema_evolution=to.add_columns,
        )
    return last_commit(to.spark, to.ref)


def overwrite_target(to: Destination, output: DataFrame, partition_by: Sequence[str]) -> CommitResult:
    """Replace the whole table, its columns and partitioning included, by `output`: one commit (a rebuild
    under changed settings). The table's history stays, so time travel still shows the old target."""
    writer = _overwrite(to, output).option("overwriteSchema", "true").partitionBy(*partition_by)
    _save(to, writer)
    return last_commit(to.spark, to.ref, _OVERWRITES)


def _overwrite(to: Destination, output: DataFrame) -> DataFrameWriter:
    """An overwrite of the table by `output` that records the commit's userMetadata."""
    return (
        output.write.format("delta")
        .mode("overwrite")
        .option("userMetadata", json.dumps(to.user_metadata, sort_keys=True))
    )


def _save(to: Destination, writer: DataFrameWriter) -> None:
    """Run the write: to the table's path, or to the table by name."""
    if to.ref.path is not None:
        writer.save(to.ref.path)
    else:
        writer.saveAsTable(to.ref.table or "")


def write_forward(
    inputs: WriteInputs, found: TargetFound, window: Window, output: DataFrame, metadata: dict[str, str]
) -> Written:
    """Replace the target's two slices from the watermark on by the window's output. The slices are named as
    the target's own layout (as the window `found` it) allows: by `IsFinal` where it holds its open rows apart."""
    to = current_target(inputs, found, output, metadata)
    rec = inputs.rec
    apart = found.open_rows_apart
    rec_type = found.existing_schema()[rec].dataType
    slices = forward_slices(rec, from_index(window.start - 1, inputs.uom), rec_type, apart)
    if inputs.job.target.forward_write == "merge":
        read_ = _slices_read(inputs, window, slices)
        return Written(TargetWrite.MERGE, merge_slices(to, output, inputs.identity.columns, slices), read_)
    # The condition is on partition columns only (a day target holding its open rows apart): Delta removes the
    # slices' files unread.
    if apart and rec in found.partition_by:
        return Written(TargetWrite.REPLACE_WHERE, replace_slices(to, output, slices), ScanStats(0, 0))
    # An hour target: its slices are the open rows' partition whole where its log says nothing else is in them.
    if apart and _open_rows_alone(inputs, window):
        return Written(TargetWrite.REPLACE_WHERE, replace_open_rows(to, output), ScanStats(0, 0))
    read_ = _slices_read(inputs, window, slices)
    return Written(TargetWrite.REPLACE_WHERE, replace_slices(to, output, slices), read_)


def _open_rows_alone(inputs: WriteInputs, window: Window) -> bool:
    """Whether the target's Delta log shows that the two slices from the watermark on are its open rows' files
    whole: each file of `IsFinal = false` holds rows of the watermark's unit only, and no final file holds a row
    after it (a crashed attempt at this window may have left some). False where the log cannot say."""
    watermark = window.start - 1

    def inside(final: object, span: Span | None) -> bool:
        if span is None or final is None:
            return False
        low, high = span
        if low > high:  # no row with a RecDate
            return True
        return high <= watermark if final else low == high == watermark

    def from_log(location: str) -> bool:
        files = spans_by_partition(location, inputs.rec, inputs.uom, IS_FINAL)
        return all(inside(final, span) for final, span in files)

    target = open_handle(inputs.job.target, "target", inputs.spark)
    return target.answer("the target's open rows' files", from_log, lambda _why: False, own_files=True)


def _slices_read(inputs: WriteInputs, window: Window, slices: Slices) -> ScanStats:
    """The target's files the slices from the watermark on span: from its Delta log when the target is a local
    table (the files whose RecDate range reaches the watermark), else as Spark plans the slices' scan."""
    ref = inputs.job.target

    def from_log(location: str) -> ScanStats:
        return ScanStats(*files_in_units(location, inputs.rec, inputs.uom, window.start - 1, None))

    def with_spark(_why: Exception) -> ScanStats:
        return scan_stats(inputs.spark, target.rows().where(slices.condition()))

    target = open_handle(ref, "target", inputs.spark)
    return target.answer("the target's files read", from_log, with_spark, own_files=True, missing_ok=True)


FORWARD = WriteMode(
    "forward",
    write_forward,
    moves_watermark=True,
    forward=True,
    lays_out=True,
    single_pass=lambda job: job.target.forward_write == "replace_where",
)
