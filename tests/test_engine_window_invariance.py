"""Properties on random data: consecutive daily windows give, together, exactly what one window spanning them
gives; and one window gives the rows of the seed library's rules (re-stated below in plain Python)."""

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


Rows = list[tuple[int, int, int]]  # (key, row id, day offset from DAY0)


def _rows(pairs: list[tuple[int, int, int]], orphans: list[tuple[int, int]]) -> tuple[Rows, Rows]:
    """A rows, and B rows: most A rows' partner (delayed), plus B rows of random keys and days."""
    a = [(k, i, d) for i, (k, d, _) in enumerate(pairs)]
    b = [(k, i, d + delay) for i, (k, d, delay) in enumerate(pairs) if i % 4 != 3]
    b += [(k, 100 + i, d) for i, (k, d) in enumerate(orphans)]
    return a, b


def _frames(
    spark: SparkSession, pairs: list[tuple[int, int, int]], orphans: list[tuple[int, int]]
) -> tuple[DataFrame, DataFrame]:
    a, b = _rows(pairs, orphans)
    return (
        spark.createDataFrame([(k, i, DAY0 + dt.timedelta(days=d)) for k, i, d in a], "k int, ia int, RecDate date"),
        spark.createDataFrame([(k, i, DAY0 + dt.timedelta(days=d)) for k, i, d in b], "k int, ib int, RecDate date"),
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


def _seed(a: Rows, b: Rows, how: str, lb: int, mw: int, s: int, e: int, enforce: bool) -> Counter[tuple]:
    """The seed library's inc_join (include_waiting) on day offsets: its read filters, its optional sliding join
    window (without it, every B row read can match), then WaitingTime, JoinType and the output window filter."""
    out: Counter[tuple] = Counter()
    b_read = [(kb, ib, tb) for kb, ib, tb in b if s - lb - mw <= tb <= e]
    for k, ia, ta in (row for row in a if s - mw <= row[2] <= e):
        matches = [(ib, tb) for kb, ib, tb in b_read if kb == k and (not enforce or ta - lb <= tb <= ta + mw)]
        rows: list[tuple[int | None, int, int | None, int]] = []
        if how != "left_anti":
            rows = [(ib, max(ta, tb), tb - ta, 1 if tb == ta else 2 if tb < ta else 3) for ib, tb in matches]
        if not matches and how != "inner":
            wait = min(mw, max(0, e - ta))
            rows = [(None, ta + wait, None, 4 if wait == mw else 5)]
        for ib, t, diff, code in rows:
            if s <= t <= e:
                out[(k, ia, t, code) if how == "left_anti" else (k, ia, ib, t, diff, code)] += 1
    return out


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pairs=rows,
    orphans=st.lists(st.tuples(st.integers(0, 5), st.integers(-3, DAYS - 1)), max_size=4),
    lb=st.integers(0, 3),
    mw=st.integers(0, 4),
    start=st.integers(0, DAYS - 1),
    width=st.integers(0, 4),
)
def test_one_window_gives_the_seed_librarys_rows_with_and_without_the_sliding_join_window(
    spark: SparkSession,
    pairs: list[tuple[int, int, int]],
    orphans: list[tuple[int, int]],
    lb: int,
    mw: int,
    start: int,
    width: int,
) -> None:
    df_a, df_b = _frames(spark, pairs, orphans)
    a, b = _rows(pairs, orphans)
    s, e = start, start + width
    for enforce in (False, True):
        for how in ("inner", "left", "left_anti"):
            columns = (
                "k, ia, RecDate, JoinType" if how == "left_anti" else "k, ia, ib, RecDate, DiffArrivalTime, JoinType"
            )
            options = IncJoinSettings(include_waiting=True, enforce_sliding_join_window=enforce, output_select=columns)
            first, last = DAY0 + dt.timedelta(days=s), DAY0 + dt.timedelta(days=e)
            out = inc_join(df_a, df_b, how, ["k"], None, lb, mw, first, last, options)
            got = Counter(tuple((v - DAY0).days if isinstance(v, dt.date) else v for v in row) for row in out.collect())
            assert got == _seed(a, b, how, lb, mw, s, e, enforce), (how, enforce, lb, mw, s, e)
