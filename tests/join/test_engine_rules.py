"""One test per rule of docs/design.md#join-semantics and docs/design.md#what-a-window-reads, on tiny inline
sources."""

from __future__ import annotations

import datetime as dt

import pytest
from delta.tables import DeltaTable
from frames import frame
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deltainc import IncJoinSettings, JoinType, inc_join
from deltainc.join.engine import read_sources
from deltainc.join.join_spec import check_join

pytestmark = pytest.mark.spark

D = dt.date
DAY0 = D(2025, 3, 10)


def day(offset: int) -> dt.date:
    return DAY0 + dt.timedelta(days=offset)


def sources(spark: SparkSession, a: list[tuple[int, int]], b: list[tuple[int, int]]) -> tuple[DataFrame, DataFrame]:
    """A rows (key, day offset) with a value column; B rows (key, day offset) with a payload column."""
    df_a = frame(spark, [(k, f"a{k}", day(o)) for k, o in a], "k long, va string, RecDate date")
    df_b = frame(spark, [(k, f"b{k}", day(o)) for k, o in b], "k long, vb string, RecDate date")
    return df_a, df_b


def run(
    df_a: DataFrame, df_b: DataFrame, start: int, end: int, lb: int = 0, mw: int = 0, how: str = "left", **kw: object
) -> list[tuple]:
    settings = IncJoinSettings(output_select="k, RecDate, DiffArrivalTime, JoinType", **kw)  # type: ignore[arg-type]
    out = inc_join(df_a, df_b, how, ["k"], None, lb, mw, day(start), day(end), settings)
    return sorted((r.k, (r.RecDate - DAY0).days, r.DiffArrivalTime, r.JoinType) for r in out.collect())


def test_b_outside_the_sliding_join_window_never_matches_whatever_the_window_size(spark: SparkSession) -> None:
    # lb = 1, mw = 2: B three days early or three days late is outside [a - 1, a + 2].
    df_a, df_b = sources(spark, [(1, 0), (2, 0)], [(1, -3), (2, 3)])
    assert run(df_a, df_b, -30, 30, lb=1, mw=2) == [(1, 2, None, 4), (2, 2, None, 4)]


def test_b_on_the_edges_of_the_sliding_join_window_matches(spark: SparkSession) -> None:
    df_a, df_b = sources(spark, [(1, 0), (2, 0)], [(1, -1), (2, 2)])
    assert run(df_a, df_b, -30, 30, lb=1, mw=2) == [(1, 0, -1, 2), (2, 2, 2, 3)]


def test_diff_arrival_time_is_b_minus_a_and_sets_the_join_type(spark: SparkSession) -> None:
    df_a, df_b = sources(spark, [(1, 0), (2, 0), (3, 0)], [(1, 0), (2, -2), (3, 4)])
    assert run(df_a, df_b, 0, 10, lb=2, mw=5) == [
        (1, 0, 0, JoinType.SAME_TIME),
        (2, 0, -2, JoinType.A_LATE),
        (3, 4, 4, JoinType.B_LATE),
    ]


def test_matched_output_recdate_is_the_later_of_a_and_b(spark: SparkSession) -> None:
    df_a, df_b = sources(spark, [(1, 0), (2, 5)], [(1, 3), (2, 4)])
    assert [(k, rec) for k, rec, _, _ in run(df_a, df_b, 0, 10, lb=2, mw=5)] == [(1, 3), (2, 5)]


def unmatched(df_a: DataFrame, df_b: DataFrame, mw: int, start: int, end: int) -> list[tuple]:
    """(key, output day, WaitingTime, JoinType) of a left join with include_waiting."""
    settings = IncJoinSettings(include_waiting=True, output_select="k, RecDate, WaitingTime, JoinType")
    out = inc_join(df_a, df_b, "left", ["k"], None, 0, mw, day(start), day(end), settings)
    return sorted((r.k, (r.RecDate - DAY0).days, r.WaitingTime, r.JoinType) for r in out.collect())


