"""The report's first line for on-call: how the job is doing, in one sentence. Pure: rows and status in, text out.

It answers what an on-call engineer asks first: when did it last run and how did that end, how far behind the
sources is it, is the backlog of open rows growing, and did runs fail or die lately.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from deltainc.pipeline.state import JobStatus
from deltainc.report.series import Row, open_rows, run_mark, windows_of

__all__ = ["health_line"]


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


def _backlog(windows: Sequence[Row]) -> str:
    if not windows:
        return "backlog unknown (no window yet)"
    first, last = open_rows(windows[0]), open_rows(windows[-1])
    trend = "rising" if last > first else "falling" if last < first else "steady"
    return f"backlog {last:,} open rows, {trend} (from {first:,} over {_last(len(windows), 'window')})"


def _failures(rows: Sequence[Row]) -> str:
    marks = [m for m in (run_mark(r) for r in rows) if m is not None]
    if not marks:
        return f"no failure in {_last(len(rows), 'run')}"
    kinds = dict.fromkeys(marks)
    counted = ", ".join(f"{marks.count(kind)} {kind}" for kind in kinds)
    return f"{counted} in {_last(len(rows), 'run')}"


def health_line(rows: Sequence[Row], status: JobStatus, uom: str, now: dt.datetime, last: int) -> str:
    """One line: the last run (when, how it ended), the lag behind the sources, the backlog's trend over the last
    `last` runs' windows, and the failed, cancelled and taken-over runs among them. `rows`: oldest first.

    >>> health_line(rows, status, "hour", now, 30)  # doctest: +SKIP
    'last run 12 min ago, succeeded; 1 hour behind its sources; backlog 35 open rows, rising (from 20 over the
    last 8 windows); 1 failed, 1 took over in the last 10 runs'
    """
    recent = list(rows[-last:])
    newest = recent[-1]
    when = _ago(newest.get("started_at"), now)
    return "; ".join(
        [
            f"last run {when}, {newest.get('status')}",
            _lag(status, uom),
            _backlog(windows_of(recent)),
            _failures(recent),
        ]
    )
