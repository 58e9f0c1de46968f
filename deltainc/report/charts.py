"""What a chart of the report is, whatever draws it (the page and `--png` draw the same `Chart`, so they cannot
show different numbers), and its aggregation into days, weeks or months so that a page stays light. Pure.

Three years of hourly windows are 26,280 points per series; a browser draws a few hundred SVG elements per
chart at once, not tens of thousands. So a chart with more than `MAX_POINTS` points is folded into the finest
period that leaves at most that many: day, then ISO week, then month. Counts are summed over the period; states
at a point in time (the backlog, the lag) keep the period's last value. The chart's note says what was done.

A chart may carry threshold lines (`Line`, the job's `[checks]` levels, `thresholds.py`): each judges one point (a
run, a window, a moment). A point that keeps its period's last value is still one, so a folded chart of states
keeps its lines; a point that sums a period's runs or windows is not, and a line of 900 s across days of summed
seconds would say every day breached it, so a folded chart of counts leaves its lines out and its note says so.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable
from dataclasses import dataclass, replace

from deltainc.text_enum import TextEnum

__all__ = ["Kind", "Fold", "Series", "Line", "Chart", "MAX_POINTS", "PERIODS", "period_of", "aggregate"]


class Kind(TextEnum):
    """How a chart draws its series: bars stacked on each other (parts of one whole), or lines side by side."""

    STACKED = "stacked"
    LINES = "lines"


class Fold(TextEnum):
    """How a series' values of several points are folded into one when a chart is aggregated: summed (rows
    written, files read, seconds) or the last one kept (a state at a point in time: the backlog, the lag)."""

    SUM = "sum"
    LAST = "last"


@dataclass(frozen=True)
class Series:
    """One named row of numbers, one per point of its chart's x; None where the run log does not know it."""

    name: str
    values: tuple[float | None, ...]
    fold: Fold = Fold.SUM


@dataclass(frozen=True)
class Line:
    """A threshold drawn across a chart at `value` (in the chart's unit): its legend's `label` ("warn 900 s
    (duration_s)") and its `level`, "warn" or "error", which the drawing gives its colour."""

    label: str
    level: str
    value: float


@dataclass(frozen=True)
class Chart:
    """One chart: its id on the page, title, unit of y, the points' labels, the series, and per point a mark
    ("failed", "cancelled", "took over") or None; `note` says how the points were aggregated, if they were;
    `lines`: the thresholds drawn across it."""

    key: str
    title: str
    unit: str
    x: tuple[str, ...]
    series: tuple[Series, ...]
    kind: Kind
    marks: tuple[str | None, ...] = ()
    note: str = ""
    lines: tuple[Line, ...] = ()

    def total(self, index: int) -> float:
        """The sum of the series at point `index` (unknown values count 0)."""
        return sum(s.values[index] or 0.0 for s in self.series)

    @property
    def empty(self) -> bool:
        """No point, or no known value at any point."""
        return not self.x or all(v is None for s in self.series for v in s.values)


MAX_POINTS = 400


def _day(label: str) -> str:
    return label[:10]


def _week(label: str) -> str:
    return _week_of(label[:10])


@functools.lru_cache(maxsize=4096)
def _week_of(day_label: str) -> str:
    """The week of a day, once per day (an hourly history asks 24 times a day)."""
    day = dt.date.fromisoformat(day_label)
    return f"week of {(day - dt.timedelta(days=day.weekday())).isoformat()}"


def _month(label: str) -> str:
    return label[:7]


PERIODS: tuple[tuple[str, Callable[[str], str]], ...] = (("day", _day), ("week", _week), ("month", _month))


def period_of(labels: tuple[str, ...], limit: int = MAX_POINTS) -> tuple[str, Callable[[str], str]] | None:
    """The finest period that folds `labels` (ISO dates or datetimes, a window's 'start..end' by its end) into at
    most `limit` points; None when they are few enough already. A window label is placed by its end."""
    if len(labels) <= limit:
        return None
    ends = [label.rsplit("..", 1)[-1] for label in labels]
    for name, key in PERIODS:
        if len({key(end) for end in ends}) <= limit:
            return name, key
    return PERIODS[-1]


def _fold(values: list[float | None], fold: Fold) -> float | None:
    known = [v for v in values if v is not None]
    if not known:
        return None
    return known[-1] if fold is Fold.LAST else sum(known)


def _marks(marks: list[str | None]) -> str | None:
    """The marks of a period's points summed by kind: 'failed' and '2 failed, took over' fold into '3 failed, 1
    took over'."""
    counted: dict[str, int] = {}
    for mark in marks:
        for part in (mark or "").split(", "):
            if part:
                number, _, kind = part.partition(" ")
                many = number.isdigit() and bool(kind)
                counted[kind if many else part] = counted.get(kind if many else part, 0) + (int(number) if many else 1)
    return ", ".join(f"{n} {mark}" for mark, n in counted.items()) or None


def aggregate(chart: Chart, limit: int = MAX_POINTS) -> Chart:
    """`chart` with at most `limit` points: itself when it has no more, else folded by `period_of` its labels.

    >>> aggregate(chart).note  # doctest: +SKIP
    '26280 windows folded into 157 weeks: counts summed, open rows and lag as of each week's end'
    """
    found = period_of(chart.x, limit)
    if found is None:
        return chart
    name, key = found
    groups: dict[str, list[int]] = {}
    for index, label in enumerate(chart.x):
        groups.setdefault(key(label.rsplit("..", 1)[-1]), []).append(index)
    series = tuple(
        replace(s, values=tuple(_fold([s.values[i] for i in members], s.fold) for members in groups.values()))
        for s in chart.series
    )
    marks = tuple(_marks([chart.marks[i] for i in members]) for members in groups.values()) if chart.marks else ()
    kept = {s.fold for s in chart.series}
    how = "counts summed" if kept == {Fold.SUM} else "values as of each period's end"
    if kept == {Fold.SUM, Fold.LAST}:
        how = "counts summed, states as of each period's end"
    lines = chart.lines if kept == {Fold.LAST} else ()
    dropped = "threshold lines left out: each judges one point, not a sum" if chart.lines and not lines else ""
    folded = f"{len(chart.x)} points folded into {len(groups)} {name}s: {how}"
    note = "; ".join(filter(None, (chart.note, folded, dropped)))
    return replace(chart, x=tuple(groups), series=series, marks=marks, note=note, lines=lines)
