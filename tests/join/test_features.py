"""A spine with several feature sources (`feature_join`): the rules re-stated in plain Python below, checked on
random data for one window and for any split of the days into windows (waiting rows replaced, as the target's
forward write does); and the mistakes refused, naming the source and the setting."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from functools import reduce

import pytest
from feature_model import PROVISIONAL, WAITING, Rows
from feature_model import model as _model
from frames import frame
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deltainc.errors import ConfigError, SchemaError
from deltainc.join.feature_source import FeatureSource
from deltainc.join.features import feature_join
from deltainc.join.options import IncJoinSettings

pytestmark = pytest.mark.spark

DAY0 = dt.date(2025, 1, 1)
DAYS = 7
SETTINGS = IncJoinSettings(include_waiting=True)

keyed_days = st.lists(st.tuples(st.integers(0, 3), st.integers(-2, DAYS + 1)), max_size=10)


def _frame(spark: SparkSession, rows: Rows, id_col: str) -> DataFrame:
    data = [(k, i, DAY0 + dt.timedelta(days=d)) for k, i, d in rows]
    return frame(spark, data, f"k int, {id_col} int, RecDate date")


def _numbered(pairs: list[tuple[int, int]], first_id: int) -> Rows:
    return [(k, first_id + n, d) for n, (k, d) in enumerate(pairs)]


def _features(spark: SparkSession, left: Rows, asof: Rows, lbs: tuple[int, int], mws: tuple[int, int]) -> list:
    return [
        FeatureSource("L", _frame(spark, left, "ib"), "left", ("k",), None, lbs[0], mws[0]),
        FeatureSource(
            "S",
            _frame(spark, asof, "ib"),
            "asof",
            ("k",),
            None,
            lbs[1],
            mws[1],
            asof_strategy="nearest",
            asof_tie_break=("ib",),
        ),  # fmt: skip
    ]


_JOINS_PER_QUERY = 4  # as in test_engine_window_invariance.py: fewer Spark jobs, no peak of many broadcasts


def _windows(spine: DataFrame, features: list, windows: list[tuple[int, int]]) -> list[Counter]:
    """The rows of each window (s, e), as day offsets; the windows' outputs collected a few per query, told apart
    by a column of the window's index."""
    outs = []
    for i, (s, e) in enumerate(windows):
        out = feature_join(spine, features, ["ia"], DAY0 + dt.timedelta(days=s), DAY0 + dt.timedelta(days=e), SETTINGS)
        columns = ("ia", "RecDate", "L_ib", "L_JoinType", "S_ib", "S_JoinType", "WaitingTime", "JoinType")
        outs.append(out.select(*columns, F.lit(i).alias("_window")))
    got: list[Counter] = [Counter() for _ in windows]
    for i in range(0, len(outs), _JOINS_PER_QUERY):
        for row in reduce(DataFrame.unionAll, outs[i : i + _JOINS_PER_QUERY]).collect():
            got[row["_window"]][tuple((v - DAY0).days if isinstance(v, dt.date) else v for v in row[:-1])] += 1
    return got


def _window(spine: DataFrame, features: list, s: int, e: int) -> Counter:
    return _windows(spine, features, [(s, e)])[0]


# Histories checked by one example: rows of different histories never meet (their keys are KEY_STRIDE apart), so
# one set of queries joins them all and each history is checked as if alone, as in
# test_engine_window_invariance.py: a query costs more than its rows. Three examples of two to four histories check
# as many histories as six examples of one did in half the queries (20.5 s against 40.8 s alone, one run each), but
# draw three (look_back, max_wait, cuts) settings where six were drawn. A spine read bound narrowed by one unit
# (features.py) still fails it: seeds 0-3 with shrinking off, 2026-11-28.
BATCH = (2, 4)
KEY_STRIDE, ID_STRIDE = 10, 1000  # keys 0 .. 3 and row ids below 300 of each history
History = tuple[list[tuple[int, int]], list[tuple[int, int]], list[tuple[int, int]]]  # (spine, left, asof)


def _batched(batch: list[History]) -> tuple[Rows, Rows, Rows]:
    """The spine, left and as-of rows of every history, history h's keys and ids moved by h strides."""
    spine: Rows = []
    left: Rows = []
    asof: Rows = []
    for h, (spine_pairs, left_pairs, asof_pairs) in enumerate(batch):
        key, row = h * KEY_STRIDE, h * ID_STRIDE
        spine += [(key + k, row + i, d) for k, i, d in _numbered(spine_pairs, 0)]
        left += [(key + k, row + i, d) for k, i, d in _numbered(left_pairs, 100)]
        asof += [(key + k, row + i, d) for k, i, d in _numbered(asof_pairs, 200)]
    return spine, left, asof


HISTORIES = {
    "batch": st.lists(st.tuples(keyed_days, keyed_days, keyed_days), min_size=BATCH[0], max_size=BATCH[1]),
    "lbs": st.tuples(st.integers(0, 2), st.integers(0, 2)),
    "mws": st.tuples(st.integers(0, 3), st.integers(0, 3)),
}


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**HISTORIES)
def test_one_window_over_all_days_gives_the_rows_of_the_rules(
    spark: SparkSession, batch: list[History], lbs: tuple, mws: tuple
) -> None:
    a, b_left, b_asof = _batched(batch)
    df_a, features = _frame(spark, a, "ia"), _features(spark, b_left, b_asof, lbs, mws)
    assert _window(df_a, features, 0, DAYS - 1) == _model(a, b_left, b_asof, lbs, mws, 0, DAYS - 1)


