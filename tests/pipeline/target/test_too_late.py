"""Too-late B rows (docs/design.md#the-b-side-and-too-late-rows) on random data: the search over what the target
published gives, for any cut of the days into windows, the rows of the definition re-stated in plain Python below
(second parcels included). The pipeline's own runs of the rule are in test_b_side.py."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from frames import frame
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deltainc import inc_join
from deltainc.join.options import IncJoinSettings
from deltainc.join.output_layout import OutputLayout, plan_layout
from deltainc.pipeline.job.kinds.two_source import plan_join
from deltainc.pipeline.target.too_late import a_side, too_late_rows, window_a_rows
from deltainc.time_units import TimeUnit, to_index
from jobs import job_config

pytestmark = pytest.mark.spark

DAY0 = dt.date(2025, 1, 1)
DAYS = 9
UNIT0 = to_index(DAY0, TimeUnit.DAY)  # the unit index of day 0: windows are given in units

Rows = list[tuple[int, int, int]]  # (join key, row id, day offset from DAY0)


def _model(a: Rows, b: Rows, mw: int, horizon: int) -> Counter[tuple[int, int, int, int, int]]:
    """The definition: every (A row, B row) with equal keys where B arrived after the A row's sliding join window
    closed and within the horizon, whatever became of the A row: (A id, A day, B id, B day, TooLateBy)."""
    return Counter(
        (ia, ta, ib, tb, tb - ta - mw) for ka, ia, ta in a for kb, ib, tb in b if ka == kb and mw < tb - ta <= horizon
    )


def _frame(spark: SparkSession, rows: Rows, id_col: str) -> DataFrame:
    return frame(spark, [(k, i, DAY0 + dt.timedelta(days=d)) for k, i, d in rows], f"k int, {id_col} int, RecDate date")


@pytest.mark.windows  # the too-late search over many windows
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    a_days=st.sets(st.tuples(st.integers(0, 2), st.integers(0, DAYS - 1)), max_size=8),
    b_days=st.lists(st.tuples(st.integers(0, 2), st.integers(0, DAYS - 1)), max_size=12),
    how=st.sampled_from(["left", "full_outer"]),
    lb=st.integers(0, 2),
    mw=st.integers(0, 2),
    beyond=st.integers(1, 4),
    cuts=st.sets(st.integers(1, DAYS - 1), max_size=4),
)
def test_too_late_rows_are_those_of_the_definition_for_any_cut_into_windows(
    spark: SparkSession,
    tmp_path: Path,
    a_days: set[tuple[int, int]],
    b_days: list[tuple[int, int]],
    how: str,
    lb: int,
    mw: int,
    beyond: int,
    cuts: set[int],
) -> None:
    """Keys repeat on both sides, so an A row often has several B rows (a second parcel) and B rows reach A rows of
    other days. The target is the engine's output over all days, as the contract says a target holds it: for each
    window it also holds the rows a crashed attempt at that window committed, which the search must not read."""
    a = [(k, n, d) for n, (k, d) in enumerate(sorted(a_days))]
    b = [(k, 100 + n, d) for n, (k, d) in enumerate(b_days)]
    df_a, df_b = _frame(spark, a, "ia"), _frame(spark, b, "ib")
    join = {"how": how, "join_cols": ["k"], "look_back_time": lb, "max_waiting_time": mw, "late_horizon": mw + beyond}
    job = job_config(tmp_path, "late", DAY0, join, keys=["ia"], b_keys=["ib"])
    spec, identity = plan_join(job, df_a.schema, df_b.schema)

    def output(first: int, last: int) -> DataFrame:
        days = (DAY0 + dt.timedelta(days=first), DAY0 + dt.timedelta(days=last))
        return inc_join(df_a, df_b, how, ["k"], None, lb, mw, *days, spec.settings)

    target = output(0, DAYS - 1).localCheckpoint()
    side = a_side(how, spec.layout, target.columns, ["k", "ia", "RecDate"])
    assert side.from_target
    found: DataFrame | None = None
    for schedule, bounds in enumerate(([0, DAYS], [0, *sorted(cuts), DAYS])):
        for s, end in zip(bounds, bounds[1:], strict=False):
            window = output(s, end - 1)
            first, last = UNIT0 + s, UNIT0 + end - 1
            rows = window_a_rows(target, window, side.columns, ["ia", "RecDate"], "RecDate", TimeUnit.DAY,
                                 first - job.join.horizon, first)  # fmt: skip
            late = too_late_rows(rows, df_b, replace(spec, start=first, end=last), identity, ["ia"], ["ib"],
                                 job.join.horizon)  # fmt: skip
            late = late.withColumn("schedule", F.lit(schedule))
            found = late if found is None else found.unionByName(late)
    assert found is not None
    got: dict[int, Counter[tuple[int, int, int, int, int]]] = {0: Counter(), 1: Counter()}
    for r in found.collect():  # both schedules in one query
        row = (r.ia, (r.RecDate_A - DAY0).days, r.ib, (r.RecDate_B - DAY0).days, r.TooLateBy)
        assert r.RecDate == r.RecDate_B  # each B row belongs to the window of its own RecDate
        got[r.schedule][row] += 1
    expected = _model(a, b, mw, job.join.horizon)
    assert got[0] == expected, (how, lb, mw, beyond)
    assert got[1] == expected, (how, lb, mw, beyond, sorted(cuts))


def _layout(how: str) -> OutputLayout:
    return plan_layout(["k", "ia", "RecDate"], ["k", "ib", "RecDate"], ["k"], how, IncJoinSettings())


@pytest.mark.parametrize(
    ("how", "target_columns", "why"),
    [
        ("left", ["k", "RecDate", "ia", "RecDate_A", "JoinType"], None),
        ("full_outer", ["k", "RecDate", "ia", "RecDate_A", "ib", "RecDate_B", "JoinType"], None),
        ("inner", ["k", "RecDate", "ia", "RecDate_A", "JoinType"], "a inner target holds matched A rows only"),
        ("left_anti", ["k", "RecDate", "ia", "RecDate_A", "JoinType"], "holds the A rows that matched nothing only"),
        ("left", ["RecDate", "ia", "RecDate_A", "JoinType"], "the target lacks A's column\\(s\\) k"),
    ],
)
def test_the_a_rows_come_from_the_target_only_where_it_holds_every_final_a_row_and_the_columns_needed(
    how: str, target_columns: list[str], why: str | None
) -> None:
    side = a_side(how, _layout(how), target_columns, ["k", "ia", "RecDate"])
    if why is None:
        assert side.from_target and dict(side.columns) == {"k": "k", "ia": "ia", "RecDate": "RecDate_A"}
    else:
        assert not side.from_target and re.search(why, str(side.why))


@contextlib.contextmanager
def _broadcast_anything(spark: SparkSession) -> Iterator[None]:
    """Spark told that any side up to 1 GB may be broadcast (planning and adaptive execution), then as before."""
    keys = ("spark.sql.autoBroadcastJoinThreshold", "spark.sql.adaptive.autoBroadcastJoinThreshold")
    before = {key: spark.conf.get(key, None) for key in keys}
    for key in keys:
        spark.conf.set(key, str(1024**3))
    try:
        yield
    finally:
        for key, value in before.items():
            spark.conf.unset(key) if value is None else spark.conf.set(key, value)


def _physical_plan(rows: DataFrame) -> str:
    """The plan Spark would run for `rows`, as `explain` prints it (public API; the plan is not run)."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        rows.explain(mode="formatted")
    return printed.getvalue()


