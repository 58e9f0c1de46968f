"""The report draws the job's `[checks]` thresholds as lines on the charts of what they judge: one rule a test, rows
and checks inline, no Spark; the page's SVG and the PNG's matplotlib figure are read as drawn."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from cli_jobs import D1, job_toml, settings_env
from matplotlib.colors import to_hex
from test_report_command import page_data, record, write_runs

from deltainc.cli.app import main
from deltainc.pipeline.job.checks_section import ChecksConfig
from deltainc.report.charts import Chart, Fold, Kind, Line, Series, aggregate
from deltainc.report.drawing import HEIGHT, LEVELS, chart_svg, figure_of
from deltainc.report.series import backlog_chart, duration_chart, lag_chart, late_chart, outcome_chart, reads_charts
from deltainc.report.thresholds import with_thresholds

pytestmark = pytest.mark.pure

RUN = {
    "run_id": "r1",
    "window_start": "2025-03-01",
    "window_end": "2025-03-01",
    "status": "succeeded",
    "started_at": dt.datetime(2025, 3, 2, 6, tzinfo=dt.timezone.utc),
    "duration_s": 40.0,
    "join_s": 30.0,
    "bookkeeping_s": 10.0,
    "watermark": "2025-03-01",
    "rows_a_timed_out": 2,
    "rows_too_late": 3,
    "source_latest": '{"source_a": "2025-03-03", "source_b": "2025-03-02"}',
}
EVERY = ChecksConfig.model_validate(
    {
        "lag": {"warn": 1, "error": 3},
        "timed_out_share": {"warn": 0.05, "error": 0.2},
        "too_late": {"warn": 10, "error": 100},
        "freshness_hours": {"warn": 26, "error": 50},
        "duration_s": {"warn": 900, "error": 1800},
    }
)


def charts(checks: ChecksConfig) -> dict[str, Chart]:
    """Every chart of the report over one run, with `checks`' lines, by key."""
    rows = [RUN]
    drawn = [outcome_chart(rows), backlog_chart(rows), late_chart(rows), lag_chart(rows, "day"), duration_chart(rows)]
    return {c.key: with_thresholds(c, checks, "day") for c in [*drawn, *reads_charts(rows)]}


def test_a_chart_whose_quantity_has_a_threshold_carries_the_jobs_warn_and_error_lines() -> None:
    assert charts(EVERY)["durations"].lines == (
        Line("warn 900 s (duration_s)", "warn", 900.0),
        Line("error 1,800 s (duration_s)", "error", 1800.0),
    )


def test_each_threshold_is_drawn_on_the_chart_in_its_unit_and_no_other() -> None:
    lines = {key: [line.label for line in chart.lines] for key, chart in charts(EVERY).items()}
    assert lines == {
        "outcomes": [],
        "backlog": [],
        "late": ["warn 10 rows (too_late)", "error 100 rows (too_late)"],  # too-late rows per window, as the chart
        "lag": ["warn 1 day (lag)", "error 3 days (lag)"],  # units of the job's time_uom, as the chart
        "durations": ["warn 900 s (duration_s)", "error 1,800 s (duration_s)"],
        "files": [],
        "bytes": [],
    }  # timed_out_share (a share) and freshness_hours (hours since a success) have no chart of their unit


def test_a_threshold_the_job_leaves_out_draws_no_line() -> None:
    only_warn = charts(ChecksConfig.model_validate({"duration_s": {"warn": 900}}))
    assert [line.level for line in only_warn["durations"].lines] == ["warn"]
    assert all(not chart.lines for chart in charts(ChecksConfig()).values())


def test_a_chart_whose_axis_is_not_in_the_checks_unit_gets_no_line() -> None:
    in_minutes = Chart("durations", "Run durations (min)", "min", ("r1",), (Series("run", (1.0,)),), Kind.STACKED)
    assert with_thresholds(in_minutes, EVERY, "day").lines == ()
    assert with_thresholds(lag_chart([RUN], "hour"), EVERY, "day").lines == ()  # hours against a day job's lag