@pytest.mark.windows  # the engine over many windows
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**HISTORIES, cuts=st.sets(st.integers(1, DAYS - 1), max_size=4))
def test_any_split_into_windows_gives_the_rows_of_the_rules(
    spark: SparkSession, batch: list[History], lbs: tuple, mws: tuple, cuts: set[int]
) -> None:
    """The days in windows cut at `cuts` (each window's waiting rows replaced by the next one's output) give the
    rows of the rules over all days."""
    a, b_left, b_asof = _batched(batch)
    df_a, features = _frame(spark, a, "ia"), _features(spark, b_left, b_asof, lbs, mws)
    expected = _model(a, b_left, b_asof, lbs, mws, 0, DAYS - 1)
    bounds = [0, *sorted(cuts), DAYS]
    cut = _windows(df_a, features, [(s, e - 1) for s, e in zip(bounds, bounds[1:], strict=False)])

    target: Counter[tuple] = Counter()
    for window in cut:
        target = Counter({row: n for row, n in target.items() if row[-1] not in (WAITING, PROVISIONAL)})
        target += window
    assert target == expected, (lbs, mws, bounds)


def test_a_row_is_kept_while_a_source_still_to_join_can_land_it_in_the_window(spark: SparkSession) -> None:
    """The edge of the early drop: the left source (wait 3, joined first) lands the spine row of day 2 on day 2,
    before the window [3, 3]; the as-of source (wait 1, joined next) has no row for it and times out on day 3, in the
    window, so the combined row belongs to that window's output."""
    spine, left = [(0, 0, 2)], [(0, 100, 2)]
    df_a, features = _frame(spark, spine, "ia"), _features(spark, left, [], (0, 0), (3, 1))
    expected = _model(spine, left, [], (0, 0), (3, 1), 3, 3)
    assert sum(expected.values()) == 1
    assert _window(df_a, features, 3, 3) == expected


def test_a_source_name_used_twice_is_refused(spark: SparkSession) -> None:
    spine = _frame(spark, [(1, 1, 0)], "ia")
    twice = [FeatureSource(name, _frame(spark, [], "ib"), "left", ("k",)) for name in ("risk", "Risk")]
    with pytest.raises(ConfigError, match=r"features\[Risk\]\.name: the name 'Risk' is used twice"):
        feature_join(spine, twice, ["ia"], DAY0, DAY0, SETTINGS)


def test_colliding_output_columns_are_refused_naming_both(spark: SparkSession) -> None:
    spine = _frame(spark, [(1, 1, 0)], "ia").selectExpr("*", "1 AS risk_ib")
    with pytest.raises(SchemaError, match=r"features\[risk\] \(column 'ib'\): output column 'risk_ib' collides with "
                                          r"source_a column 'risk_ib'"):  # fmt: skip
        feature_join(spine, [FeatureSource("risk", _frame(spark, [], "ib"), "left", ("k",))], ["ia"], DAY0, DAY0)


def test_a_source_missing_its_recdate_or_join_column_is_refused_naming_the_source(spark: SparkSession) -> None:
    spine = _frame(spark, [(1, 1, 0)], "ia")
    no_rec = _frame(spark, [], "ib").withColumnRenamed("RecDate", "LoadDate")
    missing_rec = r"features\[risk\]: inc_col_name: column 'RecDate' missing from the feature source"
    with pytest.raises(SchemaError, match=missing_rec):
        feature_join(spine, [FeatureSource("risk", no_rec, "left", ("k",))], ["ia"], DAY0, DAY0)
    no_key = _frame(spark, [], "ib").withColumnRenamed("k", "kk")
    with pytest.raises(SchemaError, match=r"features\[fx\]: join_cols: column 'k' missing from the feature source"):
        feature_join(spine, [FeatureSource("fx", no_key, "asof", ("k",))], ["ia"], DAY0, DAY0)


def test_a_spine_column_the_output_has_too_ends_in_the_spines_alias(spark: SparkSession) -> None:
    """A job's target as the spine (docs/concepts/pipelines.md) brings its own JoinType, WaitingTime and IsFinal."""
    spine = _frame(spark, [(1, 1, 0)], "ia").selectExpr("*", "2 AS JoinType", "0 AS WaitingTime", "true AS IsFinal")
    left = _frame(spark, [(1, 10, 0)], "ib")
    out = feature_join(spine, [FeatureSource("L", left, "left", ("k",))], ["ia"], DAY0, DAY0, SETTINGS)
    spine_part = ["k", "ia", "RecDate_A", "JoinType_A", "WaitingTime_A", "IsFinal_A"]
    assert out.columns[: len(spine_part) + 1] == ["RecDate", *spine_part]
    row = out.collect()[0]
    assert (row.JoinType_A, row.IsFinal_A, row.JoinType, row.L_ib) == (2, True, 1, 10)  # the spine's, then its own
