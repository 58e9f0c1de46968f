"""The controller's plan (docs/design.md#run-modes): which windows a command processes, in what order, under which
write mode, and what it refuses before touching any data. Pure: no Spark session, no table."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from deltainc.errors import ConfigError
from deltainc.pipeline.controller.plan import backfill_plan, rebuild_plan, rerun_plan, run_plan, to_do
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.mode_names import ModeName
from deltainc.pipeline.target.modes import write_mode
from deltainc.time_units import TimeUnit, to_index

pytestmark = pytest.mark.pure

START = dt.date(2025, 3, 1)


def day(n: int) -> int:
    """The unit of START + n days."""
    return to_index(START + dt.timedelta(days=n), TimeUnit.DAY)


def job(max_window: int = 0, sliding: bool = True, **target: Any) -> JobConfig:
    return JobConfig.model_validate(
        {
            "name": "trx",
            "start_date": START,
            "max_window": max_window,
            "source_a": {"path": "/a"},
            "source_b": {"path": "/b"},
            "join": {"how": "left", "join_cols": ["TrxId"], "enforce_sliding_join_window": sliding},
            "target": {"path": "/t", "keys": ["TrxId"], "b_keys": ["SepaId"], **target},
        }
    )


def spans(plan: tuple[Any, ...]) -> list[tuple[int, int]]:
    return [(p.window.start - day(0), p.window.end - day(0)) for p in plan]


def test_a_first_run_plans_from_start_date_to_the_latest_unit_in_both_sources() -> None:
    assert spans(run_plan(job(), None, day(9), None)) == [(0, 9)]


def test_a_run_plans_windows_of_at_most_max_window_units_from_the_unit_after_the_watermark() -> None:
    plan = run_plan(job(max_window=3), day(1), day(9), None)
    assert spans(plan) == [(2, 4), (5, 7), (8, 9)]
    assert {p.mode for p in plan} == {ModeName.FORWARD}


def test_a_run_stops_at_until_and_plans_nothing_when_nothing_is_pending() -> None:
    assert spans(run_plan(job(max_window=3), day(1), day(9), day(5))) == [(2, 4), (5, 5)]
    assert run_plan(job(), day(9), day(9), None) == ()


def test_without_the_sliding_join_window_every_forward_window_is_a_forward_only_merge() -> None:
    assert {p.mode for p in run_plan(job(max_window=1, sliding=False), None, day(2), None)} == {ModeName.FORWARD_ONLY}


def test_a_rebuild_is_one_window_from_start_date_to_the_latest_unit() -> None:
    plan = rebuild_plan(job(), day(5), day(9))
    assert (spans(plan), plan[0].mode) == ([(0, 9)], ModeName.REBUILD)


def test_a_rebuild_that_would_lose_the_rows_after_the_watermark_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"--rebuild: the sources now end at 2025-03-04, before the watermark"):
        rebuild_plan(job(), day(5), day(3))


def test_a_rerun_applying_corrections_recomputes_from_start_on_to_the_watermark() -> None:
    plan = rerun_plan(job(), day(2), day(3), day(9), "--end")
    assert (spans(plan), plan[0].mode) == ([(2, 9)], ModeName.RECOMPUTE)


def test_a_rerun_keeping_corrections_or_without_the_sliding_window_merges_only_the_window_given() -> None:
    for kept in (job(corrections="keep"), job(sliding=False)):
        plan = rerun_plan(kept, day(2), day(3), day(9), "--end")
        assert (spans(plan), plan[0].mode) == ([(2, 3)], ModeName.RERUN)
    assert not write_mode(ModeName.RERUN).moves_watermark and not write_mode(ModeName.RECOMPUTE).moves_watermark


@pytest.mark.parametrize(
    ("first", "last", "watermark", "message"),
    [
        (2, 3, None, r"rerun: job 'trx' has not run yet; use run"),
        (2, 6, 5, r"rerun: --end 2025-03-07 is after the watermark 2025-03-06"),
        (-1, 3, 5, r"rerun: --start 2025-02-28 is before the job's start_date 2025-03-01"),
    ],
    ids=["before_any_run", "past_the_watermark", "before_start_date"],
)
def test_a_rerun_outside_the_processed_units_is_refused_naming_the_argument(
    first: int, last: int, watermark: int | None, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        rerun_plan(job(), day(first), day(last), None if watermark is None else day(watermark), "--end")


def test_a_backfill_plans_one_window_a_chunk_and_resumes_after_the_watermark() -> None:
    fresh = backfill_plan(job(), day(0), day(40), "month", None, day(40))  # March, and 10 days of April
    assert spans(fresh) == [(0, 30), (31, 40)]
    resumed = backfill_plan(job(), day(0), day(40), "month", day(33), day(40))
    assert [(p.number, p.done) for p in resumed] == [(1, True), (2, False)]
    assert spans(to_do(resumed)) == [(34, 40)]  # the chunk the watermark cut goes on after it


@pytest.mark.parametrize(
    ("first", "last", "watermark", "latest", "message"),
    [
        (5, 9, day(2), day(9), r"--start 2025-03-06 would leave 2025-03-04\.\.2025-03-05 unprocessed"),
        (0, 12, None, day(9), r"--end 2025-03-13 is after the latest RecDate present in both sources \(2025-03-10\)"),
    ],
    ids=["gap_after_the_watermark", "past_the_latest_data"],
)
def test_a_backfill_that_would_leave_a_gap_or_read_missing_data_is_refused(
    first: int, last: int, watermark: int | None, latest: int, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        backfill_plan(job(), day(first), day(last), "day", watermark, latest)
