"""The floors a daily run is measured against: reading only the partitions it needs, and joining its window and
appending it to Delta, what any incremental job must do at least."""

from __future__ import annotations

import datetime as dt

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks.bench import Bench, read_delta
from deltainc import pipeline
from deltainc.join.engine import inc_join
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.time_units import to_index

__all__ = ["floor_scans", "inc_join_window", "join_append", "read_all"]


def floor_scans(bench: Bench, number: int) -> tuple[DataFrame, DataFrame]:
    """The partitions a daily run for day `number` needs: A in [D - mw, D], B in [D - lb - mw, D]."""
    last = bench.sources.day(number)
    first_a = last - dt.timedelta(days=bench.max_wait)
    first_b = last - dt.timedelta(days=bench.look_back + bench.max_wait)
    a = read_delta(bench.spark, bench.sources.path_a).where(F.col("RecDate").between(F.lit(first_a), F.lit(last)))
    b = read_delta(bench.spark, bench.sources.path_b).where(F.col("RecDate").between(F.lit(first_b), F.lit(last)))
    return a, b


def inc_join_window(spark: SparkSession, job: JobConfig, day: dt.date) -> DataFrame:
    """The floor's join: `day`'s window of the two-source `job`, by `inc_join` over its two Delta sources."""
    assert job.source_b is not None and job.join.how is not None  # a two-source job
    a = spark.read.format("delta").load(str(job.source_a.path))
    b = spark.read.format("delta").load(str(job.source_b.path))
    join = job.join
    return inc_join(a, b, job.outcome_kind, list(join.join_cols), None, join.look_back_time, join.max_waiting_time,
                    day, day, join.engine_settings(job.target.b_keys))  # fmt: skip


def join_append(bench: Bench, job: JobConfig, number: int, path: str) -> None:
    """What any incremental job must do at least: join day `number`'s window, append the output to Delta."""
    prepared = pipeline.prepare_job(job, bench.spark, bench.settings)
    unit = to_index(bench.sources.day(number))
    output = prepared.join.join(unit, unit).output
    output.write.format("delta").mode("append").save(path)


def read_all(*frames: DataFrame) -> None:
    """Read every column of every row of the frames and throw them away.

    (An aggregate that touches every column, not the `noop` sink: Delta 3.3 cannot plan a table with
    deletion vectors under the noop sink, "non-pinned table snapshot".)"""
    for frame in frames:
        frame.agg(*[F.count(F.col(f"`{c}`")) for c in frame.columns]).collect()
