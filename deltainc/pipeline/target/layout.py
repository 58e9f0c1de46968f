"""The target's shape: how a new target is created, how a window's rows are laid out on write, whether an existing
target lets a forward run touch only its two slices (docs/design.md#the-two-slices-and-the-forward-write), and
whether a window's output fits its columns.

A target created by this version holds its open rows apart: the boolean column `IsFinal` (false for the rows a
later window may still change, JoinType 5, 6 and 7) is a partition column, after the output RecDate in a day job
and alone in an hour or minute job. A forward window's slices are then whole files. A target created before keeps
its own layout, read from its Delta log: the layout is never assumed.

Sources evolve: a column added to A or B reaches the join output. With `[target] schema_evolution = "add_columns"`
the write adds it through Delta's own schema evolution (rows already there read it as NULL; no file is rewritten).
A column that disappeared or changed type cannot be applied in place: an error naming it, before any write.

A target gets deletion vectors, a Delta reader feature delta-rs' pyarrow path refuses, only where its own writes
use them: the earlier layout (`reader_features.py`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from deltainc.errors import SchemaError
from deltainc.join.options import WAITING_TYPES
from deltainc.join.output_layout import IS_FINAL, JOIN_TYPE
from deltainc.pipeline.delta.sources import TableShape, table_exists, table_shape
from deltainc.pipeline.delta.table import open_handle
from deltainc.pipeline.job.sections import TableRef

__all__ = [
    "IS_FINAL",
    "TargetLayout",
    "default_partitioning",
    "target_partitioning",
    "ensure_target",
    "create_table",
    "holds_open_rows_apart",
    "lay_out",
    "read_layout",
    "layout_of",
    "layout_warnings",
    "with_is_final",
    "new_columns",
    "DELETION_VECTORS_FEATURE",
]


DELETION_VECTORS = "delta.enableDeletionVectors"
CHANGE_DATA_FEED = "delta.enableChangeDataFeed"
DELETION_VECTORS_FEATURE = "deletionVectors"  # the table feature's name in the protocol


@dataclass(frozen=True)
class TargetLayout:
    """What an existing target's layout is: its partition columns, whether deletion vectors are on (the property:
    whether writes make them) and the table features its protocol names (what a reader must support)."""

    partition_by: tuple[str, ...]
    deletion_vectors: bool
    change_data_feed: bool = False
    features: frozenset[str] = frozenset()

    @property
    def carries_deletion_vectors(self) -> bool:
        """Whether the protocol names the deletion-vector feature (readers must support it even with the property
        off): what delta-rs' pyarrow path refuses."""
        return DELETION_VECTORS_FEATURE in self.features


def default_partitioning(partition_by: Sequence[str] | None, rec: str, time_uom: str) -> list[str]:
    """Partition columns by time alone (the too-late rows' table): `partition_by` when set, else the output
    RecDate for day jobs, none for hour jobs, whose rows are written sorted by RecDate instead (`lay_out`).

    >>> default_partitioning(None, "RecDate", "hour")
    []
    """
    if partition_by is not None:
        return list(partition_by)
    return [rec] if time_uom == "day" else []


def target_partitioning(partition_by: Sequence[str] | None, rec: str, time_uom: str) -> list[str]:
    """The partition columns of a target the job creates: `target.partition_by` when set, else the output
    RecDate then `IsFinal` for day jobs, `IsFinal` alone for hour and minute jobs.

    A day partition holds one unit of output and `IsFinal` splits off its open rows, so a forward window's two
    slices are whole partitions: its write removes and adds files and reads none. An hour job would get 24
    partitions a day of small files; its final rows are written sorted by RecDate instead (`lay_out`), so file
    statistics find the rows after the watermark, and its open rows sit in small files of their own.

    >>> target_partitioning(None, "RecDate", "day")
    ['RecDate', 'IsFinal']
    """
    if partition_by is not None:
        return list(partition_by)
    return [*default_partitioning(None, rec, time_uom), IS_FINAL]


def holds_open_rows_apart(partition_by: Sequence[str]) -> bool:
    """Whether a target partitioned by `partition_by` keeps its open rows in files of their own (`IsFinal`)."""
    return IS_FINAL in partition_by


def with_is_final(output: DataFrame) -> DataFrame:
    """The window's output with `IsFinal`: false for the open rows (JoinType 5, 6, 7), which a later window
    replaces, true for every other row. Consumers read the rows that will not change with `WHERE IsFinal`."""
    open_codes = [int(code) for code in WAITING_TYPES]
    return output.withColumn(IS_FINAL, ~F.col(f"`{JOIN_TYPE}`").isin(open_codes))


