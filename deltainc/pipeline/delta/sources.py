"""Reading the job's Delta tables: whether one exists, by path or catalog name, its shape and latest commit, and a
window's source rows read as the Parquet files the source's Delta log names (docs/design.md#what-a-window-reads).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from deltainc.errors import ConfigError
from deltainc.join.columns import source_filter
from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.delta_log_stats import WindowFiles, window_files
from deltainc.pipeline.delta.table import TableShape, open_handle, shape_from_log
from deltainc.pipeline.job.kinds.job_kind import WindowRows, whole_tables
from deltainc.pipeline.job.sections import SourceRef, TableRef
from deltainc.spark_compat import session_kind
from deltainc.time_units import TimeUnit

__all__ = [
    "TableShape",
    "table_exists",
    "read",
    "latest_commit",
    "table_shape",
    "shape_from_log",
    "read_table",
    "read_source",
    "SourceFrames",
    "where_applied",
    "count_null_keys",
    "window_rows",
    "read_files",
]


def table_exists(spark: SparkSession, ref: TableRef) -> bool:
    """Whether the Delta table behind `ref` exists."""
    return open_handle(ref, "table", spark).exists()


def read(spark: SparkSession, ref: TableRef) -> DataFrame:
    """The table's current rows."""
    return open_handle(ref, "table", spark).rows()


def latest_commit(spark: SparkSession, ref: TableRef) -> Mapping[str, Any] | None:
    """The table's latest commit (version, operation, operationMetrics, ...): from its Delta log where the table
    handle reads it, else DESCRIBE HISTORY's row (a Spark job)."""
    return open_handle(ref, "table", spark).latest_commit()


def read_table(spark: SparkSession, ref: TableRef, role: str) -> DataFrame:
    """The Delta table behind `ref`; a missing table is a ConfigError naming the role (source_a, ...)."""
    return open_handle(ref, role, spark).present_rows()


def table_shape(spark: SparkSession, ref: TableRef, role: str) -> TableShape:
    """The columns, partition columns and properties of the Delta table behind `ref`: from its log when it is a
    path delta-rs reads, else as Spark reads them. A missing table is a ConfigError naming the role, like
    `read_table`.

    >>> table_shape(spark, TableRef(path="/data/target"), "target").partition_by  # doctest: +SKIP
    ('RecDate', 'IsFinal')
    """
    return open_handle(ref, role, spark).shape()


def read_source(spark: SparkSession, ref: SourceRef, role: str) -> DataFrame:
    """A source's rows the job joins: its Delta table, filtered by its `where` when it has one. A condition
    Spark cannot apply to the source is a ConfigError naming `<role>.where` and the source's columns."""
    return where_applied(read_table(spark, ref, role), ref, role)


@dataclass(frozen=True)
class SourceFrames(Mapping[str, DataFrame]):
    """Each source's rows by role, as Spark reads its Delta table (`read_source`), that read made the first time a
    role is asked for them: a window that reads a source's files from its log, and the counts the logs answer, ask
    Spark for no snapshot of it (seconds in a fresh process). `schemas`: each source's columns, known before any read.

    Example: ``SourceFrames({"source_a": schema}, {"source_a": lambda: read_source(spark, ref, "source_a")})``.
    """

    schemas: Mapping[str, T.StructType]
    reads: Mapping[str, Callable[[], DataFrame]]
    _made: dict[str, DataFrame] = field(default_factory=dict, compare=False, repr=False)

    def __getitem__(self, role: str) -> DataFrame:
        if role not in self._made:
            self._made[role] = self.reads[role]()
        return self._made[role]

    def __iter__(self) -> Iterator[str]:
        return iter(self.schemas)

    def __len__(self) -> int:
        return len(self.schemas)


def where_applied(df: DataFrame, ref: SourceRef, role: str) -> DataFrame:
    """`df` (a source's rows) filtered by the source's `where` when it has one; a condition Spark cannot apply is
    a ConfigError naming `<role>.where` and the source's columns.

    Example: ``where_applied(spark.read.format("delta").load(path), job.source_a, "source_a")``.
    """
    if ref.where is None:
        return df
    try:
        filtered = df.where(ref.where)
        _ = filtered.schema  # Spark Connect analyses lazily: the condition's errors come now, not in the join
    except Exception as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            f"{role}.where: {ref.where!r} is not a condition Spark can apply to {role} "
            f"(columns: {', '.join(df.columns)}): {reason}"
        ) from None
    return filtered


