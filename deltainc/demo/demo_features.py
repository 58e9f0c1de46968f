"""The demo's feature job: a feature table of the ledger's transactions from two sources, each transaction with
its account's risk score as of the transaction (asof, backward, TrxDT against the score's ValidFrom) and the
payment engine's record of it (left on TrxId).

A score is delivered up to two days after it became valid, so a transaction first gets the score known so far
(provisional) and a nearer score that arrives later replaces it; a payment record may come 11 days late. A row is
final when both sources are. The last days run one at a time to show that; a one-shot reload into a second table
must give the same rows. The risk scores are a third sample source (`risk_scores`), for as-of joins.
"""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from deltainc import pipeline
from deltainc.demo.demo_result import FeatureDay, FeatureResult, feature_table, same_rows
from deltainc.demo.jobs import feature_job
from deltainc.demo.sample_data import ACCOUNT_NAMES, SECONDS_PER_DAY, SampleSpec
from deltainc.join.options import JoinType
from deltainc.time_units import to_index

__all__ = ["run_features", "SHOWN_DAYS", "risk_scores"]

SHOWN_DAYS = 5  # the last days, run one at a time (half the days of a shorter demo)
_IDENTITY = ("TrxId", "RecDate_A")  # one ledger row (a corrected record is a new row with a later RecDate)
_SCORE = "risk_ScoreId"


Scores = dict[tuple[object, ...], object]  # a ledger row's identity -> its score


def _rows(spark: SparkSession, path: Path) -> list[Row]:
    """The target's rows as the day's table needs them (one Spark read): identity, score and outcome."""
    if not (path / "_delta_log").is_dir():
        return []
    return spark.read.format("delta").load(str(path)).select(*_IDENTITY, _SCORE, "JoinType").collect()


def _provisional(rows: list[Row]) -> Scores:
    """The provisional rows: the ledger row's identity -> its score so far."""
    return {tuple(r[c] for c in _IDENTITY): r[_SCORE] for r in rows if r["JoinType"] == int(JoinType.PROVISIONAL)}


def _replaced(rows: list[Row], before: Scores) -> int:
    """How many of `before`'s provisional scores `rows` hold another score for."""
    now = {(tuple(r[c] for c in _IDENTITY), r[_SCORE]) for r in rows}
    return sum(1 for identity, score in now if before.get(identity, score) != score)


def _by_type(rows: list[Row]) -> dict[int, int]:
    return dict(Counter(int(r["JoinType"]) for r in rows))


def run_features(root: Path, spark: SparkSession, spec: SampleSpec, echo: Callable[[str], None]) -> FeatureResult:
    """Build the feature table (the risk scores are under `root` already) up to the last SHOWN_DAYS days in one
    run, then one run per day, then reload it in one run into a second table and compare."""
    job, reload = feature_job(root, "demo_features", spec.start), feature_job(root, "demo_features_reload", spec.start)
    target = root / f"target_{job.name}"
    last = spec.start + dt.timedelta(days=spec.days - 1)
    shown = min(SHOWN_DAYS, max(1, spec.days // 2))
    first_shown = last - dt.timedelta(days=shown - 1)
    echo(
        "Feature table from two sources: each ledger transaction with its account's risk score as of TrxDT (asof, "
        "backward, look_back_time 30, max_waiting_time 2: a score may be delivered 2 days late) and the payment "
        "engine's record (left on TrxId, max_waiting_time 11); a row is final when both are; "
        f"up to {first_shown} in one run, then daily"
    )
    if first_shown > spec.start:
        pipeline.run(job, until=first_shown - dt.timedelta(days=1), spark=spark)
    days: list[FeatureDay] = []
    current = first_shown
    before = _provisional(_rows(spark, target))
    while current <= last:
        pipeline.run(job, until=current, spark=spark)
        now = _rows(spark, target)
        counts = _by_type(now)
        matched = (JoinType.SAME_TIME, JoinType.A_LATE, JoinType.B_LATE)
        days.append(
            FeatureDay(
                day=current,
                final=sum(counts.get(int(code), 0) for code in matched),
                provisional=counts.get(int(JoinType.PROVISIONAL), 0),
                waiting=counts.get(int(JoinType.A_WAITING), 0),
                timed_out=counts.get(int(JoinType.A_TIMED_OUT), 0),
                replaced=_replaced(now, before),
            )
        )
        before = _provisional(now)
        current += dt.timedelta(days=1)
    echo(feature_table(tuple(days)))
    pipeline.run(reload, spark=spark)
    daily = spark.read.format("delta").load(str(target))
    equal = same_rows(daily, spark.read.format("delta").load(str(root / f"target_{reload.name}")))
    rows = daily.count()
    echo(f"Feature table reloaded in one run into a second table: equal to the daily one: {'yes' if equal else 'NO'}")
    return FeatureResult(tuple(days), rows, equal)


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
