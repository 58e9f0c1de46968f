"""As-of joins (how = "asof"): one window on complete data is Polars' join_asof; the rules of `deltainc.join.asof`
(which B row is nearest, when a match is final, how an unmatched A row waits); any split into windows gives the
same rows; bad settings are refused."""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter

import polars as pl
import pytest
from frames import frame
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession

from deltainc import ConfigError, IncJoinSettings, JoinType, SchemaError, inc_join

pytestmark = pytest.mark.spark

DAY0 = dt.date(2025, 1, 1)
A_SCHEMA = "k int, aid int, RecDate date, ts timestamp"
B_SCHEMA = "k int, bid int, RecDate date, ts timestamp, score double"
STRATEGIES = ("backward", "forward", "nearest")


def day(n: int) -> dt.date:
    return DAY0 + dt.timedelta(days=n)


def at(n: int, hour: int = 0, minute: int = 0) -> dt.datetime:
    return dt.datetime(DAY0.year, DAY0.month, DAY0.day) + dt.timedelta(days=n, hours=hour, minutes=minute)


def asof(
    df_a: DataFrame,
    df_b: DataFrame,
    strategy: str,
    lb: int,
    mw: int,
    s: int,
    e: int,
    asof_col: str | None = None,
    tie_break: tuple[str, ...] = (),
    include_waiting: bool = True,
    select: str = "aid, bid, RecDate, WaitingTime, JoinType",
) -> list[tuple]:
    """The as-of join's rows for window [day s, day e], sorted, dates as day numbers."""
    options = IncJoinSettings(
        asof_strategy=strategy,  # type: ignore[arg-type]
        asof_col=asof_col,
        asof_tie_break=tie_break,
        include_waiting=include_waiting,
        output_select=select,
    )
    out = inc_join(df_a, df_b, "asof", ["k"], None, lb, mw, day(s), day(e), options)
    rows = [tuple((v - DAY0).days if type(v) is dt.date else v for v in row) for row in out.collect()]
    return sorted(rows, key=lambda row: tuple((v is None, v) for v in row))


# --- Polars' join_asof on complete data -----------------------------------------------------------------------


def _random_sources(seed: int, days: int, mw: int) -> tuple[list[tuple], list[tuple]]:
    """A rows on days 0..days, B rows on days 0..days + mw (so every A row's match is final by then); each row's
    ts lies in its RecDate's day, and several B rows share a day (ties by units)."""
    rng = random.Random(seed)
    a = [(rng.randint(1, 3), i, day(d := rng.randint(0, days)), at(d, rng.randint(0, 23), rng.randint(0, 59)))
         for i in range(30)]  # fmt: skip
    b = [
        (rng.randint(1, 3), 100 + i, day(d := rng.randint(0, days + mw)), at(d, rng.randint(0, 23)), rng.random())
        for i in range(16)
    ]
    return a, b


def _polars(a: list[tuple], b: list[tuple], strategy: str, on: str, tolerance: dt.timedelta) -> Counter[tuple]:
    """Polars' answer. Among B rows with one time Polars takes the last (backward, nearest) or the first (forward)
    in B's order; deltainc takes the smallest asof_tie_break (bid), so B is sorted to make them the same row."""
    left = pl.DataFrame(a, schema=["k", "aid", "RecDate", "ts"], orient="row").sort(on)
    right = pl.DataFrame(b, schema=["k", "bid", "RecDate", "ts", "score"], orient="row")
    right = right.sort([on, "bid"], descending=[False, strategy != "forward"])
    joined = left.join_asof(
        right, on=on, by="k", strategy=strategy, tolerance=tolerance, coalesce=False,  # type: ignore[arg-type]
        check_sortedness=False,
    )  # fmt: skip
    suffix = "_right"
    columns = ["k", "aid", "RecDate", "ts", "bid", f"RecDate{suffix}", f"ts{suffix}", "score"]
    return Counter(tuple(row) for row in joined.select(columns).iter_rows())


