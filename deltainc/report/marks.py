"""Where a failed, cancelled or taken-over run is marked on the charts of windows: the window it was processing.
Pure: run-log rows in, {window label: mark} out.

A failed run moved no watermark, so it is no window of those charts; a run that took over a dead run's lock (a
`kill -9`, a lost host) is one. Each is marked on the window it worked on: its own window when that window is
shown, else the first window processed after it started (the retry that caught up), else the last window shown (it
failed after the newest one). The runs' charts (durations, lag) mark the run's own point (`series.run_mark`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from deltainc.report.series import Marks, Row, run_mark, window_label

__all__ = ["window_marks"]


def _when(row: Row) -> dt.datetime:
    started = row.get("started_at")
    if isinstance(started, dt.datetime):
        return started if started.tzinfo is not None else started.replace(tzinfo=dt.timezone.utc)
    return dt.datetime.min.replace(tzinfo=dt.timezone.utc)


def window_marks(rows: Sequence[Row], windows: Sequence[Row]) -> Marks:
    """The marks of `rows` (oldest first) on `windows` (`series.windows_of`), by window label; several runs on one
    window are counted ("2 failed, took over").

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
    return {label: _counted(marks) for label, marks in found.items()}


def _counted(marks: list[str]) -> str:
    """'failed', or '2 failed, took over': each kind once, with its count when more than one."""
    kinds = dict.fromkeys(marks)
    return ", ".join(mark if marks.count(mark) == 1 else f"{marks.count(mark)} {mark}" for mark in kinds)
