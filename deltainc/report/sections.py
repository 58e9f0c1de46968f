"""The report's sections apart from its charts: the marks of failed runs on the windows, the catch-up windows kept
out of the lines, the on-call health line, and `status`'s sparklines of the last runs. Pure: run-log rows in.

A failed run moved no watermark, so it is no window of the charts; a run that took over a dead run's lock (a
`kill -9`, a lost host) is one. Each is marked on the window it worked on: its own window when that window is
shown, else the first window processed after it started (the retry that caught up), else the last window shown.

A catch-up window is far wider than the job's usual one (a first run on a history, a run after an outage, a
backfill chunk): one window of four days in an hour job, on one axis with the hourly windows, draws every hourly
point at zero. Its final rows are drawn per unit from the target (`history.units_from_target`); its other
numbers, which no table splits per unit, are shown apart, in a table of their own.
"""

from __future__ import annotations

import datetime as dt
import statistics
from collections.abc import Sequence

from deltainc.pipeline.state import JobStatus
from deltainc.pipeline.state.catch_up import WIDER, is_catch_up
from deltainc.report.series import Marks, Row, open_rows, run_mark, span, window_label, windows_of

__all__ = [
    "window_marks",
    "WIDER",
    "catch_ups",
    "catch_up_cells",
    "STEADY",
    "health_line",
    "BLOCKS",
    "sparkline",
    "trend_lines",
]

STEADY = 0.05  # a backlog that moved by at most this share of the larger of its two ends is steady
BLOCKS = "▁▂▃▄▅▆▇█"


def _when(row: Row) -> dt.datetime:
    started = row.get("started_at")
    if isinstance(started, dt.datetime):
        return started if started.tzinfo is not None else started.replace(tzinfo=dt.timezone.utc)
    return dt.datetime.min.replace(tzinfo=dt.timezone.utc)


def window_marks(rows: Sequence[Row], windows: Sequence[Row]) -> Marks:
    """The marks of `rows` (oldest first) on `windows` (`series.windows_of`), by window label; several runs on one
    window are counted ("2 failed, took over"). The runs' charts mark the run's own point (`series.run_mark`).

    >>> window_marks([failed_at_7, retried_7], [retried_7])  # doctest: +SKIP
    {'2025-03-01T07:00:00': 'failed'}
    """
    if not windows:
        return {}
    labels = {window_label(w) for w in windows}
    newest = window_label(windows[-1])
    by_time = sorted(windows, key=_when)
    found: dict[str, list[str]] = {}
    for row in rows:
        mark = run_mark(row)
        if mark is None:
            continue
        label = window_label(row) if row.get("window_start") is not None else None
        if label not in labels:
            later = next((w for w in by_time if _when(w) >= _when(row)), None)
            label = window_label(later) if later is not None else newest
        found.setdefault(label, []).append(mark)
    # each kind once, with its count when more than one: 'failed', or '2 failed, took over'
    return {
        label: ", ".join(m if marks.count(m) == 1 else f"{marks.count(m)} {m}" for m in dict.fromkeys(marks))
        for label, marks in found.items()
    }


def catch_ups(windows: Sequence[Row], uom: str) -> list[Row]:
    """The windows that span more than one unit and more than `WIDER` times the median window's units: the rule
    by which `deltainc check` tells catch-ups apart too (`catch_up.is_catch_up`).

    >>> [window_label(w) for w in catch_ups(windows, "hour")]  # doctest: +SKIP
    ['2025-03-01T00:00:00..2025-03-04T23:00:00']
    """
    if not windows:
        return []
    spans = [span(w, uom) for w in windows]
    usual = statistics.median(spans)
    return [w for w, units in zip(windows, spans, strict=True) if is_catch_up(units, usual)]


def _number(row: Row, name: str) -> int:
    value = row.get(name)
    return 0 if value is None else int(value)  # type: ignore[call-overload]


def catch_up_cells(row: Row, uom: str, final: Sequence[str]) -> dict[str, object]:
    """One catch-up window's numbers, as its row of the page's table: its units, the rows that became final, the
    timed-out and too-late rows, the backlog it left, the files and MiB it read (all sources and the target) and
    its seconds."""
    files = sum(_number(row, f"files_read_{side}") for side in ("a", "b", "target"))
    size = sum(_number(row, f"bytes_read_{side}") for side in ("a", "b", "target"))
    return {
        "window": window_label(row),
        f"{uom}s": span(row, uom),
        "final rows": sum(_number(row, f"rows_{name}") for name in final),
        "a_timed_out": _number(row, "rows_a_timed_out"),
        "too_late": row.get("rows_too_late"),
        "backlog after": open_rows(row),
        "files read": files,
        "MiB read": round(size / (1024.0 * 1024.0), 2),
        "s": row.get("duration_s"),
    }


def _last(count: int, thing: str) -> str:
    """'the last 8 windows', or 'the last window'."""
    return f"the last {thing}" if count == 1 else f"the last {count} {thing}s"