@pytest.mark.parametrize("asof_col", [None, "ts"])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_one_window_on_complete_data_is_polars_join_asof(
    spark: SparkSession, strategy: str, asof_col: str | None
) -> None:
    days, lb, mw = 20, 3, 3
    tolerance = {"backward": lb, "forward": mw, "nearest": lb}[strategy]
    if strategy == "backward":
        mw = 2  # the forward tolerance plays no part in a backward join
    if strategy == "forward":
        lb = 1  # nor the backward one in a forward join
    a, b = _random_sources(seed=len(strategy) + (7 if asof_col else 0), days=days, mw=mw)
    df_a, df_b = frame(spark, a, A_SCHEMA), frame(spark, b, B_SCHEMA)
    options = IncJoinSettings(
        asof_strategy=strategy,  # type: ignore[arg-type]
        asof_col=asof_col,
        asof_tie_break=("bid",),
        output_select="k, aid, RecDate_A, ts_A, bid, RecDate_B, ts_B, score",
    )
    out = inc_join(df_a, df_b, "asof", "k", None, lb, mw, day(0), day(days + mw), options)
    got = Counter(tuple(row) for row in out.collect())

    expected = _polars(a, b, strategy, asof_col or "RecDate", dt.timedelta(days=tolerance))
    assert sum(got.values()) == len(a)  # every A row once, final
    assert got == expected
    assert any(row[4] is not None for row in got) and any(row[4] is None for row in got)  # matches and misses


# --- The rules ------------------------------------------------------------------------------------------------


def test_a_backward_match_by_units_is_final_on_a_rows_day(spark: SparkSession) -> None:
    df_a = frame(spark, [(1, 1, day(10), None)], A_SCHEMA)
    df_b = frame(spark, [(1, 11, day(8), None, 0.1), (1, 12, day(11), None, 0.2)], B_SCHEMA)
    assert asof(df_a, df_b, "backward", 3, 2, 10, 10) == [(1, 11, 10, None, JoinType.A_LATE)]


def test_a_backward_miss_by_units_times_out_at_once(spark: SparkSession) -> None:
    """No B row after A's own RecDate can be a backward match, so there is nothing to wait for."""
    df_a = frame(spark, [(1, 1, day(10), None)], A_SCHEMA)
    df_b = frame(spark, [(1, 11, day(11), None, 0.1)], B_SCHEMA)
    assert asof(df_a, df_b, "backward", 3, 2, 10, 10) == [(1, None, 10, 0, JoinType.A_TIMED_OUT)]


def test_a_forward_match_is_final_when_found_and_a_miss_waits_max_waiting_time(spark: SparkSession) -> None:
    df_a = frame(spark, [(1, 1, day(10), None), (2, 2, day(10), None)], A_SCHEMA)
    df_b = frame(spark, [(1, 11, day(12), None, 0.1), (1, 12, day(13), None, 0.2)], B_SCHEMA)
    assert asof(df_a, df_b, "forward", 0, 3, 10, 11) == [
        (1, None, 11, 1, JoinType.A_WAITING),
        (2, None, 11, 1, JoinType.A_WAITING),
    ]
    assert asof(df_a, df_b, "forward", 0, 3, 10, 13) == [
        (1, 11, 12, None, JoinType.B_LATE),
        (2, None, 13, 3, JoinType.A_TIMED_OUT),
    ]


def test_a_nearest_match_is_provisional_until_no_nearer_b_row_can_arrive(spark: SparkSession) -> None:
    """A on day 10, B two days before: a B row on day 11 or 12 would be as near or nearer, so the match is final on
    day 12; a B row on day 11 replaces it and is final at once (anything later is farther)."""
    df_a = frame(spark, [(1, 1, day(10), None)], A_SCHEMA)
    early = frame(spark, [(1, 11, day(8), None, 0.1)], B_SCHEMA)
    assert asof(df_a, early, "nearest", 3, 3, 10, 10) == [(1, 11, 10, 0, JoinType.PROVISIONAL)]
    assert asof(df_a, early, "nearest", 3, 3, 10, 11) == [(1, 11, 11, 1, JoinType.PROVISIONAL)]
    assert asof(df_a, early, "nearest", 3, 3, 10, 12) == [(1, 11, 12, None, JoinType.A_LATE)]
    nearer = early.unionByName(frame(spark, [(1, 12, day(11), None, 0.2)], B_SCHEMA))
    assert asof(df_a, nearer, "nearest", 3, 3, 10, 10) == [(1, 11, 10, 0, JoinType.PROVISIONAL)]
    assert asof(df_a, nearer, "nearest", 3, 3, 10, 11) == [(1, 12, 11, None, JoinType.B_LATE)]