def test_waiting_time_is_the_time_since_a_capped_by_max_waiting_time(spark: SparkSession) -> None:
    df_a, df_b = sources(spark, [(1, 0), (2, 3), (3, 6), (4, 8)], [])
    # W = [8, 8], mw = 4: A of day 3 waited 5, capped at 4 -> timed out on day 7, outside W (so is A of day 0);
    # A of day 6 has waited 2, A of day 8 has waited 0: both still waiting, output on day 8.
    assert unmatched(df_a, df_b, 4, 8, 8) == [(3, 8, 2, JoinType.A_WAITING), (4, 8, 0, JoinType.A_WAITING)]


def test_unmatched_output_recdate_is_a_plus_waiting_time(spark: SparkSession) -> None:
    df_a, df_b = sources(spark, [(1, 0), (2, 4)], [])
    assert unmatched(df_a, df_b, 3, 0, 5) == [(1, 3, 3, JoinType.A_TIMED_OUT), (2, 5, 1, JoinType.A_WAITING)]


def test_waiting_rows_appear_only_with_include_waiting(spark: SparkSession) -> None:
    df_a, df_b = sources(spark, [(1, 0), (2, 4)], [])
    assert run(df_a, df_b, 0, 5, mw=3) == [(1, 3, None, JoinType.A_TIMED_OUT)]
    assert run(df_a, df_b, 0, 5, mw=3, include_waiting=True) == [
        (1, 3, None, JoinType.A_TIMED_OUT),
        (2, 5, None, JoinType.A_WAITING),
    ]


def test_zero_max_waiting_time_times_out_an_unmatched_row_at_once(spark: SparkSession) -> None:
    df_a, df_b = sources(spark, [(1, 2)], [(1, 3)])
    assert run(df_a, df_b, 0, 10, lb=5, mw=0, include_waiting=True) == [(1, 2, None, JoinType.A_TIMED_OUT)]


def test_a_run_never_sees_rows_after_the_window_end(spark: SparkSession) -> None:
    # B lands on day 3; a run for W = [0, 2] must treat A as still waiting, not as matched.
    df_a, df_b = sources(spark, [(1, 0), (2, 3)], [(1, 3)])
    assert run(df_a, df_b, 0, 2, mw=5, include_waiting=True) == [(1, 2, None, JoinType.A_WAITING)]


def test_only_rows_whose_output_recdate_lies_in_the_window_are_returned(spark: SparkSession) -> None:
    df_a, df_b = sources(spark, [(1, 0), (2, 1), (3, 2)], [(1, 0), (2, 1), (3, 2)])
    assert [k for k, *_ in run(df_a, df_b, 1, 1)] == [2]


def test_without_the_enforced_sliding_window_matches_depend_on_the_output_window(spark: SparkSession) -> None:
    # B 5 days early, lb = 1: outside the sliding join window, but inside [s - lb - mw, e] of a wide window.
    df_a, df_b = sources(spark, [(1, 5)], [(1, 0)])
    wide = run(df_a, df_b, 1, 9, lb=1, mw=1, enforce_sliding_join_window=False)
    daily = run(df_a, df_b, 5, 5, lb=1, mw=1, enforce_sliding_join_window=False)
    enforced = run(df_a, df_b, 1, 9, lb=1, mw=1)
    assert wide == [(1, 5, -5, JoinType.A_LATE)]
    assert daily == []  # the timed-out row comes a day later, at 6
    assert enforced == [(1, 6, None, JoinType.A_TIMED_OUT)]


def test_without_the_enforced_sliding_window_every_b_row_read_can_match(spark: SparkSession) -> None:
    # lb = 1, mw = 2, W = [5, 7]: B is read in [2, 7]. As in the seed library, B older than A - lb still matches.
    df_a, df_b = sources(spark, [(1, 6), (2, 4), (3, 6)], [(1, 2), (2, 2), (3, 1)])
    assert run(df_a, df_b, 5, 7, lb=1, mw=2, include_waiting=True, enforce_sliding_join_window=False) == [
        (1, 6, -4, JoinType.A_LATE),  # B at 2 < 6 - lb: matched, not waiting
        # key 2: A at 4 matches B at 2, output at 4, before W: no row (not a timed-out row at 6)
        (3, 7, None, JoinType.A_WAITING),  # B at 1 is before the read range: waited 1 of 2
    ]


def test_one_a_row_matching_two_b_rows_gives_two_rows(spark: SparkSession) -> None:
    df_a, df_b = sources(spark, [(1, 0)], [(1, 0), (1, 2)])
    assert run(df_a, df_b, 0, 5, mw=3) == [(1, 0, 0, JoinType.SAME_TIME), (1, 2, 2, JoinType.B_LATE)]