def _ago(then: object, now: dt.datetime) -> str:
    if not isinstance(then, dt.datetime):
        return "when unknown"
    seconds = max(0, int((now - then).total_seconds()))
    for size, name in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds // size} {name} ago"
    return f"{seconds} s ago"


def _lag(status: JobStatus, uom: str) -> str:
    if status.problem:
        return "lag unknown (a source cannot be read)"
    if status.pending is None:
        return "up to date with its sources"
    units = status.pending.whole.units
    return f"{units} {uom}{'s' if units != 1 else ''} behind its sources"


def _trend(first: int, last: int) -> str:
    """'rising' or 'falling' when the backlog moved by more than `STEADY` of the larger end, else 'steady': an
    hour job's backlog goes up and down by a few rows a window without anything going wrong.

    >>> _trend(1000, 1020), _trend(1000, 1100), _trend(0, 1)
    ('steady', 'rising', 'rising')
    """
    if abs(last - first) <= STEADY * max(first, last):
        return "steady"
    return "rising" if last > first else "falling"


def _backlog(windows: Sequence[Row]) -> str:
    if not windows:
        return "backlog unknown (no window yet)"
    first, last = open_rows(windows[0]), open_rows(windows[-1])
    trend = _trend(first, last)
    return f"backlog {last:,} open rows, {trend} (from {first:,} over {_last(len(windows), 'window')})"


def _failures(rows: Sequence[Row]) -> str:
    marks = [m for m in (run_mark(r) for r in rows) if m is not None]
    if not marks:
        return f"no failure in {_last(len(rows), 'run')}"
    counted = ", ".join(f"{marks.count(kind)} {kind}" for kind in dict.fromkeys(marks))
    return f"{counted} in {_last(len(rows), 'run')}"


def _last_run(rows: Sequence[Row], status: JobStatus, now: dt.datetime) -> str:
    """The run that holds the job's lock while it is alive (a run or a rerun under way: its rows so far are no
    last run's), else the newest run-log row's start and how it ended."""
    lock = status.lock
    if lock is not None and lock.get("alive"):
        return f"run {lock.get('run_id')} in progress, started {_ago(lock.get('acquired_at'), now)}"
    newest = rows[-1]
    return f"last run {_ago(newest.get('started_at'), now)}, {newest.get('status')}"


def health_line(rows: Sequence[Row], status: JobStatus, uom: str, now: dt.datetime, last: int) -> str:
    """The report's first line for on-call: the last run (when, how it ended; or the run under way, while a live
    run holds the lock), the lag behind the sources, the backlog's trend over the last `last` runs' windows (steady
    within `STEADY`), and the failed, cancelled and taken-over runs among them. `rows`: oldest first.

    >>> health_line(rows, status, "hour", now, 30)  # doctest: +SKIP
    'last run 12 min ago, succeeded; 1 hour behind its sources; backlog 35 open rows, rising (from 20 over the
    last 8 windows); 1 failed, 1 took over in the last 10 runs'
    """
    recent = list(rows[-last:])
    return "; ".join(
        [_last_run(recent, status, now), _lag(status, uom), _backlog(windows_of(recent)), _failures(recent)]
    )


def sparkline(values: Sequence[float]) -> str:
    """One block character per value, scaled from the smallest to the largest (all equal: the lowest block).

    >>> sparkline([0, 5, 10])
    '▁▅█'
    """
    if not values:
        return ""
    low, high = min(values), max(values)
    span = high - low
    return "".join(BLOCKS[0 if span == 0 else round((v - low) / span * (len(BLOCKS) - 1))] for v in values)


def _line(name: str, values: Sequence[float], unit: str = "") -> tuple[str, str]:
    def shown(value: float) -> str:
        return f"{value:.1f}" if unit == "s" else f"{value:,.0f}"

    return name, f"{sparkline(values)}  {shown(values[0])} -> {shown(values[-1])}{unit and ' ' + unit}"


def trend_lines(rows: Sequence[Row], outcomes: Sequence[str]) -> list[tuple[str, str]]:
    """`status`'s trend, (name, text) lines over `rows` (newest first, as status reads them): the backlog and each
    of `outcomes` per window that moved the watermark, and every run's duration, oldest to newest; gathered by the
    report's functions so that the text and the page agree. Empty without a window."""
    oldest_first = list(reversed(rows))
    windows = windows_of(oldest_first)
    lines: list[tuple[str, str]] = []
    if windows:
        lines.append(_line("backlog", [float(open_rows(w)) for w in windows]))
        for name in outcomes:
            values = [float(w.get(f"rows_{name}") or 0) for w in windows]  # type: ignore[arg-type]
            if any(values):
                lines.append(_line(name, values))
    durations = [float(r.get("duration_s") or 0.0) for r in oldest_first]  # type: ignore[arg-type]
    if durations:
        lines.append(_line("duration", durations, "s"))
    return lines