def test_nearest_prefers_the_later_b_row_when_two_are_as_near(spark: SparkSession) -> None:
    df_a = frame(spark, [(1, 1, day(10), None)], A_SCHEMA)
    df_b = frame(spark, [(1, 11, day(9), None, 0.1), (1, 12, day(11), None, 0.2)], B_SCHEMA)
    assert asof(df_a, df_b, "nearest", 3, 3, 10, 11) == [(1, 12, 11, None, JoinType.B_LATE)]


def test_with_asof_col_a_match_is_final_only_when_the_sliding_join_window_closes(spark: SparkSession) -> None:
    """The score valid from 10:00 on day 9 is the latest before the event at 12:00 on day 10, until a score valid
    from 08:00 on day 10 arrives a day late: it replaces the provisional match, final on day 10 + mw."""
    df_a = frame(spark, [(1, 1, day(10), at(10, 12))], A_SCHEMA)
    df_b = frame(
        spark,
        [(1, 11, day(9), at(9, 10), 0.1), (1, 12, day(11), at(10, 8), 0.2), (1, 13, day(11), at(10, 13), 0.3)],
        B_SCHEMA,
    )
    assert asof(df_a, df_b, "backward", 2, 2, 10, 10, "ts") == [(1, 11, 10, 0, JoinType.PROVISIONAL)]
    assert asof(df_a, df_b, "backward", 2, 2, 10, 11, "ts") == [(1, 12, 11, 1, JoinType.PROVISIONAL)]
    assert asof(df_a, df_b, "backward", 2, 2, 10, 12, "ts") == [(1, 12, 12, None, JoinType.B_LATE)]


def test_with_asof_col_times_are_compared_exactly_and_the_tolerance_is_in_time_uom_units(spark: SparkSession) -> None:
    df_a = frame(spark, [(1, 1, day(10), at(10, 12))], A_SCHEMA)
    just_in = frame(spark, [(1, 11, day(8), at(8, 12), 0.1)], B_SCHEMA)  # exactly 2 days before
    just_out = frame(spark, [(1, 12, day(8), at(8, 11, 59), 0.2)], B_SCHEMA)  # a minute more
    assert asof(df_a, just_in, "backward", 2, 0, 10, 10, "ts") == [(1, 11, 10, None, JoinType.A_LATE)]
    assert asof(df_a, just_out, "backward", 2, 0, 10, 10, "ts") == [(1, None, 10, 0, JoinType.A_TIMED_OUT)]


def test_equally_near_b_rows_go_to_the_later_delivery_then_to_asof_tie_break(spark: SparkSession) -> None:
    df_a = frame(spark, [(1, 1, day(10), at(10, 12))], A_SCHEMA)
    same_time = [(1, 13, day(9), at(9, 10), 0.1), (1, 12, day(9), at(9, 10), 0.2)]
    df_b = frame(spark, same_time, B_SCHEMA)
    assert asof(df_a, df_b, "backward", 2, 1, 10, 11, "ts", ("bid",)) == [(1, 12, 11, None, JoinType.A_LATE)]
    assert asof(df_a, df_b, "backward", 2, 1, 10, 11, "ts", ("score",)) == [(1, 13, 11, None, JoinType.A_LATE)]
    redelivered = df_b.unionByName(frame(spark, [(1, 14, day(10), at(9, 10), 0.3)], B_SCHEMA))
    assert asof(df_a, redelivered, "backward", 2, 1, 10, 11, "ts", ("bid",)) == [(1, 14, 11, None, JoinType.SAME_TIME)]


def test_without_include_waiting_provisional_rows_are_dropped(spark: SparkSession) -> None:
    df_a = frame(spark, [(1, 1, day(10), None)], A_SCHEMA)
    df_b = frame(spark, [(1, 11, day(8), None, 0.1)], B_SCHEMA)
    assert asof(df_a, df_b, "nearest", 3, 3, 10, 10, include_waiting=False, select="aid, bid, RecDate, JoinType") == []


def test_an_a_row_is_output_once_whatever_the_number_of_candidates(spark: SparkSession) -> None:
    df_a = frame(spark, [(1, 1, day(10), None), (1, 1, day(10), None)], A_SCHEMA)  # a duplicate A row
    df_b = frame(spark, [(1, 10 + i, day(7 + i), None, 0.1) for i in range(4)], B_SCHEMA)
    assert asof(df_a, df_b, "backward", 3, 0, 10, 10) == [(1, 13, 10, None, JoinType.SAME_TIME)] * 2


# --- Any split into windows gives the same rows ------------------------------------------------------------------
# The rules restated on day numbers in plain Python: any split of the days into windows gives the rules' rows of one
# window (checked on many cases without Spark), and the engine gives the rules' rows for any window.