def ensure_target(
    spark: SparkSession,
    ref: TableRef,
    schema: T.StructType,
    partition_by: Sequence[str],
    deletion_vectors: bool,
    change_data_feed: bool = False,
) -> bool:
    """Create the table (empty, with `schema` and the layout) unless it exists; True if created."""
    if table_exists(spark, ref):
        return False
    create_table(spark.createDataFrame([], schema), ref, partition_by, deletion_vectors, change_data_feed)
    return True


def create_table(
    rows: DataFrame,
    ref: TableRef,
    partition_by: Sequence[str],
    deletion_vectors: bool,
    change_data_feed: bool = False,
    metadata: str | None = None,
) -> None:
    """Create the table with `rows`, its layout and properties in one commit (that records `metadata` as its
    userMetadata). E.g. `create_table(output, job.target, ["RecDate", "IsFinal"], False, metadata='{"job": "trx"}')`
    is a job's first window: the target and its rows in one commit. `deletion_vectors` is always written as the
    table's property, so the session default (`spark.databricks.delta.properties.defaults.enableDeletionVectors`)
    never adds the feature to a table that asked for none."""
    writer = rows.write.format("delta").mode("append").option(DELETION_VECTORS, str(deletion_vectors).lower())
    if change_data_feed:
        writer = writer.option(CHANGE_DATA_FEED, "true")
    if metadata is not None:
        writer = writer.option("userMetadata", metadata)
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    if ref.path is None:
        writer.saveAsTable(ref.table or "")
        return
    table = open_handle(ref, "target", rows.sparkSession)
    folder = table.answer("the new target's folder", _new_folder, lambda _why: None, missing_ok=True, on_disk=True)
    try:
        writer.save(ref.path)
    except BaseException:
        if folder is not None:
            _remove_empty_folders(folder)
        raise


def _new_folder(folder: str) -> str | None:
    """`folder` (the table's, on this process's disk) if it does not exist yet, else None."""
    return None if os.path.exists(folder) else folder


def _remove_empty_folders(folder: str) -> None:
    """Remove `folder` and the folders under it where they hold no file: Delta makes its log's folders as a write
    begins, so a creation its query refused (or a failed one) would leave an empty table folder behind. A file
    anywhere keeps its folders (rmdir removes only empty ones)."""
    for here, _folders, _files in sorted(os.walk(folder), key=lambda entry: -len(entry[0])):
        with contextlib.suppress(OSError):
            os.rmdir(here)


def read_layout(spark: SparkSession, ref: TableRef) -> TargetLayout:
    """The partition columns and deletion-vector setting of the existing target (from its metadata only)."""
    return layout_of(table_shape(spark, ref, "target"))


def layout_of(shape: TableShape) -> TargetLayout:
    """The layout a table's shape says: its partition columns, deletion vectors, change data feed and features."""
    properties = shape.properties
    return TargetLayout(
        shape.partition_by,
        properties.get(DELETION_VECTORS, "false") == "true",
        properties.get(CHANGE_DATA_FEED, "false") == "true",
        frozenset(shape.features),
    )


def lay_out(output: DataFrame, partition_by: Sequence[str], rec: str) -> DataFrame:
    """Group the window's rows so that each written file holds few output RecDates.

    Partitioned (by more than `IsFinal`): one task per partition value, so one file per partition and window.
    Otherwise ranges of RecDate per task (the open rows first, when `IsFinal` is the partition column), so
    that each file's min/max RecDate is narrow and data skipping finds a slice in few files (a reload of a year
    would otherwise give files that each span the whole year).
    """
    if [c for c in partition_by if c != IS_FINAL]:
        return output.repartition(*[F.col(f"`{c}`") for c in partition_by])
    return output.repartitionByRange(*[F.col(f"`{c}`") for c in (*partition_by, rec)])


