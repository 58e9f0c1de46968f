"""The job's `[checks]` thresholds as lines across the report's charts (`Line`): the same limits `deltainc check`
judges, drawn where a chart shows the value a check judges, so that a reader sees how close a job runs to them.
Pure: the job's `ChecksConfig` and the charts in, the charts with their lines out.

A line goes on a chart only in the chart's own unit, and only at the levels the job sets:

- `duration_s` (seconds a run took) on the run durations (s): a bar is one window's seconds, the phases summed to
  its `duration_s`; a run of one window is its bar, a run of several is judged on its bars together.
- `too_late` (too-late B rows per unit of output) on the timed-out and too-late rows per window (rows): the
  catch-up windows are kept off that chart, so a job's window of one unit is its count per unit.
- `lag` (units the watermark is behind the sources' latest RecDate) on the watermark's lag (the job's units);
  the check judges the latest RecDate in all sources, the lowest of the chart's lines at a run.

`timed_out_share` (a share of rows over several windows) and `freshness_hours` (hours since the last success)
have no chart of their unit, so they draw no line: a share is no count of rows per window.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from deltainc.pipeline.job.checks_section import ChecksConfig, Threshold
from deltainc.report.charts import Chart, Line

__all__ = ["CHECKED", "check_units", "threshold_lines", "with_thresholds"]

# The check whose value each chart shows, by the chart's key (`series.py`).
CHECKED: Mapping[str, str] = {"durations": "duration_s", "late": "too_late", "lag": "lag"}


def check_units(uom: str) -> dict[str, str]:
    """The unit each drawn check's value is in, as a chart's y axis names it; `uom`: the job's `time_uom`.

    >>> check_units("day")["lag"]
    'days'
    """
    return {"duration_s": "s", "too_late": "rows", "lag": f"{uom}s"}


def _said(value: float, unit: str) -> str:
    """A threshold with its unit, as a legend says it: '1,800 s', '1 day', '3 days'."""
    one = value == 1 and len(unit) > 2 and unit.endswith("s")
    return f"{value:,g} {unit[:-1] if one else unit}"


def threshold_lines(check: str, limit: Threshold, unit: str) -> tuple[Line, ...]:
    """The lines of one check's thresholds: its warn, then its error, each only when the job sets it.

    >>> [line.label for line in threshold_lines("duration_s", Threshold(warn=900), "s")]
    ['warn 900 s (duration_s)']
    """
    levels = (("warn", limit.warn), ("error", limit.error))
    return tuple(
        Line(f"{level} {_said(value, unit)} ({check})", level, float(value))
        for level, value in levels
        if value is not None
    )


def with_thresholds(chart: Chart, checks: ChecksConfig, uom: str) -> Chart:
    """`chart` with the lines of the check that judges what it shows (`CHECKED`), when its y axis is in that check's
    unit; itself otherwise, or when the job sets no level of that check."""
    check = CHECKED.get(chart.key)
    if check is None or chart.unit != check_units(uom)[check]:
        return chart
    lines = threshold_lines(check, getattr(checks, check), chart.unit)
    return replace(chart, lines=chart.lines + lines) if lines else chart