DAYS = 8
Row = tuple[int, int, int, int]  # key, id, RecDate (day number), time of day (minutes)
_rows = st.lists(
    st.tuples(st.integers(0, 2), st.integers(0, DAYS - 1), st.integers(0, 2), st.integers(0, 47)),
    min_size=1,
    max_size=14,
)  # key, day, arrival delay (RecDate = day + delay), half-hour of the day


def _source(rows: list[tuple[int, int, int, int]], first_id: int) -> list[Row]:
    return [(k, first_id + i, d + delay, d * 1440 + 30 * half) for i, (k, d, delay, half) in enumerate(rows)]


def _model(a: list[Row], b: list[Row], strategy: str, exact: bool, lb: int, mw: int, s: int, e: int) -> Counter[tuple]:
    """The as-of rules (deltainc.join.asof) for window [s, e]: (aid, bid, RecDate, WaitingTime, JoinType) rows."""
    scale = 1440 if exact else 1
    out: Counter[tuple] = Counter()
    for k, aid, ta, ma in (row for row in a if s - mw <= row[2] <= e):
        a_time = ma if exact else ta
        found = []
        for kb, bid, tb, mb in (row for row in b if s - lb - mw <= row[2] <= e):
            b_time = mb if exact else tb
            back_ok = a_time - lb * scale <= b_time and (strategy != "backward" or b_time <= a_time)
            ahead_ok = b_time <= a_time + mw * scale and (strategy != "forward" or b_time >= a_time)
            if kb == k and ta - lb <= tb <= ta + mw and back_ok and ahead_ok:
                found.append((abs(b_time - a_time), -b_time, -tb, bid, tb))
        if found:
            *_, bid, tb = min(found)
            delay = mw if exact else {"backward": 0, "forward": tb - ta, "nearest": min(mw, abs(tb - ta))}[strategy]
            if ta + delay <= e:
                row = (aid, bid, ta + delay, None, 1 if tb == ta else 2 if tb < ta else 3)
            else:
                row = (aid, bid, e, e - ta, int(JoinType.PROVISIONAL))
        else:
            limit = 0 if strategy == "backward" and not exact else mw
            waited = min(limit, max(0, e - ta))
            row = (aid, None, ta + waited, waited, 4 if waited == limit else 5)
        if s <= row[2] <= e:
            out[row] += 1
    return out


@settings(max_examples=400, deadline=None)
@given(
    a_rows=_rows,
    b_rows=_rows,
    lb=st.integers(0, 3),
    mw=st.integers(0, 3),
    strategy=st.sampled_from(STRATEGIES),
    exact=st.booleans(),
    cuts=st.sets(st.integers(0, DAYS + 3)),
)
def test_the_rules_final_rows_of_any_windows_and_the_last_ones_waiting_rows_are_the_spanning_windows(
    a_rows: list[tuple[int, int, int, int]],
    b_rows: list[tuple[int, int, int, int]],
    lb: int,
    mw: int,
    strategy: str,
    exact: bool,
    cuts: set[int],
) -> None:
    a, b = _source(a_rows, 0), _source(b_rows, 100)
    last = DAYS + 4
    starts = [0, *sorted(cut + 1 for cut in cuts)]
    parts: Counter[tuple] = Counter()
    for first, after in zip(starts, [*starts[1:], last + 1], strict=True):
        rows = _model(a, b, strategy, exact, lb, mw, first, after - 1)
        parts += rows if after > last else Counter({row: n for row, n in rows.items() if row[4] <= 4})
    assert parts == _model(a, b, strategy, exact, lb, mw, 0, last)


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_any_window_gives_the_rows_of_the_rules(spark: SparkSession, strategy: str, exact: bool) -> None:
    """Dense random sources (seeded), three windows each: the engine's rows are the rules' rows."""
    rng = random.Random(f"{strategy}-{exact}")

    def rows(first_id: int) -> list[Row]:
        drawn = [
            (rng.randint(0, 2), rng.randint(0, DAYS - 1), rng.randint(0, 2), rng.randint(0, 47)) for _ in range(24)
        ]
        return _source(drawn, first_id)

    def timed(rows: list[Row], schema: str) -> DataFrame:
        return frame(spark, [(k, i, day(t), at(0, 0, m)) for k, i, t, m in rows], schema)

    a, b = rows(0), rows(100)
    df_a, df_b = (
        timed(a, "k int, aid int, RecDate date, ts timestamp"),
        timed(b, "k int, bid int, RecDate date, ts timestamp"),
    )
    for _ in range(3):
        lb, mw, s = rng.randint(0, 3), rng.randint(0, 3), rng.randint(0, DAYS)
        e = s + rng.randint(0, 4)
        got = asof(df_a, df_b, strategy, lb, mw, s, e, "ts" if exact else None)
        assert Counter(got) == _model(a, b, strategy, exact, lb, mw, s, e), (lb, mw, s, e)


