"""Reading the job's Delta tables: by path or catalog name, their latest RecDate, the files a scan reads."""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

from delta.tables import DeltaTable
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deltainc.config import TableRef
from deltainc.errors import ConfigError
from deltainc.windows import to_index

__all__ = ["ScanStats", "table_exists", "read_table", "latest_unit", "count_null_inc", "scan_stats", "delta_table"]


@dataclass(frozen=True)
class ScanStats:
    """How many files and bytes a scan reads, as planned by Spark and Delta after pruning."""

    files: int
    bytes: int


def table_exists(spark: SparkSession, ref: TableRef) -> bool:
    """Whether the Delta table behind `ref` exists."""
    if ref.path is not None:
        return DeltaTable.isDeltaTable(spark, ref.path)
    return bool(spark.catalog.tableExists(ref.table or ""))


def read_table(spark: SparkSession, ref: TableRef, role: str) -> DataFrame:
    """The Delta table behind `ref`; a missing table is a ConfigError naming the role (source_a, ...)."""
    if not table_exists(spark, ref):
        raise ConfigError(f"{role}: no Delta table at {ref.label}")
    if ref.path is not None:
        return spark.read.format("delta").load(ref.path)
    return spark.read.table(ref.table or "")


def delta_table(spark: SparkSession, ref: TableRef) -> DeltaTable:
    """The DeltaTable handle behind `ref`."""
    if ref.path is not None:
        return DeltaTable.forPath(spark, ref.path)
    return DeltaTable.forName(spark, ref.table or "")


def latest_unit(df: DataFrame, inc_col: str, time_uom: str) -> int | None:
    """The latest unit present in the incremental column (Delta answers max() from its statistics)."""
    value = df.agg(F.max(inc_col).alias("latest")).first()
    latest = None if value is None else value["latest"]
    return None if latest is None else to_index(latest, time_uom)


def count_null_inc(df: DataFrame, inc_col: str) -> int:
    """Rows whose incremental column is NULL: never joined, but counted and reported."""
    return df.where(F.col(inc_col).isNull()).count()


def scan_stats(spark: SparkSession, scan: DataFrame) -> ScanStats:
    """Files (and their bytes) that Spark and Delta plan to read for `scan`, after partition and file pruning."""
    files = scan.inputFiles()
    if not files:
        return ScanStats(0, 0)
    local = [urlparse(f) for f in files]
    if all(u.scheme in ("", "file") for u in local):  # local disk: the file system answers without a Spark job
        return ScanStats(len(files), sum(os.path.getsize(unquote(u.path)) for u in local))
    sizes = spark.read.format("binaryFile").load(files).agg(F.sum("length").alias("bytes")).first()
    total = 0 if sizes is None or sizes["bytes"] is None else int(sizes["bytes"])
    return ScanStats(len(files), total)
