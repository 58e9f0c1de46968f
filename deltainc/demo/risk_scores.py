"""A third sample source for as-of joins: each account's risk score, re-rated every few days, delivered late."""

from __future__ import annotations

import datetime as dt
import random

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deltainc.demo.sample_data import ACCOUNT_NAMES, SECONDS_PER_DAY, SampleSpec
from deltainc.join.windows import to_index

__all__ = ["RISK_SCHEMA", "risk_scores"]

RISK_SCHEMA = "ScoreId long, AccountName string, ValidFrom timestamp, Risk double, RecDate date"
# How many days after it became valid a risk score is delivered (RecDate - day of ValidFrom), and how often.
RISK_DELIVERY_DELAYS: tuple[tuple[int, float], ...] = ((0, 0.6), (1, 0.3), (2, 0.1))


def risk_scores(spark: SparkSession, spec: SampleSpec, every_days: float = 3.0) -> DataFrame:
    """A third source for as-of joins: each account's risk score, re-rated about every `every_days` days at a
    random time of day (ValidFrom), delivered 0-2 days later (RecDate); every account has a rating from the start."""
    rng = random.Random(spec.seed)
    rows: list[tuple[int, str, int, float, dt.date]] = []
    for account in ACCOUNT_NAMES:
        for offset in range(spec.days):
            if offset and rng.random() >= 1 / every_days:
                continue
            valid_from = to_index(spec.start) * SECONDS_PER_DAY + offset * SECONDS_PER_DAY
            # The first rating is valid from the day before the start (a ledger row may be booked the day before).
            valid_from += rng.randrange(SECONDS_PER_DAY) if offset else -SECONDS_PER_DAY
            delay = rng.choices([d for d, _ in RISK_DELIVERY_DELAYS], [w for _, w in RISK_DELIVERY_DELAYS])[0]
            delivered = spec.start + dt.timedelta(days=min(offset + delay, spec.days - 1))
            rows.append((len(rows) + 1, account, valid_from, round(rng.random(), 3), delivered))
    raw = spark.createDataFrame(rows, "ScoreId long, AccountName string, seconds long, Risk double, RecDate date")
    return raw.select("ScoreId", "AccountName", F.timestamp_seconds("seconds").alias("ValidFrom"), "Risk", "RecDate")