# --- Bad settings ---------------------------------------------------------------------------------------------


def _sources(spark: SparkSession) -> tuple[DataFrame, DataFrame]:
    return frame(spark, [], A_SCHEMA), frame(spark, [], B_SCHEMA)


def test_asof_needs_the_sliding_join_window(spark: SparkSession) -> None:
    df_a, df_b = _sources(spark)
    with pytest.raises(ConfigError, match=r"^how: 'asof' needs enforce_sliding_join_window = true"):
        inc_join(df_a, df_b, "asof", "k", other_settings=IncJoinSettings(enforce_sliding_join_window=False))


@pytest.mark.parametrize(
    ("asof_col", "error", "message"),
    [
        ("missing", SchemaError, r"^asof_col: column 'missing' missing from source_a"),
        ("bid", SchemaError, r"^asof_col: column 'bid' missing from source_a"),
        ("aid", SchemaError, r"^asof_col: column 'aid' of source_a must be a date or timestamp, got int"),
        ("k", ConfigError, r"^asof_col: 'k' is a join key"),
    ],
)
def test_asof_col_must_be_a_time_column_of_both_sources(
    spark: SparkSession, asof_col: str, error: type[Exception], message: str
) -> None:
    df_a, df_b = _sources(spark)
    with pytest.raises(error, match=message):
        inc_join(df_a, df_b, "asof", "k", other_settings=IncJoinSettings(asof_col=asof_col))


def test_asof_col_must_be_of_one_time_kind_in_both_sources(spark: SparkSession) -> None:
    df_a = frame(spark, [], "k int, RecDate date, ts date")
    df_b = frame(spark, [], "k int, RecDate date, ts timestamp")
    with pytest.raises(SchemaError, match=r"^asof_col: A's 'ts' and B's 'ts' must both be dates or both timestamps"):
        inc_join(df_a, df_b, "asof", "k", other_settings=IncJoinSettings(asof_col="ts"))


def test_b_may_name_its_time_column_otherwise(spark: SparkSession) -> None:
    df_a = frame(spark, [(1, 1, day(10), at(10, 12))], A_SCHEMA)
    df_b = frame(
        spark, [(1, 11, day(9), at(9, 10), 0.1)], "k int, bid int, RecDate date, ValidFrom timestamp, score double"
    )
    options = IncJoinSettings(asof_col="ts", asof_col_b="ValidFrom", output_select="aid, bid, RecDate, JoinType")
    out = inc_join(df_a, df_b, "asof", "k", None, 2, 0, day(10), day(10), options)
    assert [tuple(row) for row in out.collect()] == [(1, 11, day(10), JoinType.A_LATE)]
    with pytest.raises(SchemaError, match=r"^asof_col_b: column 'Valid' missing from source_b"):
        inc_join(df_a, df_b, "asof", "k", other_settings=IncJoinSettings(asof_col="ts", asof_col_b="Valid"))


def test_asof_settings_are_refused_for_other_join_types(spark: SparkSession) -> None:
    df_a, df_b = _sources(spark)
    with pytest.raises(ConfigError, match=r"^asof_col: only for how = 'asof', got how = 'left'"):
        inc_join(df_a, df_b, "left", "k", other_settings=IncJoinSettings(asof_col="ts"))
    with pytest.raises(ConfigError, match=r"^asof_strategy: only for how = 'asof'"):
        inc_join(df_a, df_b, "inner", "k", other_settings=IncJoinSettings(asof_strategy="nearest"))


def test_asof_tie_break_names_columns_of_b(spark: SparkSession) -> None:
    df_a, df_b = _sources(spark)
    with pytest.raises(SchemaError, match=r"^asof_tie_break: column 'aid' missing from source_b"):
        inc_join(df_a, df_b, "asof", "k", other_settings=IncJoinSettings(asof_tie_break=("aid",)))
