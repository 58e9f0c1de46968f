"""The report's charts gathered from run-log rows: one rule a test, rows inline, no Spark, no table."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

import pytest

from deltainc.join.options import COUNTED_ORDER
from deltainc.join.windows import pending_range
from deltainc.pipeline.state import JobStatus
from deltainc.report.charts import Chart, Fold, Kind, Series, aggregate
from deltainc.report.drawing import CHAR_WIDTH, WIDTH, x_ticks
from deltainc.report.sections import catch_ups, health_line, sparkline, trend_lines, window_marks
from deltainc.report.series import (
    backlog_chart,
    duration_chart,
    lag_chart,
    late_chart,
    outcome_chart,
    reads_charts,
    windows_of,
)
from deltainc.time_units import to_index

pytestmark = pytest.mark.pure


def run(day: str, end: str | None = None, **values: object) -> dict[str, object]:
    """A succeeded run-log row of the window [day, end] that moved the watermark; `values` override."""
    end = end or day
    row: dict[str, object] = {
        "run_id": f"r-{day}",
        "command": "run",
        "window_start": day,
        "window_end": end,
        "status": "succeeded",
        "started_at": dt.datetime.fromisoformat(end).replace(tzinfo=dt.timezone.utc) + dt.timedelta(hours=30),
        "duration_s": 10.0,
        "watermark": end,
        **{f"rows_{code.outcome}": 0 for code in COUNTED_ORDER},  # a RunRecord's counts default to 0
    }
    return row | values


def series(chart: Chart) -> dict[str, tuple[float | None, ...]]:
    return {s.name: s.values for s in chart.series}


def test_rows_by_outcome_are_the_run_logs_counts_of_final_rows_per_window() -> None:
    rows = [run("2025-03-01", rows_same_time=4, rows_a_timed_out=1), run("2025-03-02", rows_same_time=1, rows_b_late=2)]
    chart = outcome_chart(rows)
    assert chart.x == ("2025-03-01", "2025-03-02")
    assert series(chart) == {"same_time": (4.0, 1.0), "b_late": (0.0, 2.0), "a_timed_out": (1.0, 0.0)}
    assert chart.kind is Kind.STACKED


def test_open_rows_each_window_rewrites_are_the_backlog_not_rows_that_became_final() -> None:
    rows = [
        run("2025-03-01T10:00:00", rows_same_time=250, rows_a_waiting=2800, rows_b_waiting=40, rows_provisional=9),
        run("2025-03-01T11:00:00", rows_same_time=240, rows_a_waiting=2810),
    ]
    chart = outcome_chart(rows)
    assert series(chart) == {"same_time": (250.0, 240.0)}
    assert max(chart.total(i) for i in range(len(chart.x))) == 250.0
    assert series(backlog_chart(rows))["a_waiting"] == (2800.0, 2810.0)


def test_a_catch_up_window_is_shown_per_unit_of_its_final_rows() -> None:
    rows = [run("2025-03-01T00:00:00", "2025-03-01T02:00:00", rows_same_time=9, rows_a_timed_out=1, rows_a_waiting=5)]
    per_unit = {
        "2025-03-01T00:00:00..2025-03-01T02:00:00": {
            "2025-03-01T00:00:00": {"same_time": 4},
            "2025-03-01T01:00:00": {},
            "2025-03-01T02:00:00": {"same_time": 5, "a_timed_out": 1},
        }
    }
    chart = outcome_chart(rows, per_unit)
    assert chart.x == ("2025-03-01T00:00:00", "2025-03-01T01:00:00", "2025-03-01T02:00:00")
    assert series(chart) == {"same_time": (4.0, 0.0, 5.0), "a_timed_out": (0.0, 0.0, 1.0)}


def test_reruns_and_failed_runs_are_not_windows_of_the_history() -> None:
    rows = [
        run("2025-03-01"),
        run("2025-03-02", status="failed", watermark=None),
        run("2025-03-01", command="rerun", watermark=None),
        run("2025-03-02"),
    ]
    assert [r["window_start"] for r in windows_of(rows)] == ["2025-03-01", "2025-03-02"]


def test_the_backlog_is_the_open_rows_each_window_left() -> None:
    rows = [run("2025-03-01", rows_a_waiting=3), run("2025-03-02", rows_a_waiting=1, rows_b_waiting=2)]
    chart = backlog_chart(rows)
    assert chart.x == ("2025-03-01", "2025-03-02")
    assert series(chart) == {"a_waiting": (3.0, 1.0), "b_waiting": (0.0, 2.0)}
    assert {s.fold for s in chart.series} == {Fold.LAST}


def test_too_late_rows_are_unknown_in_rows_written_before_they_were_counted() -> None:
    rows = [run("2025-03-01", rows_a_timed_out=2), run("2025-03-02", rows_a_timed_out=0, rows_too_late=3)]
    assert series(late_chart(rows)) == {"a_timed_out": (2.0, 0.0), "too_late": (None, 3.0)}


def test_the_lag_is_each_sources_latest_minus_the_watermark_in_units() -> None:
    latest = json.dumps({"source_a": "2025-03-05", "source_b": "2025-03-03"})
    rows = [run("2025-03-01"), run("2025-03-02", source_latest=latest)]
    chart = lag_chart(rows, "day")
    assert len(chart.x) == 1  # the first row predates the record of the sources' latest: no lag
    assert series(chart) == {"source_a": (3.0,), "source_b": (1.0,)}


def test_durations_are_split_by_phase_and_older_rows_are_unrecorded() -> None:
    phases = {"spark_start_s": 20.0, "join_s": 5.0, "write_s": 3.0, "bookkeeping_s": 1.0, "duration_s": 29.0}
    rows = [run("2025-03-01", duration_s=12.0), run("2025-03-02", **phases)]
    chart = duration_chart(rows)
    assert series(chart) == {
        "Spark's start": (None, 20.0),
        "join": (None, 5.0),
        "write": (None, 3.0),
        "bookkeeping": (None, 1.0),
        "unrecorded": (12.0, None),
    }
    assert chart.total(1) == 29.0


def test_failed_cancelled_and_taken_over_runs_are_marked() -> None:
    rows = [
        run("2025-03-01", status="failed", error="boom"),
        run("2025-03-02", status="cancelled"),
        run("2025-03-03", took_over="r0 (host): its lease expired"),
        run("2025-03-04"),
    ]
    assert duration_chart(rows).marks == ("failed", "cancelled", "took over", None)


def test_reads_are_per_feature_source_in_a_feature_job() -> None:
    reads = json.dumps({"features[risk]": {"files": 2, "bytes": 2048}, "features[pay]": {"files": 4, "bytes": 1024}})
    rows = [run("2025-03-01", files_read_a=3, bytes_read_a=1048576, source_reads=reads, files_read_target=1)]
    files, size = reads_charts(rows)
    assert series(files) == {"source_a": (3.0,), "features[risk]": (2.0,), "features[pay]": (4.0,), "target": (1.0,)}
    assert series(size)["source_a"] == (1.0,)


def test_many_points_are_folded_into_periods_counts_summed_states_last() -> None:
    hours = [dt.datetime(2025, 1, 1) + dt.timedelta(hours=h) for h in range(24 * 3)]
    chart = Chart(
        "c",
        "t",
        "rows",
        tuple(h.isoformat() for h in hours),
        (Series("written", tuple(1.0 for _ in hours)), Series("open", tuple(float(h.hour) for h in hours), Fold.LAST)),
        Kind.STACKED,
        tuple("failed" if h.hour == 5 else None for h in hours),
    )
    folded = aggregate(chart, limit=10)
    assert folded.x == ("2025-01-01", "2025-01-02", "2025-01-03")
    assert series(folded) == {"written": (24.0, 24.0, 24.0), "open": (23.0, 23.0, 23.0)}
    assert folded.marks == ("1 failed", "1 failed", "1 failed")
    assert folded.note.startswith("72 points folded into 3 days")
    assert aggregate(chart, limit=100) is chart


def test_three_years_of_hourly_windows_fold_into_weeks() -> None:
    start = dt.datetime(2023, 1, 1)
    labels = tuple((start + dt.timedelta(hours=h)).isoformat() for h in range(24 * 365 * 3))
    folded = aggregate(Chart("c", "t", "rows", labels, (Series("x", tuple(1.0 for _ in labels)),), Kind.LINES))
    assert len(folded.x) == 158 and folded.x[0] == "week of 2022-12-26"
    assert sum(v or 0 for v in folded.series[0].values) == len(labels)


def test_the_status_trend_is_a_sparkline_of_the_same_numbers() -> None:
    assert sparkline([0, 5, 10]) == "▁▅█"
    newest_first = [run("2025-03-02", rows_a_waiting=4, duration_s=2.0), run("2025-03-01", rows_a_waiting=1)]
    lines = dict(trend_lines(newest_first, ["same_time"]))
    assert lines["backlog"] == "▁█  1 -> 4"
    assert lines["duration"] == "█▁  10.0 -> 2.0 s"


def test_a_catch_up_is_a_window_far_wider_than_the_usual_one() -> None:
    hours = [run(f"2025-03-01T{h:02d}:00:00") for h in (6, 7, 8)]
    wide = run("2025-03-01T00:00:00", "2025-03-01T05:00:00")
    assert catch_ups([wide, *hours], "hour") == [wide]
    every_three_hours = [run(f"2025-03-01T{h:02d}:00:00", f"2025-03-01T{h + 2:02d}:00:00") for h in (0, 3, 6)]
    assert catch_ups(every_three_hours, "hour") == []  # the usual window of a job run every three hours


def test_failed_runs_and_takeovers_are_marked_on_the_window_they_worked_on() -> None:
    def at(hour: int, minute: int, **values: object) -> dict[str, object]:
        started = dt.datetime(2025, 3, 1, hour, minute, tzinfo=dt.timezone.utc)
        return run(f"2025-03-01T{hour - 1:02d}:00:00", started_at=started, **values)

    rows = [
        at(7, 5),
        at(8, 5, status="failed", watermark=None, error="boom"),  # its window, retried and committed below
        at(8, 10),
        at(9, 5, took_over="run-9 (host): its processes are gone"),
        at(10, 5, status="failed", watermark=None, window_start=None, window_end=None),  # failed before a window
    ]
    windows = windows_of(rows)
    assert window_marks(rows, windows) == {"2025-03-01T07:00:00": "failed", "2025-03-01T08:00:00": "took over, failed"}
    assert backlog_chart(windows, window_marks(rows, windows)).marks == (None, "failed", "took over, failed")


def test_the_health_line_says_last_run_lag_backlog_trend_and_failures() -> None:
    def at(hour: int, waiting: int, **values: object) -> dict[str, object]:
        started = dt.datetime(2025, 3, 1, hour, 5, tzinfo=dt.timezone.utc)
        return run(f"2025-03-01T{hour - 1:02d}:00:00", started_at=started, rows_a_waiting=waiting, **values)

    rows = [at(7, 20), at(8, 25, status="failed", watermark=None), at(9, 30, took_over="r (h): gone"), at(10, 35)]
    uom, latest, watermark = (
        "hour",
        to_index(dt.datetime(2025, 3, 1, 11), "hour"),
        9 + to_index(dt.date(2025, 3, 1), "hour"),
    )
    pending = pending_range(watermark, 0, latest, None, 0, uom)
    status = JobStatus("trx", "2025-03-01T09:00:00", "2025-03-01T11:00:00", pending, None)
    now = dt.datetime(2025, 3, 1, 10, 17, tzinfo=dt.timezone.utc)
    assert health_line(rows, status, uom, now, 30) == (
        "last run 12 min ago, succeeded; 2 hours behind its sources; backlog 35 open rows, rising (from 20 over the "
        "last 3 windows); 1 failed, 1 took over in the last 4 runs"
    )
    assert health_line(rows[-1:], replace(status, pending=None), uom, now, 30).endswith(
        "up to date with its sources; backlog 35 open rows, steady (from 35 over the last window); "
        "no failure in the last run"
    )


@pytest.mark.parametrize(
    ("first", "last", "trend"),
    [(1000, 1020, "steady"), (1020, 1000, "steady"), (1000, 1050, "steady"), (1000, 1060, "rising"),
     (1000, 940, "falling"), (0, 0, "steady"), (0, 1, "rising")],
)  # fmt: skip
def test_a_backlog_that_moved_by_at_most_five_per_cent_is_steady(first: int, last: int, trend: str) -> None:
    rows = [run("2025-03-01", rows_a_waiting=first), run("2025-03-02", rows_a_waiting=last)]
    status = JobStatus("trx", "2025-03-02", "2025-03-02", None, None)
    now = dt.datetime(2025, 3, 4, tzinfo=dt.timezone.utc)
    assert f"backlog {last:,} open rows, {trend} (from {first:,} over" in health_line(rows, status, "day", now, 30)


def test_the_health_line_says_a_run_is_in_progress_while_a_live_run_holds_the_lock() -> None:
    rows = [run("2025-03-01"), run("2025-03-02")]  # the rerun under way has written no row yet
    now = rows[-1]["started_at"] + dt.timedelta(hours=2)  # type: ignore[operator]
    lock = {"run_id": "rerun-7", "owner": "ops@host:42", "acquired_at": now - dt.timedelta(minutes=3), "alive": True}
    status = JobStatus("trx", "2025-03-02", "2025-03-02", None, lock)
    assert health_line(rows, status, "day", now, 30).startswith("run rerun-7 in progress, started 3 min ago; ")
    dead = replace(status, lock={**lock, "alive": False})  # a dead run's lock: the next run takes it over
    assert health_line(rows, dead, "day", now, 30).startswith("last run 2 h ago, succeeded; ")


def test_tick_labels_of_long_windows_do_not_overlap() -> None:
    labels = tuple(f"2025-03-{d:02d}T00:00:00..2025-03-{d + 1:02d}T23:00:00" for d in range(1, 4))
    ticks = x_ticks(labels, 690 / len(labels))
    assert ticks[0][1] == "2025-03-01 00:00..2025-03-02 23:00"
    spans = sorted((left, left + len(text) * CHAR_WIDTH) for left, text in ticks)
    assert all(right <= following for (_, right), (following, _) in zip(spans, spans[1:], strict=False))
    assert spans[0][0] >= 0 and spans[-1][1] <= WIDTH


def test_marks_folded_into_a_period_are_summed_by_kind() -> None:
    labels = tuple(f"2025-03-01T{h:02d}:00:00" for h in range(3))
    marks = ("failed", "2 failed, took over", None)
    chart = Chart("c", "t", "rows", labels, (Series("x", (1.0, 1.0, 1.0)),), Kind.STACKED, marks)
    assert aggregate(chart, limit=2).marks == ("3 failed, 1 took over",)
