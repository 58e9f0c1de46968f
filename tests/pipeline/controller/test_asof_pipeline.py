"""As-of jobs in the pipeline: a provisional match is replaced when a nearer B row arrives, and daily, monthly and
one-run schedules give the engine's output (docs/design.md#the-contract)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from expected import engine_output, same_rows
from frames import frame
from pyspark.sql import SparkSession

from deltainc import JoinType
from deltainc.demo.sample_data import SampleSpec, write_sources
from deltainc.pipeline.controller.commands import backfill, rerun, run
from deltainc.pipeline.delta.sources import latest_commit
from deltainc.pipeline.job.job_config import JobConfig
from jobs import days_from, job_config

pytestmark = pytest.mark.windows

START = dt.date(2025, 3, 1)
TRX_SCHEMA = "TrxId long, CustomerId long, Amount double, EventTime timestamp, RecDate date"
SCORE_SCHEMA = "ScoreId long, CustomerId long, Risk double, EventTime timestamp, RecDate date"


day, at = days_from(START)


def feature_job(root: Path, name: str = "features", max_window: int = 1) -> JobConfig:
    """Transactions with the customer's risk score as of the transaction: a score may arrive up to 2 days late."""
    join = {"how": "asof", "join_cols": ["CustomerId"], "asof_col": "EventTime", "look_back_time": 30,
            "max_waiting_time": 2}  # fmt: skip
    return job_config(root, name, day(9), join, keys=["TrxId"], b_keys=["ScoreId"], sources=("trx", "scores"),
                      max_window=max_window)  # fmt: skip


def target_rows(spark: SparkSession, job: JobConfig) -> list[tuple[Any, ...]]:
    """(TrxId, ScoreId, output day, JoinType) of every target row."""
    found = spark.read.format("delta").load(job.target.path).collect()
    return sorted((r.TrxId, r.ScoreId, (r.RecDate - START).days, r.JoinType) for r in found)


def test_a_nearer_score_arriving_late_replaces_the_provisional_match(spark: SparkSession, tmp_path: Path) -> None:
    """The transaction at 12:00 on day 10 first gets the score valid from day 9; the score valid from 08:00 on day
    10 is delivered on day 11 and replaces it; on day 12 (10 + max_waiting_time) the match is final."""
    trx = [(1, 7, 50.0, at(10, 12), day(10)), (2, 8, 20.0, at(12, 9), day(12))]
    scores = [(70, 7, 0.1, at(9, 10), day(9)), (71, 7, 0.4, at(10, 8), day(11)), (72, 7, 0.9, at(10, 13), day(11))]
    scores += [(80, 8, 0.2, at(12, 8), day(12))]
    frame(spark, trx, TRX_SCHEMA).write.format("delta").save(str(tmp_path / "trx"))
    frame(spark, scores, SCORE_SCHEMA).write.format("delta").save(str(tmp_path / "scores"))
    job = feature_job(tmp_path)

    run(job, until=day(10), spark=spark)
    assert target_rows(spark, job) == [(1, 70, 10, JoinType.PROVISIONAL)]
    report = run(job, until=day(11), spark=spark).windows[0]
    assert target_rows(spark, job) == [(1, 71, 11, JoinType.PROVISIONAL)]
    assert (report.counts["provisional"], report.record.rows_inserted, report.record.rows_deleted) == (1, 1, 1)
    run(job, spark=spark)
    assert target_rows(spark, job) == [(1, 71, 12, JoinType.B_LATE), (2, 80, 12, JoinType.PROVISIONAL)]

    once = feature_job(tmp_path, name="once", max_window=0)
    run(once, spark=spark)
    assert target_rows(spark, once) == target_rows(spark, job)
    version = latest_commit(spark, job.target)["version"]  # type: ignore[index]
    rerun(job, day(10), day(12), spark=spark)
    assert latest_commit(spark, job.target)["version"] == version  # type: ignore[index]


def test_asof_daily_monthly_and_one_run_give_the_engine_output(spark: SparkSession, tmp_path: Path) -> None:
    spec = SampleSpec(start=START, days=8, rows_per_day=6, seed=11, p_no_b=0.2, p_orphan_b=0.3, p_two_b=0.3)
    write_sources(spark, spec, str(tmp_path / "a"), str(tmp_path / "b"))

    def job(name: str, max_window: int) -> JobConfig:
        join = {"how": "asof", "asof_strategy": "nearest", "join_cols": ["TrxId"], "look_back_time": 2,
                "max_waiting_time": 2}  # fmt: skip
        return job_config(tmp_path, name, START, join, keys=["TrxId"], b_keys=["SepaId"], max_window=max_window)

    daily, monthly, once = job("daily", 1), job("monthly", 0), job("once", 0)
    last = day(7)
    assert len(run(daily, spark=spark).windows) == 8
    backfill(monthly, START, last, chunk="month", spark=spark)
    run(once, spark=spark)
    expected = engine_output(spark, daily, last)
    kinds = {r.JoinType for r in expected.select("JoinType").distinct().collect()}
    assert {JoinType.PROVISIONAL, JoinType.A_WAITING, JoinType.A_TIMED_OUT} <= kinds
    for each in (daily, monthly, once):
        actual = spark.read.format("delta").load(each.target.path)
        same_rows(actual, expected)
