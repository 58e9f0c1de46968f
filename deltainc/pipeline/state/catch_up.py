"""A run-log row's window in units, and the catch-up windows told from the usual ones: pure, no I/O.

A catch-up window (a first run over a history, a run after an outage, a backfill chunk) spans far more units than
the job's usual window: 12 hours in one window of an hour job that runs every hour. Its counts and its seconds are
those of 12 usual windows, so a threshold set for one usual window must not judge them as one. `deltainc check`
(`health.py`) and `deltainc report` (`report/sections.py`) tell them apart by the same rule, `is_catch_up`.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping

from deltainc.time_units import TimeUnit, parse_point

__all__ = ["WIDER", "window_units", "usual_units", "is_catch_up"]

WIDER = 2  # a catch-up spans more than this many times the usual window's units


def window_units(row: Mapping[str, object], uom: TimeUnit | str) -> int:
    """How many units of `uom` a run-log row's window spans: 1 for one hour of an hour job, and for a row without
    a window (a run that failed before it chose one).

    >>> window_units({"window_start": "2025-03-01T00:00:00", "window_end": "2025-03-01T11:00:00"}, "hour")
    12
    """
    start, end = row.get("window_start"), row.get("window_end")
    if start is None or end is None or start == end:
        return 1
    return parse_point(str(end), "window_end", uom) - parse_point(str(start), "window_start", uom) + 1


def usual_units(windows: Iterable[Mapping[str, object]], uom: TimeUnit | str) -> float:
    """The usual window's units: the median of `windows`' units (run-log rows), 1 when there is none (a job's
    first run: its usual window is not known yet, and one unit is the smallest a window can be).

    >>> usual_units([{"window_start": "2025-03-01", "window_end": "2025-03-01"}], "day")
    1
    """
    spans = [window_units(row, uom) for row in windows]
    return statistics.median(spans) if spans else 1


def is_catch_up(units: int, usual: float) -> bool:
    """Whether a window of `units` is a catch-up next to windows of `usual` units: more than one unit, and more
    than `WIDER` times the usual window's.

    >>> is_catch_up(12, 1), is_catch_up(2, 1), is_catch_up(24, 24)
    (True, False, False)
    """
    return units > 1 and units > WIDER * usual