def layout_warnings(
    layout: TargetLayout,
    rec: str,
    time_uom: str,
    change_data_feed: bool = False,
    job: str = "JOB",
    deletion_vectors: bool | None = None,
) -> list[str]:
    """Why a forward run on this target would read or rewrite more than its two slices, if it would; a job
    asking for the change data feed of a target created without it; and a target carrying the deletion-vector
    reader feature that its writes never use (delta-rs' pyarrow readers cannot read it).

    Args:
        layout: the existing target's layout (`read_layout`).
        rec: the output RecDate column; `time_uom`: the job's unit.
        change_data_feed: whether the job asks for the change data feed.
        job: the job's name, for the commands the warnings give.
        deletion_vectors: the job's `[target] deletion_vectors` (None: not set).

    Example:
        >>> layout_warnings(TargetLayout(("RecDate", "IsFinal"), True), "RecDate", "day", job="trx")
        []
    """
    warnings: list[str] = []
    if change_data_feed and not layout.change_data_feed:
        warnings.append(
            "target: change_data_feed = true, but the existing table was created without it (the setting applies "
            f"when a target is created); turn it on with ALTER TABLE ... SET TBLPROPERTIES ('{CHANGE_DATA_FEED}' "
            "= 'true'): changes are recorded from then on"
        )
    if rec not in layout.partition_by and time_uom == "day":
        laid = f"partitioned by {', '.join(layout.partition_by)}" if layout.partition_by else "not partitioned"
        warnings.append(
            f"target: the table is {laid}, not by the output {rec}: a daily run finds its two slices by file "
            f"statistics, which is only cheap when each file holds few {rec} values; a target created by this "
            f'version is partitioned by {rec} (set target.partition_by = ["{rec}"] for a new target)'
        )
    if not holds_open_rows_apart(layout.partition_by):
        warnings.append(
            f"target: the table keeps its open rows in the files of its final rows (it is not partitioned by "
            f"{IS_FINAL}), so every daily run deletes rows instead of replacing whole files; `deltainc migrate {job}` "
            f"rewrites it into the current layout in one commit"
        )
    apart = holds_open_rows_apart(layout.partition_by)
    if not apart and not layout.deletion_vectors:
        warnings.append(
            "target: deletion vectors are off, so every daily run rewrites the files that hold the waiting rows "
            f"it replaces; turn them on with ALTER TABLE ... SET TBLPROPERTIES ('{DELETION_VECTORS}' = 'true'), "
            f"or move to the current layout, which needs none, with `deltainc migrate {job}`"
        )
    if apart and layout.carries_deletion_vectors and deletion_vectors is not True:
        warnings.append(
            f"target: the table carries the Delta reader feature {DELETION_VECTORS_FEATURE}, which its writes never "
            "use (they replace whole files), and which delta-rs' pyarrow readers (deltalake's to_pyarrow_table, "
            f"pandas, DuckDB) refuse; `deltainc migrate {job}` drops it (ALTER TABLE ... DROP FEATURE "
            f"{DELETION_VECTORS_FEATURE}), or set [target] deletion_vectors = true to keep it"
        )
    return warnings


def _origin(origins: Mapping[str, tuple[str, str]], column: str) -> str:
    """Where an output column comes from, for messages."""
    if column not in origins:
        return "the join"
    role, source = origins[column]
    return f"{role} column {source!r}" if source == column else f"{role} column {source!r} as {column!r}"


def new_columns(
    target: T.StructType, output: T.StructType, origins: Mapping[str, tuple[str, str]], label: str, evolution: str
) -> list[str]:
    """The output's columns the target lacks, when `evolution` allows adding them; raises SchemaError for a
    column the target has but the output no longer produces, for a changed type, and for new columns that
    `evolution` does not allow."""
    target_types = {f.name: f.dataType for f in target.fields}
    output_types = {f.name: f.dataType for f in output.fields}
    gone = [name for name in target_types if name not in output_types]
    if gone:
        raise SchemaError(
            f"target: {label} has column(s) {gone} that the join no longer produces (dropped from a source, or "
            "from output_select); a target cannot lose columns in place: restore them in the source, or recompute "
            "the target without them with `deltainc run JOB --rebuild`, or write to a new target"
        )
    retyped = [
        f"{name!r} is {target_types[name].simpleString()} in the target but {kind.simpleString()} in the join "
        f"output ({_origin(origins, name)})"
        for name, kind in output_types.items()
        if name in target_types and target_types[name].simpleString() != kind.simpleString()  # nullability aside
    ]
    if retyped:
        raise SchemaError(
            f"target: {label}: a column changed type: {'; '.join(retyped)}; cast it back in the source, or "
            "recompute the target with `deltainc run JOB --rebuild`"
        )
    added = [name for name in output_types if name not in target_types]
    if added and evolution != "add_columns":
        named = ", ".join(f"{name!r} ({_origin(origins, name)})" for name in added)
        raise SchemaError(
            f"target: the join output has new column(s) the target {label} lacks: {named}; set [target] "
            'schema_evolution = "add_columns" to add them (rows already in the target read them as NULL), or '
            "recompute the target with `deltainc run JOB --rebuild`"
        )
    return added
