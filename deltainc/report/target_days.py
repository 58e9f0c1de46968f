"""A catch-up window's rows per day, from the target by output RecDate, through delta-rs (no JVM).

The run log counts a window's rows once: a window of thirty days is one bar of thirty days' rows. The
target knows each final row's day (its output RecDate), so the report asks it, for the windows that span
several days only, reading two columns (the output RecDate and JoinType) of the files whose RecDate falls in
those windows (partition pruning on the default day layout, file statistics otherwise). Open rows have moved
to the watermark since; their count stays the run log's, on the window's last day (`series.outcome_chart`).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from deltainc.join.join_types import WAITING_TYPES, JoinType
from deltainc.join.output_layout import JOIN_TYPE
from deltainc.pipeline.delta.log_stats import source_location
from deltainc.pipeline.delta.log_tables import LogUnreadable, open_table
from deltainc.pipeline.job.config import JobConfig
from deltainc.report.series import DayCounts, Row, window_label

if TYPE_CHECKING:
    import pyarrow.compute as pc

__all__ = ["catch_ups", "days_from_target"]

log = logging.getLogger("deltainc")


def _day(label: object) -> dt.date:
    return dt.datetime.fromisoformat(str(label)).date()


def catch_ups(windows: Sequence[Row]) -> list[Row]:
    """The windows that span more than one day."""
    return [w for w in windows if _day(w.get("window_start")) != _day(w.get("window_end"))]


def _bound(label: object, end: bool) -> dt.datetime:
    day = _day(label)
    return dt.datetime.combine(day + dt.timedelta(days=1 if end else 0), dt.time())


def days_from_target(job: JobConfig, windows: Sequence[Row]) -> Mapping[str, DayCounts]:
    """Per catch-up window (by its label), its final rows per day of output RecDate as the target holds them now.
    Empty when no window spans several days, or when the target cannot be read from its log (then the windows
    show whole; the reason is logged)."""
    wide = catch_ups(windows)
    if not wide:
        return {}
    try:
        counts = _count(job, wide)
    except (LogUnreadable, FileNotFoundError, OSError) as exc:
        log.warning("%s: catch-up windows shown whole: the target cannot be read per day: %s", job.name, exc)
        return {}
    found: dict[str, dict[str, dict[str, int]]] = {}
    for window in wide:
        first, last = _day(window.get("window_start")), _day(window.get("window_end"))
        days = found.setdefault(window_label(window), {})
        for (day, outcome), rows in counts.items():
            if first <= day <= last:
                days.setdefault(day.isoformat(), {})[outcome] = rows
        day = first
        while day <= last:  # a day without rows is a bar of zero, not a gap
            days.setdefault(day.isoformat(), {})
            day += dt.timedelta(days=1)
    return found


def _count(job: JobConfig, wide: Sequence[Row]) -> dict[tuple[dt.date, str], int]:
    """Rows per (day, outcome) of final JoinTypes in the target, in the catch-up windows' days."""
    import pyarrow as pa
    import pyarrow.compute as pc

    location = source_location(job.target, "target")
    table = open_table(location)
    if table is None:
        raise FileNotFoundError(f"no Delta table at {job.target.label}")
    inc = job.join.inc_col
    dataset = table.to_pyarrow_dataset()
    kind = dataset.schema.field(inc).type
    condition: pc.Expression | None = None
    for window in wide:
        low, high = _bound(window.get("window_start"), False), _bound(window.get("window_end"), True)
        lower, upper = (low.date(), high.date()) if pa.types.is_date(kind) else (low, high)
        term = (pc.field(inc) >= pa.scalar(lower, kind)) & (pc.field(inc) < pa.scalar(upper, kind))
        condition = term if condition is None else condition | term
    final = [int(code) for code in JoinType if code not in WAITING_TYPES]
    condition = condition & pc.field(JOIN_TYPE).isin(final)
    rows = dataset.to_table(columns=[inc, JOIN_TYPE], filter=condition)
    days = pc.cast(rows[inc], pa.date32()) if not pa.types.is_date(kind) else rows[inc]
    grouped = pa.table({"day": days, "code": rows[JOIN_TYPE]}).group_by(["day", "code"]).aggregate([("code", "count")])
    return {
        (day, JoinType(code).outcome): int(n)
        for day, code, n in zip(
            grouped["day"].to_pylist(), grouped["code"].to_pylist(), grouped["code_count"].to_pylist(), strict=True
        )
    }
