"""Reading the job's Delta tables: whether one exists, by path or catalog name, its shape and latest commit, and a
window's source rows read as the Parquet files the source's Delta log names (docs/design.md#what-a-window-reads).
"""

from __future__ import annotations

import functools
import json
import operator
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from deltainc.errors import ConfigError
from deltainc.join.columns import source_filter
from deltainc.join.windows import TimeUnit
from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.delta_log_stats import WindowFiles, source_location, window_files
from deltainc.pipeline.delta.snapshot import log_else, look, retake
from deltainc.pipeline.delta.sql import detail, table_name
from deltainc.pipeline.job.kinds.job_kind import WindowRows, whole_tables
from deltainc.pipeline.job.sections import SourceRef, TableRef
from deltainc.spark_compat import session_kind

__all__ = [
    "TableShape",
    "is_delta_path",
    "table_exists",
    "read",
    "latest_commit",
    "table_shape",
    "shape_from_log",
    "read_table",
    "read_source",
    "where_applied",
    "count_null_keys",
    "local_file_path",
    "window_rows",
    "read_files",
]


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")  # a Hadoop path's scheme comes before any '/'


def local_file_path(location: str) -> str | None:
    """The local path of a Hadoop path string (as inputFiles() gives it), or None if it is on another file system.

    inputFiles() returns Hadoop's Path.toString(): the scheme, then the on-disk name verbatim, with no %-escapes
    (a timestamp partition folder `RecDate=2025-02-01 00%3A00%3A00` comes back as is, '%3A' being part of the
    name). So nothing may be unquoted, and it is not a URI either: '#' and '?' belong to the name, not to a
    fragment or query, which is why urllib's urlparse must not see it.
    """
    if location.startswith("file:"):
        rest = location[len("file:") :]
        if rest.startswith("//"):  # file:///tmp/x (empty authority) or file://host/tmp/x
            slash = rest.find("/", 2)
            return rest[slash:] if slash >= 0 else "/"
        return rest
    return None if _SCHEME.match(location) else location  # s3a:, abfss:, dbfs:, ... (a bare /path is local)


def is_delta_path(spark: SparkSession, path: str) -> bool:
    """Whether a Delta table has committed at `path`; a local folder answers from its `_delta_log` alone."""
    local = local_file_path(path)  # Hadoop takes a path's name verbatim: nothing to unquote
    if local is not None:
        log = os.path.join(local, "_delta_log")
        return os.path.isdir(log) and any(name.endswith(".json") for name in os.listdir(log))
    try:
        spark.read.format("delta").load(path).schema  # noqa: B018 - analysing the load reads the log's head
    except AnalysisException:
        return False
    return True


def table_exists(spark: SparkSession, ref: TableRef) -> bool:
    """Whether the Delta table behind `ref` exists."""
    if ref.path is not None:
        return is_delta_path(spark, ref.path)
    return bool(spark.catalog.tableExists(ref.table or ""))


def read(spark: SparkSession, ref: TableRef) -> DataFrame:
    """The table's current rows."""
    if ref.path is not None:
        return spark.read.format("delta").load(ref.path)
    return spark.read.table(ref.table or "")


def latest_commit(spark: SparkSession, ref: TableRef) -> Mapping[str, Any] | None:
    """The table's latest commit (version, operation, operationMetrics, ...): read from its Delta log with delta-rs
    where the table is a local path of this process, else DESCRIBE HISTORY's row (a Spark job)."""

    if ref.path is not None:
        retake(ref.path)  # after the commit just made, the table's snapshot is taken again

    def from_log() -> Mapping[str, Any] | None:
        if ref.path is None or not session_kind(spark).sees_its_files:
            raise LogUnreadable("a catalog table, or the session's files are not this process'")
        history = look(ref.path).history(1)
        if not history or "operation" not in history[0] or "version" not in history[0]:
            raise LogUnreadable(f"{ref.path}: the log's last commit has no operation or version")
        return history[0]

    def with_spark(_why: Exception) -> Mapping[str, Any] | None:
        row = spark.sql(f"DESCRIBE HISTORY {table_name(ref)} LIMIT 1").first()
        return None if row is None else row.asDict()

    return log_else(f"the last commit of {ref.label}", from_log, with_spark)


def read_table(spark: SparkSession, ref: TableRef, role: str) -> DataFrame:
    """The Delta table behind `ref`; a missing table is a ConfigError naming the role (source_a, ...)."""
    if not table_exists(spark, ref):
        upstream = ref.job if isinstance(ref, SourceRef) else None
        after = f" (the target of job {upstream}, which has not run yet: run it first)" if upstream else ""
        raise ConfigError(f"{role}: no Delta table at {ref.label}{after}")
    return read(spark, ref)


