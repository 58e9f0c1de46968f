"""The engine gives the same rows with Spark's ANSI SQL mode on (Spark 4's default) and off (Spark 3.5's default):
it never relies on an invalid or overflowing cast quietly turning into NULL."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest
from frames import frame
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deltainc import IncJoinSettings, inc_join

pytestmark = [pytest.mark.spark, pytest.mark.smoke]

T = dt.datetime
A_ROWS = [(1, T(2025, 3, 6, 20, 45)), (2, T(2025, 3, 6, 12, 22)), (3, T(2025, 3, 7, 1, 0)), (4, T(2025, 3, 9, 23, 59))]
B_ROWS = [(1, T(2025, 3, 6, 18, 0)), (2, T(2025, 3, 8, 0, 30)), (3, T(2025, 3, 7, 1, 0)), (5, T(2025, 3, 7, 2, 0))]


@pytest.fixture()
def ansi(spark: SparkSession) -> Iterator[None]:
    """Restore the session's ANSI setting after the test switched it."""
    before = spark.conf.get("spark.sql.ansi.enabled")
    yield
    spark.conf.set("spark.sql.ansi.enabled", before or "false")


def _sources(spark: SparkSession, as_date: bool) -> tuple[DataFrame, DataFrame]:
    frames = []
    for rows in (A_ROWS, B_ROWS):
        df = frame(spark, rows, "TrxId long, RecDate timestamp")
        frames.append(df.withColumn("RecDate", F.to_date("RecDate")) if as_date else df)
    return frames[0], frames[1]


def _rows_under(spark: SparkSession, setting: str, how: str, uom: str) -> list[tuple[object, ...]]:
    spark.conf.set("spark.sql.ansi.enabled", setting)
    a, b = _sources(spark, as_date=uom == "day")
    window = ("2025-03-05", "2025-03-10") if uom == "day" else ("2025-03-05 00:00:00", "2025-03-10 23:00:00")
    out = inc_join(
        a,
        b,
        how,
        ["TrxId"],
        look_back_time=1 if uom == "day" else 24,
        max_waiting_time=2 if uom == "day" else 30,
        output_window_start=window[0],
        output_window_end=window[1],
        other_settings=IncJoinSettings(time_uom=uom, include_waiting=True),
    )
    return sorted(tuple(r) for r in out.collect())


@pytest.mark.parametrize(("how", "uom"), [("left", "day"), ("full_outer", "day"), ("left", "hour"), ("left", "minute")])
def test_the_engine_gives_the_same_rows_with_ansi_mode_on_and_off(
    spark: SparkSession, ansi: None, how: str, uom: str
) -> None:
    on = _rows_under(spark, "true", how, uom)
    off = _rows_under(spark, "false", how, uom)
    assert on and on == off
