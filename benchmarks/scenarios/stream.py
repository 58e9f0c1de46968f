"""The `stream` scenario: Structured Streaming's stream-stream left outer join with watermarks over copies of the
sources, AvailableNow + foreachBatch MERGE, for the same day as a deltainc daily run."""

from __future__ import annotations

import datetime as dt
import shutil
import time
from dataclasses import dataclass
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from benchmarks.bench import Bench, fresh, read_delta, restorer, snapshot
from benchmarks.data import append_day, copy_days, table_version
from benchmarks.naive_join import target_columns
from benchmarks.outcomes import MATCHED, OUTCOMES, OUTPUT_COLUMNS, outcome_counts
from benchmarks.spark_jobs import SparkJobs
from benchmarks.timing import Measurement

__all__ = ["StreamResult", "stream_phase"]


@dataclass
class StreamResult:
    """Structured Streaming vs. deltainc for the same day, on copies of the sources."""

    day: int
    setup_s: float  # copies, the stream over days 1..D-1, deltainc's target to day D-1 (untimed)
    stream: Measurement  # outputs: dict with batches and input rows
    daily: Measurement  # deltainc first-time daily runs on the copies; outputs: WindowReport
    outcomes: list[tuple[str, int, int, int, int]]  # (outcome, deltainc rows, stream rows, only deltainc, only stream)
    cannot_revise: int  # rows the stream emitted as timed out (final) whose A row deltainc has matched
    late_timeouts: int  # deltainc's rows timing out on day D itself (A.RecDate = D - mw) that the stream still holds
    watermark_delay: str

    @property
    def progress(self) -> dict[str, Any]:
        progress: dict[str, Any] = self.stream.last
        return progress


def _stream_rows(batch: DataFrame, max_wait: int) -> DataFrame:
    """A micro-batch of the stream-stream join in the target's layout: a pair, or an A row that timed out."""
    return batch.select(*target_columns(F.lit(max_wait), max_wait))


def _start_stream(bench: Bench, path_a: str, path_b: str, target: str, checkpoint: str, delay: str) -> dict[str, Any]:
    """One AvailableNow run of the stream-stream left outer join, MERGEd batch by batch into `target`."""
    spark, lb, mw = bench.spark, bench.look_back, bench.max_wait
    a = (
        spark.readStream.format("delta")
        .load(path_a)
        .select(
            "TrxId",
            "TrxDT",
            "CreditDebit",
            "AmountEuro",
            "AccountName",
            F.col("RecDate").alias("RecDate_A"),
            F.col("RecDate").cast("timestamp").alias("a_ts"),
        )
        .withWatermark("a_ts", delay)
    )
    b = (
        spark.readStream.format("delta")
        .load(path_b)
        .select(
            F.col("TrxId").alias("b_TrxId"),
            "SepaId",
            "CountryCode",
            F.col("RecDate").alias("RecDate_B"),
            F.col("RecDate").cast("timestamp").alias("b_ts"),
        )
        .withWatermark("b_ts", delay)
    )
    condition = F.expr(f"TrxId = b_TrxId AND b_ts >= a_ts - INTERVAL {lb} DAYS AND b_ts <= a_ts + INTERVAL {mw} DAYS")
    joined = a.join(b, condition, "leftOuter")
    identity = (
        "t.TrxId <=> s.TrxId AND t.RecDate_A = s.RecDate_A AND t.SepaId <=> s.SepaId AND t.RecDate_B <=> s.RecDate_B"
    )

    def merge_batch(batch: DataFrame, _batch_id: int) -> None:
        rows = _stream_rows(batch, mw).persist()
        try:
            bounds = rows.agg(F.min("RecDate_A").alias("lo"), F.max("RecDate_A").alias("hi")).first()
            if bounds is None or bounds["lo"] is None:
                return
            prune = f" AND t.RecDate_A >= DATE'{bounds['lo']}' AND t.RecDate_A <= DATE'{bounds['hi']}'"
            (
                DeltaTable.forPath(batch.sparkSession, target)
                .alias("t")
                .merge(rows.alias("s"), identity + prune)
                .whenNotMatchedInsertAll()
                .execute()
            )
        finally:
            rows.unpersist()

    query = (
        joined.writeStream.foreachBatch(merge_batch)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .outputMode("append")
        .start()
    )
    query.awaitTermination()
    failure = query.exception()
    if failure is not None:
        raise RuntimeError(f"streaming query failed: {failure}")
    progress = query.recentProgress
    return {
        "batches": len(progress),
        "input_rows": sum(int(p.get("numInputRows", 0) or 0) for p in progress),
        "watermark": progress[-1].get("eventTime", {}).get("watermark") if progress else None,
    }


