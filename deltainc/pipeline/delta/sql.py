"""Delta operations as SQL only, so they work the same on a classic SparkSession and on a Spark Connect client
(where delta-spark's `DeltaTable` needs Delta's Connect server plugin, which a server may not have): a table's
name in SQL, its detail, DELETE, and MERGE INTO a table from a DataFrame. Reading a table is `sources`'.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from pyspark.sql import DataFrame, Row, SparkSession

from deltainc.pipeline.job.sections import TableRef
from deltainc.spark_compat import session_conf

__all__ = [
    "table_name",
    "path_ref",
    "detail",
    "delete_where",
    "merge_into",
    "quote_name",
    "assignments",
    "insert_values",
]

_AUTO_MERGE = "spark.databricks.delta.schema.autoMerge.enabled"


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
