"""The benchmark's sources: generated once (the longest history), reused while their spec is unchanged.

A and B are written as Delta tables partitioned by RecDate with one file per RecDate partition, the
layout a daily load (one append per day and source) produces. Smaller histories are prefixes of these
tables: "D days of data" means RecDate in days 1..D.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deltainc.demo.sample_data import SampleSpec, generate
from deltainc.settings import Settings, SparkSettings

__all__ = [
    "Sources",
    "bench_settings",
    "ensure_sources",
    "day",
    "copy_days",
    "append_day",
    "table_version",
    "table_stats",
]


def bench_settings(root: Path, shuffle_partitions: int) -> Settings:
    """deltainc's settings for a benchmark in the folder `root`: local[2], Spark's logs at ERROR, the warehouse and
    the state under `root`."""
    return Settings(
        spark=SparkSettings(master="local[2]", shuffle_partitions=shuffle_partitions, log_level="ERROR"),
        warehouse_dir=root / "warehouse",
        state_dir=root / "state",
    )


LAYOUT = "partitionBy(RecDate), one file per partition"  # part of the cache key: change it to regenerate
_SPEC_FILE = "_spec.json"


@dataclass(frozen=True)
class Sources:
    """Where the generated A and B live, what they hold, and how long generating them took."""

    spec: SampleSpec
    path_a: str
    path_b: str
    rows_a: int
    rows_b: int
    files_a: int
    files_b: int
    bytes_a: int
    bytes_b: int
    generated_s: float | None  # None when reused from an earlier benchmark
    reused: bool

    def day(self, number: int) -> dt.date:
        return day(self.spec, number)


def day(spec: SampleSpec, number: int) -> dt.date:
    """The date of day `number` of the history, 1-based (day 1 = spec.start)."""
    return spec.start + dt.timedelta(days=number - 1)


def _fingerprint(spec: SampleSpec) -> dict[str, Any]:
    fields = dataclasses.asdict(spec)
    fields["start"] = spec.start.isoformat()
    return {"spec": json.loads(json.dumps(fields)), "layout": LAYOUT}


def table_version(spark: SparkSession, path: str) -> int:
    """The latest version of the Delta table at `path`."""
    row = DeltaTable.forPath(spark, path).history(1).select("version").first()
    return 0 if row is None else int(row["version"])


def table_stats(spark: SparkSession, path: str) -> tuple[int, int]:
    """(files, bytes) of the Delta table's current snapshot."""
    row = DeltaTable.forPath(spark, path).detail().select("numFiles", "sizeInBytes").first()
    return (0, 0) if row is None else (int(row["numFiles"]), int(row["sizeInBytes"]))


def _write_by_day(frame: DataFrame, path: str, mode: str, rows: int) -> None:
    """Write `frame` partitioned by RecDate, every RecDate's rows in one file."""
    slices = max(1, math.ceil(rows / 2_000_000))
    (
        frame.repartition(slices, "RecDate")
        .write.format("delta")
        .mode(mode)
        .option("overwriteSchema", "true")
        .partitionBy("RecDate")
        .save(path)
    )


def ensure_sources(spark: SparkSession, root: Path, spec: SampleSpec, regenerate: bool = False) -> Sources:
    """The sources of `spec` under `root/sources`: reused if an earlier run wrote the same spec, else written."""
    folder = root / "sources"
    path_a, path_b = str(folder / "A"), str(folder / "B")
    marker = folder / _SPEC_FILE
    wanted = _fingerprint(spec)
    if not regenerate and marker.is_file():
        saved = json.loads(marker.read_text())
        if saved.get("key") == wanted:
            return Sources(spec, path_a, path_b, reused=True, generated_s=saved.get("generated_s"), **saved["stats"])
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    started = time.perf_counter()
    total = spec.days * spec.rows_per_day
    source_a, source_b = generate(spark, spec, partitions=max(2, math.ceil(total / 1_000_000)))
    _write_by_day(source_a, path_a, "overwrite", total)
    _write_by_day(source_b, path_b, "overwrite", total)
    generated_s = time.perf_counter() - started
    files_a, bytes_a = table_stats(spark, path_a)
    files_b, bytes_b = table_stats(spark, path_b)
    stats = {
        "rows_a": spark.read.format("delta").load(path_a).count(),
        "rows_b": spark.read.format("delta").load(path_b).count(),
        "files_a": files_a,
        "files_b": files_b,
        "bytes_a": bytes_a,
        "bytes_b": bytes_b,
    }
    marker.write_text(json.dumps({"key": wanted, "generated_s": generated_s, "stats": stats}, indent=2))
    return Sources(spec, path_a, path_b, reused=False, generated_s=generated_s, **stats)


def copy_days(spark: SparkSession, source: str, target: str, last: dt.date) -> None:
    """A new Delta table at `target` with the rows of `source` whose RecDate <= last (same layout)."""
    frame = spark.read.format("delta").load(source).where(F.col("RecDate") <= F.lit(last))
    frame.repartition("RecDate").write.format("delta").mode("overwrite").partitionBy("RecDate").save(target)


def append_day(spark: SparkSession, source: str, target: str, which: dt.date) -> None:
    """Append the rows of `source` with RecDate = which to `target` in one file: one day's load."""
    frame = spark.read.format("delta").load(source).where(F.col("RecDate") == F.lit(which))
    frame.coalesce(1).write.format("delta").mode("append").partitionBy("RecDate").save(target)