def test_inner_returns_only_matched_rows(spark: SparkSession) -> None:
    df_a, df_b = sources(spark, [(1, 0), (2, 0)], [(1, 0), (3, 0)])
    assert run(df_a, df_b, 0, 5, how="inner") == [(1, 0, 0, JoinType.SAME_TIME)]


def test_left_anti_returns_only_unmatched_a_rows_with_a_columns(spark: SparkSession) -> None:
    df_a, df_b = sources(spark, [(1, 0), (2, 0)], [(1, 0), (3, 0)])
    out = inc_join(df_a, df_b, "left_anti", ["k"], None, 0, 0, day(0), day(5))
    assert out.columns == ["k", "RecDate", "va", "RecDate_A", "JoinType"]
    assert [(r.k, r.JoinType) for r in out.collect()] == [(2, JoinType.A_TIMED_OUT)]


def test_full_outer_returns_unmatched_b_rows_as_not_matched_at_their_recdate(spark: SparkSession) -> None:
    df_a, df_b = sources(spark, [(1, 0), (2, 0)], [(1, 0), (3, 2)])
    assert run(df_a, df_b, 0, 5, how="full_outer") == [
        (1, 0, 0, JoinType.SAME_TIME),
        (2, 0, None, JoinType.A_TIMED_OUT),
        (3, 2, None, JoinType.NOT_MATCHED),
    ]


def test_by_default_full_outer_keeps_the_seed_rule_an_unmatched_b_row_at_its_recdate_whatever_lb(
    spark: SparkSession,
) -> None:
    # lb = 3. The seed library's rule: B of key 3 (day 2) is output at once at day 2 by a daily run, although A of
    # key 3 arrives on day 4, inside lb, and a wider window matches the two instead: not window-invariant.
    df_a, df_b = sources(spark, [(3, 4)], [(3, 2), (5, 1)])
    assert run(df_a, df_b, 2, 2, lb=3, how="full_outer") == [(3, 2, None, JoinType.NOT_MATCHED)]
    assert run(df_a, df_b, 0, 9, lb=3, how="full_outer") == [
        (3, 4, -2, JoinType.A_LATE),
        (5, 1, None, JoinType.NOT_MATCHED),  # at B.RecDate, not at B.RecDate + lb
    ]


def b_side(df_a: DataFrame, df_b: DataFrame, start: int, end: int, lb: int, mw: int = 0) -> list[tuple]:
    """(key, output day, WaitingTime, JoinType) of full_outer with waiting B rows (b_waits_for_a, include_waiting)."""
    settings = IncJoinSettings(
        b_waits_for_a=True, include_waiting=True, output_select="k, RecDate, WaitingTime, JoinType"
    )
    out = inc_join(df_a, df_b, "full_outer", ["k"], None, lb, mw, day(start), day(end), settings)
    return sorted((r.k, (r.RecDate - DAY0).days, r.WaitingTime, r.JoinType) for r in out.collect())


def test_an_unmatched_b_row_waits_lb_at_the_window_end_and_is_final_at_b_recdate_plus_lb(
    spark: SparkSession,
) -> None:
    # lb = 3, B of key 3 on day 2 and no A row: waiting at the window end until day 5, then final on day 5.
    df_a, df_b = sources(spark, [], [(3, 2)])
    assert b_side(df_a, df_b, 0, 2, lb=3) == [(3, 2, 0, JoinType.B_WAITING)]
    assert b_side(df_a, df_b, 0, 4, lb=3) == [(3, 4, 2, JoinType.B_WAITING)]
    assert b_side(df_a, df_b, 0, 9, lb=3) == [(3, 5, 3, JoinType.NOT_MATCHED)]
    assert b_side(df_a, df_b, 6, 9, lb=3) == []  # final on day 5, before W


def test_a_b_row_whose_a_arrives_lb_units_later_resolves_into_the_match(spark: SparkSession) -> None:
    # lb = 3: B on day 2 waits; A arrives on day 5 = 2 + lb and matches it (a_late); no B-only row is left.
    df_a, df_b = sources(spark, [(1, 5)], [(1, 2)])
    assert b_side(df_a, df_b, 0, 4, lb=3) == [(1, 4, 2, JoinType.B_WAITING)]
    assert b_side(df_a, df_b, 5, 5, lb=3) == [(1, 5, None, JoinType.A_LATE)]
    assert b_side(df_a, df_b, 0, 9, lb=3) == [(1, 5, None, JoinType.A_LATE)]


