"""Catch-up windows: the few windows far wider than the job's usual one (a first run on a history, a run after an
outage, a backfill chunk), which the report keeps out of its lines. Pure.

One window of four days in an hour job reads 99 files and times out 1,677 rows; on one axis with the hourly
windows beside it, every hourly point is drawn at zero. Its final rows are drawn per unit from the target
(`target_units`); its other numbers, which no table splits per unit, are shown apart, in a table of their own.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from deltainc.report.series import Row, open_rows, span, window_label

__all__ = ["WIDER", "catch_ups", "catch_up_cells"]

WIDER = 2  # a catch-up spans more than this many times the usual window's units


def catch_ups(windows: Sequence[Row], uom: str) -> list[Row]:
    """The windows that span more than one unit and more than `WIDER` times the median window's units.

    >>> [window_label(w) for w in catch_ups(windows, "hour")]  # doctest: +SKIP
    ['2025-03-01T00:00:00..2025-03-04T23:00:00']
    """
    if not windows:
        return []
    spans = [span(w, uom) for w in windows]
    usual = statistics.median(spans)
    return [w for w, units in zip(windows, spans, strict=True) if units > 1 and units > WIDER * usual]


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
