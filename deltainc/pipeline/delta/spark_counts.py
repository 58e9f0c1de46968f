"""What Spark answers where a Delta log cannot (`delta_log_stats` answers the same from the log): a source's latest
unit, its rows with a NULL incremental column, and the files and bytes a scan reads after pruning."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deltainc.pipeline.delta.delta_log import local_sizes
from deltainc.time_units import to_index

__all__ = ["ScanStats", "latest_unit", "count_null_inc", "scan_stats"]


@dataclass(frozen=True)
class ScanStats:
    """How many files and bytes a scan reads, as planned by Spark and Delta after pruning."""

    files: int
    bytes: int


def latest_unit(df: DataFrame, inc_col: str, time_uom: str) -> int | None:
    """The latest unit present in the incremental column (Delta answers max() from its statistics)."""
    value = df.agg(F.max(inc_col).alias("latest")).first()
    latest = None if value is None else value["latest"]
    return None if latest is None else to_index(latest, time_uom)


def count_null_inc(df: DataFrame, inc_col: str) -> int:
    """Rows whose incremental column is NULL: never joined, but counted and reported."""
    return df.where(F.col(inc_col).isNull()).count()


_GLOB = re.compile(r"([{}\[\]*?\\])")


def scan_stats(spark: SparkSession, scan: DataFrame) -> ScanStats:
    """Files (and their bytes) that Spark and Delta plan to read for `scan`, after partition and file pruning."""
    files = scan.inputFiles()
    if not files:
        return ScanStats(0, 0)
    local = local_sizes(files)
    if local is not None:  # local disk: the file system answers without a Spark job
        return ScanStats(len(files), local)
    # a load() path is a glob pattern: escape its glob characters so a table path like `x[1]` is read literally
    literal = [_GLOB.sub(r"\\\1", f) for f in files]
    sizes = spark.read.format("binaryFile").load(literal).agg(F.sum("length").alias("bytes")).first()
    total = 0 if sizes is None or sizes["bytes"] is None else int(sizes["bytes"])
    return ScanStats(len(files), total)