def stream_phase(bench: Bench, number: int, delay: str = "0 seconds") -> StreamResult:
    """Scenario 4 for day `number`: the stream and deltainc both first process days 1..D-1, then day D."""
    spark, echo = bench.spark, bench.echo
    folder = bench.work / "stream"
    fresh(folder)
    path_a, path_b = str(folder / "A"), str(folder / "B")
    target, checkpoint, saved = folder / "stream_target", folder / "checkpoint", folder / "checkpoint_saved"
    job = bench.job("stream_deltainc", max_window=0, path_a=path_a, path_b=path_b)
    previous, today = bench.sources.day(number - 1), bench.sources.day(number)

    echo(f"  copies of A and B with days 1..{number - 1}; the stream and deltainc process them (untimed)")
    started = time.perf_counter()
    copy_days(spark, bench.sources.path_a, path_a, previous)
    copy_days(spark, bench.sources.path_b, path_b, previous)
    bench.run(job, number - 1)
    schema = read_delta(spark, str(job.target.path)).select(*OUTPUT_COLUMNS).schema
    writer = spark.createDataFrame([], schema).write.format("delta").mode("overwrite")
    if bench.target_partitioning:
        writer = writer.partitionBy(*bench.target_partitioning)
    writer.save(str(target))
    history = _start_stream(bench, path_a, path_b, str(target), str(checkpoint), delay)
    echo(f"    stream over the history: {history}")
    append_day(spark, bench.sources.path_a, path_a, today)
    append_day(spark, bench.sources.path_b, path_b, today)
    shutil.copytree(checkpoint, saved)
    stream_version = table_version(spark, str(target))
    setup_s = time.perf_counter() - started
    echo(f"    set-up {setup_s:.1f} s; day {number} appended to the copies")

    def reset_stream(i: int) -> None:
        if i == 0:
            return
        shutil.rmtree(checkpoint)
        shutil.copytree(saved, checkpoint)
        if table_version(spark, str(target)) != stream_version:
            DeltaTable.forPath(spark, str(target)).restoreToVersion(stream_version)

    stream = bench.measure(
        f"stream AvailableNow, day {number}",
        lambda: _start_stream(bench, path_a, path_b, str(target), str(checkpoint), delay),
        setup=reset_stream,
    )
    echo(f"    stream over day {number}: {stream.last}")
    before = snapshot(bench, job)
    daily = bench.measure(
        f"deltainc daily run on the copies, day {number}",
        lambda: bench.daily(job, number),
        setup=restorer(bench, before),
        counter=SparkJobs(spark),
    )

    ours = read_delta(spark, str(job.target.path)).select(*OUTPUT_COLUMNS)
    theirs = read_delta(spark, str(target)).select(*OUTPUT_COLUMNS)
    counts_ours, counts_theirs = outcome_counts(ours), outcome_counts(theirs)
    only_ours = outcome_counts(ours.exceptAll(theirs))
    only_theirs = outcome_counts(theirs.exceptAll(ours))
    outcomes = [
        (name, counts_ours[name], counts_theirs[name], only_ours[name], only_theirs[name]) for name in OUTCOMES.values()
    ]
    matched_a = ours.where(F.col("JoinType").isin(*MATCHED)).select("TrxId", "RecDate_A").distinct()
    cannot_revise = theirs.where(F.col("JoinType") == 4).join(matched_a, ["TrxId", "RecDate_A"], "left_semi").count()
    due_today = today - dt.timedelta(days=bench.max_wait)
    late_timeouts = (
        ours.exceptAll(theirs).where((F.col("JoinType") == 4) & (F.col("RecDate_A") == F.lit(due_today))).count()
    )
    return StreamResult(number, setup_s, stream, daily, outcomes, cannot_revise, late_timeouts, delay)