@dataclass(frozen=True)
class TableShape:
    """A Delta table's columns, partition columns, properties (values lower-cased) and the table features its
    protocol names (reader and writer: `deletionVectors`, ...), as its log records them."""

    schema: T.StructType
    partition_by: tuple[str, ...]
    properties: Mapping[str, str] = field(default_factory=dict)
    features: tuple[str, ...] = ()


def shape_from_log(location: str) -> TableShape:
    """The shape of the Delta table at `location` from the command's snapshot of its log (no Spark job): its
    schema as Spark reads it (the log holds Spark's StructType JSON); LogUnreadable when there is no table there,
    delta-rs cannot read it, or this pyspark does not know one of its types."""
    snapshot = look(location)
    try:
        schema = T.StructType.fromJson(json.loads(snapshot.schema_json))
    except (ValueError, KeyError) as exc:  # a type this pyspark does not know: Spark reads the table itself
        raise LogUnreadable(f"{location}: pyspark cannot parse the schema in the log: {exc}") from exc
    return TableShape(schema, snapshot.partition_columns, snapshot.properties, snapshot.features)


def table_shape(spark: SparkSession, ref: TableRef, role: str) -> TableShape:
    """The columns, partition columns and properties of the Delta table behind `ref`: from its log when it is a
    path delta-rs reads, else as Spark reads them. A missing table is a ConfigError naming the role, like
    `read_table`.

    >>> table_shape(spark, TableRef(path="/data/target"), "target").partition_by  # doctest: +SKIP
    ('RecDate', 'IsFinal')
    """

    def from_log() -> TableShape:
        if ref.path is None:
            raise LogUnreadable(f"{role} is a catalog table")
        if look(ref.path).found is None:
            raise ConfigError(f"{role}: no Delta table at {ref.label}")
        return shape_from_log(ref.path)

    def with_spark() -> TableShape:
        schema = read_table(spark, ref, role).schema
        found = detail(spark, ref)
        if found is None:
            return TableShape(schema, ())
        properties = {key: str(value).lower() for key, value in (found["properties"] or {}).items()}
        features = tuple(found.asDict().get("tableFeatures") or ())  # a column since Delta 3.0
        return TableShape(schema, tuple(found["partitionColumns"] or ()), properties, features)

    return log_else(f"{role}'s columns", from_log, lambda _why: with_spark())


def read_source(spark: SparkSession, ref: SourceRef, role: str) -> DataFrame:
    """A source's rows the job joins: its Delta table, filtered by its `where` when it has one. A condition
    Spark cannot apply to the source is a ConfigError naming `<role>.where` and the source's columns."""
    return where_applied(read_table(spark, ref, role), ref, role)


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
    frames: Mapping[str, DataFrame],
    inc_col: Callable[[str], str],
    time_uom: str,
) -> WindowRows:
    """The job's `WindowRows`: for a role and units [first, last], that source's rows in those units' files (its
    `where` applied), or None where the window reads the Delta table (`frames[role]`), pruned by Spark: a catalog
    table, Spark Connect or Spark 3.5, a NOT NULL column (a Parquet read makes it nullable), or whatever
    `window_files` leaves to Delta (said at info, `--verbose`).

    E.g. `window_rows(spark, dict(job.sources), frames, job.inc_col_of, "day")("source_b", d - 12, d)`;
    `inc_col` gives a role's incremental column, by which its files are pruned.
    """
    if not session_kind(spark).reads_parquet_as_delta:  # Connect's client may not see the server's files
        return whole_tables
    nullable = {role: _nullable(frame.schema) for role, frame in frames.items()}

    def rows(role: str, first: int, last: int) -> DataFrame | None:
        ref, frame = refs[role], frames[role]

        def from_log() -> DataFrame:
            if not nullable[role]:
                raise LogUnreadable(f"{role} has a NOT NULL column, which a read of its files makes nullable")
            files = window_files(source_location(ref, role), inc_col(role), time_uom, first, last)
            read = read_files(spark, frame.schema, files)
            read = read.where(source_filter(read, inc_col(role), time_uom, first, last))  # a file may reach past them
            return read if ref.where is None else read.where(ref.where)

        return log_else(f"{role}'s rows of units {first}..{last}", from_log, lambda _why: None)

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
