"""The naive full recompute: what a user writes without deltainc to get the target as of a day (a plain join over
every row so far, the target overwritten), and the target's columns computed from a joined row."""

from __future__ import annotations

import datetime as dt

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks.bench import read_delta
from benchmarks.outcomes import OUTPUT_COLUMNS

__all__ = ["naive_output", "overwrite", "target_columns"]


def naive_output(
    spark: SparkSession, path_a: str, path_b: str, last: dt.date, look_back: int, max_wait: int
) -> tuple[DataFrame, DataFrame, DataFrame]:
    """(scan of A, scan of B, output): what a user writes without deltainc to get the target as of `last`.

    Every row of A and B with RecDate <= last, a plain left join on TrxId with B.RecDate in
    [A.RecDate - look_back, A.RecDate + max_wait], and the outcome columns computed as of `last`.
    """
    a = read_delta(spark, path_a).where(F.col("RecDate") <= F.lit(last))
    b = read_delta(spark, path_b).where(F.col("RecDate") <= F.lit(last))
    left = a.select(
        "TrxId", "TrxDT", "CreditDebit", "AmountEuro", "AccountName", F.col("RecDate").alias("RecDate_A")
    ).alias("a")
    right = b.select(
        F.col("TrxId").alias("b_TrxId"), "SepaId", "CountryCode", F.col("RecDate").alias("RecDate_B")
    ).alias("b")
    condition = (
        (F.col("TrxId") == F.col("b_TrxId"))
        & (F.col("RecDate_B") >= F.date_sub("RecDate_A", look_back))
        & (F.col("RecDate_B") <= F.date_add("RecDate_A", max_wait))
    )
    joined = left.join(right, condition, "left")
    waiting = F.least(F.lit(max_wait), F.greatest(F.lit(0), F.datediff(F.lit(last), "RecDate_A")))
    return a, b, joined.select(*target_columns(waiting, max_wait))


def target_columns(waiting: Column, max_wait: int) -> list[Column]:
    """The target's columns from a joined row (RecDate_B null when unmatched) and its days waited so far."""
    matched = F.col("RecDate_B").isNotNull()
    diff = F.datediff("RecDate_B", "RecDate_A")
    join_type = (
        F.when(matched & (diff == 0), 1)
        .when(matched & (diff < 0), 2)
        .when(matched, 3)
        .when(waiting == F.lit(max_wait), 4)
        .otherwise(5)
        .cast("int")
    )
    computed = {
        "RecDate": F.when(matched, F.greatest("RecDate_A", "RecDate_B")).otherwise(F.date_add("RecDate_A", waiting)),
        "DiffArrivalTime": F.when(matched, diff).cast("int"),
        "WaitingTime": F.when(~matched, waiting).cast("int"),
        "JoinType": join_type,
    }
    return [computed.get(name, F.col(name)).alias(name) for name in OUTPUT_COLUMNS]


def overwrite(frame: DataFrame, path: str, partition_by: tuple[str, ...]) -> None:
    """Write `frame` over the Delta table at `path`, partitioned by `partition_by` (none when empty)."""
    writer = frame.write.format("delta").mode("overwrite").option("overwriteSchema", "true")
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    writer.save(path)