def hourly(values: Fold) -> Chart:
    """Three days of hourly points, 5 each, with a warn line at 10."""
    hours = tuple((dt.datetime(2025, 1, 1) + dt.timedelta(hours=h)).isoformat() for h in range(72))
    series = (Series("x", tuple(5.0 for _ in hours), values),)
    return Chart("c", "t", "rows", hours, series, Kind.LINES, lines=(Line("warn 10 rows (c)", "warn", 10.0),))


def test_a_chart_of_states_folded_into_periods_keeps_its_lines() -> None:
    folded = aggregate(hourly(Fold.LAST), limit=10)
    assert folded.x == ("2025-01-01", "2025-01-02", "2025-01-03") and folded.lines == hourly(Fold.LAST).lines


def test_a_chart_of_counts_folded_into_sums_leaves_its_lines_out_and_says_so() -> None:
    folded = aggregate(hourly(Fold.SUM), limit=10)
    assert folded.series[0].values == (120.0, 120.0, 120.0)  # a day's sum is no window's count: 10 would be breached
    assert folded.lines == () and "threshold lines left out" in folded.note


def test_the_page_draws_each_line_dashed_across_the_chart_at_its_value_in_its_levels_colour() -> None:
    svg = chart_svg(charts(EVERY)["durations"])
    drawn = re.findall(r'<g class="threshold" data-level="(\w+)".*?<title>(.*?)</title><line (.*?)/></g>', svg)
    assert [(level, title) for level, title, _ in drawn] == [
        ("warn", "warn 900 s (duration_s)"),
        ("error", "error 1,800 s (duration_s)"),
    ]
    heights = [float(re.search(r'y1="([\d.]+)"', attributes).group(1)) for _, _, attributes in drawn]  # type: ignore[union-attr]
    assert heights[1] < heights[0] < HEIGHT / 2  # the axis reaches the error line; warn halfway down, 40 s far below
    assert all(
        f'stroke="{LEVELS[level]}"' in attributes and "stroke-dasharray" in attributes for level, _, attributes in drawn
    )


def test_the_png_draws_each_line_dashed_in_its_levels_colour_and_names_it_in_the_legend() -> None:
    figure = figure_of(charts(EVERY)["late"], "trx")
    axes = figure.axes[0]
    drawn = {line.get_label(): line for line in axes.get_lines() if line.get_label().endswith("(too_late)")}
    assert sorted(drawn) == ["error 100 rows (too_late)", "warn 10 rows (too_late)"]
    warn = drawn["warn 10 rows (too_late)"]
    assert list(warn.get_ydata()) == [10.0, 10.0] and warn.get_linestyle() == "--"
    assert to_hex(warn.get_color()) == LEVELS["warn"] and axes.get_ylim()[1] >= 100
    assert set(drawn) <= {text.get_text() for text in axes.get_legend().get_texts()}


def test_the_report_of_a_job_with_checks_carries_its_lines_on_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in settings_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    (tmp_path / "jobs").mkdir()
    toml = job_toml("trx", str(tmp_path / "a"), str(tmp_path / "b"), str(tmp_path / "t"), D1)
    (tmp_path / "jobs" / "trx.toml").write_text(toml + "\n[checks]\nduration_s = { warn = 900 }\n")
    write_runs(tmp_path, record(0), record(1))
    assert main(["report", "trx", "--out", str(tmp_path / "trx.html")]) == 0
    found = {key: chart["lines"] for key, chart in page_data(tmp_path / "trx.html")["charts"].items()}  # type: ignore[union-attr]
    assert found["durations"] == [{"label": "warn 900 s (duration_s)", "level": "warn", "value": 900.0}]
    assert not any(lines for key, lines in found.items() if key != "durations")
    assert "warn 900 s (duration_s)</span>" in (tmp_path / "trx.html").read_text()  # in the legend too