def test_no_join_of_the_window_or_the_target_is_a_broadcast_whatever_its_size_estimate(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The too-late search's A rows and the engine's two sides grow with the window and the history before it:
    even where Spark may broadcast any side (a size estimate far below the rows' size did that to a month's
    window), they are sort-merge joined; only the engine's one-row `latest` is broadcast."""
    df_a = _frame(spark, [(1, 1, 0), (2, 2, 1)], "ia")
    df_b = _frame(spark, [(1, 100, 4), (2, 101, 1)], "ib")
    join = {"how": "left", "join_cols": ["k"], "look_back_time": 1, "max_waiting_time": 1, "late_horizon": 4}
    job = job_config(tmp_path, "late", DAY0, join, keys=["ia"], b_keys=["ib"])
    spec, identity = plan_join(job, df_a.schema, df_b.schema)
    first, last = UNIT0 + 4, UNIT0 + 5
    with _broadcast_anything(spark):
        output = inc_join(df_a, df_b, "left", ["k"], None, 1, 1, DAY0, DAY0 + dt.timedelta(days=5), spec.settings)
        late = too_late_rows(df_a, df_b, replace(spec, start=first, end=last), identity, ["ia"], ["ib"], 4)
        plans = {"engine": _physical_plan(output), "too-late search": _physical_plan(late)}
        found = late.count()
    assert found == 1  # A row 1 (day 0) and B row 100 (day 4): 4 days apart, beyond max_waiting_time 1
    for name, plan in plans.items():
        assert "SortMergeJoin" in plan, name
        assert "BroadcastHashJoin" not in plan, (name, plan)