def test_with_zero_lb_an_unmatched_b_row_is_final_at_once_at_its_recdate(spark: SparkSession) -> None:
    df_a, df_b = sources(spark, [(1, 0)], [(1, 0), (3, 2)])
    assert b_side(df_a, df_b, 2, 2, lb=0) == [(3, 2, 0, JoinType.NOT_MATCHED)]
    expected = [(1, 0, 0, JoinType.SAME_TIME), (3, 2, None, JoinType.NOT_MATCHED)]
    assert run(df_a, df_b, 0, 5, how="full_outer", b_waits_for_a=True) == expected  # the seed library's rows
    assert run(df_a, df_b, 0, 5, how="full_outer") == expected


def test_without_include_waiting_b_waiting_rows_are_dropped(spark: SparkSession) -> None:
    # lb = 3, W = [0, 4]: B of day 0 is final on day 3; B of day 2 still waits on day 4.
    df_a, df_b = sources(spark, [], [(3, 0), (4, 2)])
    assert run(df_a, df_b, 0, 4, lb=3, how="full_outer", b_waits_for_a=True) == [(3, 3, None, JoinType.NOT_MATCHED)]
    assert run(df_a, df_b, 0, 4, lb=3, how="full_outer", b_waits_for_a=True, include_waiting=True) == [
        (3, 3, None, JoinType.NOT_MATCHED),
        (4, 4, None, JoinType.B_WAITING),
    ]


def test_with_b_waits_for_a_every_a_row_that_can_match_a_b_row_output_in_the_window_is_read(
    spark: SparkSession,
) -> None:
    # lb = 2, mw = 3, W = [10, 12]: A is read from 10 - 2 - 3 = 5.
    df_a, df_b = sources(spark, [(1, 5), (2, 6), (4, 11)], [(1, 8), (3, 8), (4, 9), (5, 12)])
    assert b_side(df_a, df_b, 10, 12, lb=2, mw=3) == [
        # key 1: A of day 5 matches B of day 8 (8 is in [5 - 2, 5 + 3]); the pair is output on day 8, before W,
        # and B of day 8 leaves no B-only row (unread, A of day 5 would leave one, final on day 10).
        # key 2: A of day 6 is read for the B side only; it times out on day 9, before W: no row.
        (3, 10, 2, JoinType.NOT_MATCHED),  # B of day 8, no A in [8 - 3, 8 + 2]: final on 8 + lb
        (4, 11, None, JoinType.A_LATE),
        (5, 12, 0, JoinType.B_WAITING),
    ]


@pytest.mark.parametrize(
    ("how", "b_waits", "a_first"), [("full_outer", True, 5), ("full_outer", False, 7), ("left", True, 7)]
)
def test_with_b_waits_for_a_a_is_read_from_s_minus_lb_minus_mw(
    spark: SparkSession, how: str, b_waits: bool, a_first: int
) -> None:
    # W = [10, 12], lb = 2, mw = 3: B in [5, 12]; A in [7, 12], or [5, 12] when unmatched B rows wait (full_outer).
    df_a, df_b = sources(spark, [(i, i) for i in range(20)], [(i, i) for i in range(20)])
    spec = check_join(df_a, df_b, how, ["k"], None, 2, 3, day(10), day(12), IncJoinSettings(b_waits_for_a=b_waits))
    scan_a, scan_b = read_sources(df_a, df_b, spec)
    assert sorted(r.k for r in scan_a.collect()) == list(range(a_first, 13))
    assert sorted(r.k for r in scan_b.collect()) == list(range(5, 13))


@pytest.mark.parametrize("how", ["LEFT", "left_outer", "LeftOuter", "leftanti", "Left_Anti", "FULL", "fullouter"])
def test_how_is_case_insensitive_and_underscores_are_optional(spark: SparkSession, how: str) -> None:
    df_a, df_b = sources(spark, [(1, 0)], [(1, 0)])
    assert inc_join(df_a, df_b, how, ["k"], None, 0, 0, day(0), day(0)).count() == (0 if "anti" in how.lower() else 1)


