"""Delta operations as SQL and DataFrame calls only, so they work the same on a classic SparkSession and on a
Spark Connect client (where delta-spark's `DeltaTable` needs Delta's Connect server plugin, which a server may
not have): whether a table exists, its latest commit and detail, DELETE, and MERGE INTO a table from a DataFrame.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, Row, SparkSession

from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.snapshot import log_else, look, retake
from deltainc.pipeline.job.sections import TableRef
from deltainc.spark_compat import session_conf, session_kind

__all__ = [
    "table_name",
    "path_ref",
    "is_delta_path",
    "table_exists",
    "read",
    "latest_commit",
    "detail",
    "delete_where",
    "merge_into",
    "quote_name",
    "assignments",
    "insert_values",
    "local_file_path",
]

_AUTO_MERGE = "spark.databricks.delta.schema.autoMerge.enabled"
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


def quote_name(column: str) -> str:
    """A name (a column, a Delta path) as a SQL identifier: in backticks, a backtick in it doubled."""
    return "`" + column.replace("`", "``") + "`"


def assignments(columns: Sequence[str]) -> str:
    """MERGE's `UPDATE SET` list that copies `columns` from the source s to the table (named unqualified, so
    that schema evolution can add a column the table does not have yet)."""
    return ", ".join(f"{quote_name(c)} = s.{quote_name(c)}" for c in columns)


def insert_values(columns: Sequence[str]) -> str:
    """MERGE's `INSERT (...) VALUES (...)` of `columns` from the source s."""
    names = ", ".join(quote_name(c) for c in columns)
    return f"({names}) VALUES ({', '.join(f's.{quote_name(c)}' for c in columns)})"


def path_ref(path: str) -> TableRef:
    """A TableRef for a Delta path (the state tables are always given by path)."""
    return TableRef(path=path)


def table_name(ref: TableRef) -> str:
    """The table as SQL names it: delta.`path` or the catalog name."""
    if ref.path is not None:
        return "delta." + quote_name(ref.path)
    return ref.table or ""


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


def detail(spark: SparkSession, ref: TableRef) -> Row | None:
    """DESCRIBE DETAIL's row: partitionColumns, properties, numFiles, sizeInBytes, ..."""
    return spark.sql(f"DESCRIBE DETAIL {table_name(ref)}").first()


def delete_where(spark: SparkSession, ref: TableRef, condition: str) -> int:
    """DELETE the rows satisfying the SQL `condition`; returns how many were deleted."""
    row = spark.sql(f"DELETE FROM {table_name(ref)} WHERE {condition}").first()
    return 0 if row is None or row[0] is None else int(row[0])


@contextmanager
def _view(source: DataFrame) -> Iterator[str]:
    """`source` as a temporary view of a name no other call uses, dropped afterwards."""
    name = f"deltainc_source_{uuid.uuid4().hex}"
    source.createOrReplaceTempView(name)
    try:
        yield name
    finally:
        source.sparkSession.catalog.dropTempView(name)


@contextmanager
def _schema_evolution(spark: SparkSession, on: bool) -> Iterator[None]:
    """Let a MERGE add the source's new columns to the table (Delta's automatic schema merge) inside the block."""
    if not on:
        yield
        return
    with session_conf(spark, _AUTO_MERGE, "true"):
        yield


def merge_into(
    spark: SparkSession,
    ref: TableRef,
    source: DataFrame,
    on: str,
    clauses: Sequence[str],
    schema_evolution: bool = False,
) -> Row | None:
    """MERGE INTO the table (alias t) USING `source` (alias s) ON `on`, with the WHEN `clauses` in order.

    Returns the MERGE's own result row (num_affected_rows, num_updated_rows, ...).
    """
    with _view(source) as view, _schema_evolution(spark, schema_evolution):
        statement = f"MERGE INTO {table_name(ref)} AS t USING {view} AS s ON {on} " + " ".join(clauses)
        return spark.sql(statement).first()