def count_null_keys(
    frames: Sequence[tuple[DataFrame, Sequence[str], str]], uom: TimeUnit | str, first: int, last: int
) -> list[int]:
    """For each (source, its join keys, its inc_col): its rows of units [first, last] with a NULL in any of the
    keys, in one Spark job; such rows never match (SQL semantics)."""

    def no_key(df: DataFrame, keys: Sequence[str], inc: str, side: int) -> DataFrame:
        missing = functools.reduce(operator.or_, [F.col(f"`{key}`").isNull() for key in keys])
        return df.where(source_filter(df, inc, uom, first, last) & missing).select(F.lit(side).alias("side"))

    if not frames:
        return []
    sides = [no_key(df, keys, inc, side) for side, (df, keys, inc) in enumerate(frames)]
    rows = functools.reduce(DataFrame.unionByName, sides).groupBy("side").count().collect()
    found = {int(row["side"]): int(row["count"]) for row in rows}
    return [found.get(side, 0) for side in range(len(frames))]


def window_rows(
    spark: SparkSession,
    refs: Mapping[str, SourceRef],
    schemas: Mapping[str, T.StructType],
    inc_col: Callable[[str], str],
    time_uom: str,
) -> WindowRows:
    """The job's `WindowRows`: for a role and units [first, last], that source's rows in those units' files (its
    `where` applied, its columns `schemas[role]`), or None where the window reads the Delta table, pruned by Spark:
    a catalog table, Spark Connect or Spark 3.5, a NOT NULL column (a Parquet read makes it nullable), or whatever
    `window_files` leaves to Delta (said at info, `--verbose`).

    E.g. `window_rows(spark, dict(job.sources), frames.schemas, job.inc_col_of, "day")("source_b", d - 12, d)`;
    `inc_col` gives a role's incremental column, by which its files are pruned.
    """
    if not session_kind(spark).reads_parquet_as_delta:  # Connect's client may not see the server's files
        return whole_tables
    nullable = {role: _nullable(schema) for role, schema in schemas.items()}
    tables = {role: open_handle(ref, role, spark) for role, ref in refs.items()}

    def rows(role: str, first: int, last: int) -> DataFrame | None:
        ref = refs[role]

        def from_log(location: str) -> DataFrame:
            if not nullable[role]:
                raise LogUnreadable(f"{role} has a NOT NULL column, which a read of its files makes nullable")
            files = window_files(location, inc_col(role), time_uom, first, last)
            read = read_files(spark, schemas[role], files)
            read = read.where(source_filter(read, inc_col(role), time_uom, first, last))  # a file may reach past them
            return read if ref.where is None else read.where(ref.where)

        return tables[role].answer(f"{role}'s rows of units {first}..{last}", from_log, lambda _why: None)

    return rows


def read_files(spark: SparkSession, schema: T.StructType, files: WindowFiles) -> DataFrame:
    """The rows of `files` as Spark reads Parquet files of a table's folder: the partition columns' values from
    the folder names, the columns in `schema`'s order (a column a file lacks is NULL, as Delta reads it)."""
    if not files.paths:
        return spark.createDataFrame([], schema)
    read = spark.read.schema(schema).option("basePath", files.root).parquet(*files.paths)
    return read.select(*[F.col("`" + name.replace("`", "``") + "`") for name in schema.fieldNames()])


def _nullable(kind: T.DataType) -> bool:
    """Whether every field of `kind`, nested ones included, may be NULL."""
    if isinstance(kind, T.StructType):
        return all(field.nullable and _nullable(field.dataType) for field in kind.fields)
    if isinstance(kind, T.ArrayType):
        return kind.containsNull and _nullable(kind.elementType)
    if isinstance(kind, T.MapType):
        return kind.valueContainsNull and _nullable(kind.keyType) and _nullable(kind.valueType)
    return True