def test_join_keys_keep_their_names_and_shared_columns_get_the_alias_suffix(spark: SparkSession) -> None:
    df_a = frame(spark, [(1, "x", D(2025, 1, 1))], "k long, note string, RecDate date")
    df_b = frame(spark, [(1, "y", D(2025, 1, 1))], "k long, note string, RecDate date")
    out = inc_join(
        df_a, df_b, "left", ["k"], None, 0, 0, "2025-01-01", "2025-01-01", IncJoinSettings(alias_a="L", alias_b="R")
    )
    assert out.columns == ["k", "RecDate", "note_L", "RecDate_L", "note_R", "RecDate_R", "DiffArrivalTime", "JoinType"]
    assert out.collect()[0]["note_R"] == "y"


def test_unmatched_a_rows_keep_their_key_through_the_coalesce(spark: SparkSession) -> None:
    df_a, df_b = sources(spark, [(7, 0)], [])
    assert run(df_a, df_b, 0, 0) == [(7, 0, None, JoinType.A_TIMED_OUT)]


def test_output_select_takes_tokens_and_explicit_columns_in_order(spark: SparkSession) -> None:
    df_a, df_b = sources(spark, [(1, 0)], [(1, 0)])
    options = IncJoinSettings(output_select="JoinType, vb, inc_col_b, inc_col_a, join_cols, k")
    out = inc_join(df_a, df_b, "left", ["k"], None, 0, 0, day(0), day(0), options)
    assert out.columns == ["JoinType", "vb", "RecDate_B", "RecDate_A", "k"]


@pytest.mark.parametrize("as_column", [False, True])
def test_join_cond_is_anded_with_the_key_equality(spark: SparkSession, as_column: bool) -> None:
    df_a = frame(spark, [(1, 10, D(2025, 1, 1)), (2, 10, D(2025, 1, 1))], "k long, amt int, RecDate date")
    df_b = frame(spark, [(1, 10, D(2025, 1, 1)), (2, 99, D(2025, 1, 1))], "k long, amt int, RecDate date")
    cond = F.col("A.amt") == F.col("B.amt") if as_column else "A.amt = B.amt"
    out = inc_join(df_a, df_b, "left", ["k"], cond, 0, 0, "2025-01-01", "2025-01-01")
    assert sorted((r.k, r.JoinType) for r in out.collect()) == [(1, JoinType.SAME_TIME), (2, JoinType.A_TIMED_OUT)]


def test_join_cond_alone_can_replace_join_cols(spark: SparkSession) -> None:
    df_a = frame(spark, [(1, D(2025, 1, 1))], "ka long, RecDate date")
    df_b = frame(spark, [(1, D(2025, 1, 1))], "kb long, RecDate date")
    out = inc_join(df_a, df_b, "inner", None, "A.ka = B.kb", 0, 0, "2025-01-01", "2025-01-01")
    assert [(r.ka, r.kb, r.JoinType) for r in out.collect()] == [(1, 1, JoinType.SAME_TIME)]


def test_a_timestamp_inc_col_is_truncated_to_the_day(spark: SparkSession) -> None:
    ts = dt.datetime
    df_a = frame(spark, [(1, ts(2025, 1, 1, 23, 59)), (2, ts(2025, 1, 2, 0, 1))], "k long, RecDate timestamp")
    df_b = frame(spark, [(1, ts(2025, 1, 1, 0, 1)), (2, ts(2025, 1, 3, 9, 0))], "k long, RecDate timestamp")
    out = inc_join(df_a, df_b, "left", ["k"], None, 0, 1, "2025-01-01", "2025-01-03")
    rows = sorted((r.k, r.RecDate, r.DiffArrivalTime, r.JoinType) for r in out.collect())
    assert rows == [(1, D(2025, 1, 1), 0, JoinType.SAME_TIME), (2, D(2025, 1, 3), 1, JoinType.B_LATE)]
    assert out.schema["RecDate_A"].dataType.simpleString() == "timestamp"


