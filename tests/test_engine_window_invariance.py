"""Property: consecutive daily windows give, together, exactly what one window spanning them gives."""

from __future__ import annotations

import datetime as dt
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession

from deltainc import IncJoinSettings, inc_join

DAY0 = dt.date(2025, 1, 1)
DAYS = 8

rows = st.lists(
    st.tuples(st.integers(0, 5), st.integers(0, DAYS - 1), st.integers(-4, 6)),  # key, A day, B delay
    min_size=1,
    max_size=14,
)


def _frames(
    spark: SparkSession, pairs: list[tuple[int, int, int]], orphans: list[tuple[int, int]]
) -> tuple[DataFrame, DataFrame]:
    a = [(k, i, DAY0 + dt.timedelta(days=d)) for i, (k, d, _) in enumerate(pairs)]
    b = [(k, i, DAY0 + dt.timedelta(days=d + delay)) for i, (k, d, delay) in enumerate(pairs) if i % 4 != 3]
    b += [(k, 100 + i, DAY0 + dt.timedelta(days=d)) for i, (k, d) in enumerate(orphans)]
    return (
        spark.createDataFrame(a, "k int, ia int, RecDate date"),
        spark.createDataFrame(b, "k int, ib int, RecDate date"),
    )


def _bag(df: DataFrame) -> Counter[tuple]:
    return Counter(tuple(r) for r in df.collect())


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pairs=rows,
    orphans=st.lists(st.tuples(st.integers(0, 5), st.integers(-3, DAYS - 1)), max_size=4),
    lb=st.integers(0, 3),
    mw=st.integers(0, 4),
)
def test_daily_windows_union_to_the_spanning_window(
    spark: SparkSession, pairs: list[tuple[int, int, int]], orphans: list[tuple[int, int]], lb: int, mw: int
) -> None:
    df_a, df_b = _frames(spark, pairs, orphans)
    first, last = DAY0, DAY0 + dt.timedelta(days=DAYS + 3)
    for how in ("inner", "left", "left_anti"):
        options = IncJoinSettings(include_waiting=False, enforce_sliding_join_window=True)
        whole = inc_join(df_a, df_b, how, ["k"], None, lb, mw, first, last, options)
        daily: DataFrame | None = None
        day = first
        while day <= last:
            out = inc_join(df_a, df_b, how, ["k"], None, lb, mw, day, day, options)
            daily = out if daily is None else daily.unionByName(out)
            day += dt.timedelta(days=1)
        assert daily is not None
        assert _bag(daily) == _bag(whole), (how, lb, mw)