def test_hour_time_uom_counts_in_hours(spark: SparkSession) -> None:
    ts = dt.datetime
    df_a = frame(spark, [(1, ts(2025, 1, 1, 10, 30)), (2, ts(2025, 1, 1, 10, 0))], "k long, RecDate timestamp")
    df_b = frame(spark, [(1, ts(2025, 1, 1, 13, 5))], "k long, RecDate timestamp")
    out = inc_join(
        df_a, df_b, "left", ["k"], None, 0, 3, "2025-01-01T00:00", "2025-01-01T23:00", IncJoinSettings(time_uom="hour")
    )
    rows = sorted((r.k, r.RecDate, r.DiffArrivalTime, r.JoinType) for r in out.collect())
    assert rows == [(1, ts(2025, 1, 1, 13), 3, JoinType.B_LATE), (2, ts(2025, 1, 1, 13), None, JoinType.A_TIMED_OUT)]


def test_minute_time_uom_counts_in_minutes(spark: SparkSession) -> None:
    ts = dt.datetime
    df_a = frame(spark, [(1, ts(2025, 1, 1, 10, 30, 59)), (2, ts(2025, 1, 1, 10, 30))], "k long, RecDate timestamp")
    df_b = frame(spark, [(1, ts(2025, 1, 1, 10, 33, 5))], "k long, RecDate timestamp")
    options = IncJoinSettings(time_uom="minute")
    out = inc_join(df_a, df_b, "left", ["k"], None, 0, 3, "2025-01-01T10:00", "2025-01-01T10:59", options)
    rows = sorted((r.k, r.RecDate, r.DiffArrivalTime, r.JoinType) for r in out.collect())
    assert rows == [
        (1, ts(2025, 1, 1, 10, 33), 3, JoinType.B_LATE),
        (2, ts(2025, 1, 1, 10, 33), None, JoinType.A_TIMED_OUT),
    ]


def test_without_a_window_end_the_latest_recdate_in_both_sources_is_the_end(spark: SparkSession) -> None:
    df_a, df_b = sources(spark, [(1, 0), (2, 4)], [(1, 2), (9, 6)])
    options = IncJoinSettings(include_waiting=True, output_select="k, RecDate, WaitingTime, JoinType")
    out = inc_join(df_a, df_b, "left", ["k"], None, 0, 5, None, None, options)
    rows = sorted((r.k, (r.RecDate - DAY0).days, r.WaitingTime, r.JoinType) for r in out.collect())
    # latest in A = 4, in B = 6: the end is 4; B of day 6 is not seen.
    assert rows == [(1, 2, None, JoinType.B_LATE), (2, 4, 0, JoinType.A_WAITING)]


def test_the_read_bounds_reach_the_delta_scan_as_partition_filters(
    spark: SparkSession, tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    df_a, df_b = sources(spark, [(i, i) for i in range(20)], [(i, i) for i in range(20)])
    df_a.write.format("delta").partitionBy("RecDate").save(f"{tmp_path}/a")
    df_b.write.format("delta").partitionBy("RecDate").save(f"{tmp_path}/b")
    delta_a = spark.read.format("delta").load(f"{tmp_path}/a")
    delta_b = spark.read.format("delta").load(f"{tmp_path}/b")
    # W = [10, 12], lb = 2, mw = 3: A in [7, 12], B in [5, 12].
    out = inc_join(delta_a, delta_b, "left", ["k"], None, 2, 3, day(10), day(12))
    out.explain(mode="formatted")
    plan = capsys.readouterr().out
    filters = [line for line in plan.splitlines() if line.strip().startswith("PartitionFilters")]
    assert len(filters) == 2, plan
    assert any("RecDate#" in f and str(day(7)) in f and str(day(12)) in f for f in filters), filters
    assert any(str(day(5)) in f and str(day(12)) in f for f in filters), filters
    assert DeltaTable.isDeltaTable(spark, f"{tmp_path}/a")
    assert sorted(r.k for r in out.collect()) == [10, 11, 12]


def test_the_join_is_one_plan_without_python_udfs(spark: SparkSession, capsys: pytest.CaptureFixture[str]) -> None:
    df_a, df_b = sources(spark, [(1, 0)], [(1, 0)])
    inc_join(df_a, df_b, "full", ["k"], None, 1, 1, day(0), day(3)).explain(mode="formatted")
    plan = capsys.readouterr().out
    assert "BatchEvalPython" not in plan and "ArrowEvalPython" not in plan
