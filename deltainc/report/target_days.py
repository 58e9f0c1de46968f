"""A catch-up window's rows per day, from the target by output RecDate, through delta-rs (no JVM).

The run log counts a window's rows once: a window of thirty days is one bar of thirty days' rows. The
target knows each final row's day (its output RecDate), so the report asks it, for the windows that span
several days only: the files of those days (by partition value on the default day layout, by their RecDate
statistics otherwise) are counted from their statistics where one file holds one JoinType, else read, two
columns at most (JoinType, and the RecDate where it is not the partition). Open rows have moved
to the watermark since; their count stays the run log's, on the window's last day (`series.outcome_chart`).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import unquote

from deltainc.join.join_types import WAITING_TYPES, JoinType
from deltainc.join.output_layout import JOIN_TYPE
from deltainc.pipeline.delta.delta_log import LogUnreadable, column_types, open_table, reading, spark_value
from deltainc.pipeline.delta.delta_log_stats import source_location
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.report.series import DayCounts, Row, window_label
from deltainc.storage import is_s3

__all__ = ["catch_ups", "days_from_target"]

log = logging.getLogger("deltainc")


def _day(label: object) -> dt.date:
    return dt.datetime.fromisoformat(str(label)).date()


def catch_ups(windows: Sequence[Row]) -> list[Row]:
    """The windows that span more than one day."""
    return [w for w in windows if _day(w.get("window_start")) != _day(w.get("window_end"))]


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


def _in(day: dt.date, ranges: Sequence[tuple[dt.date, dt.date]]) -> bool:
    return any(first <= day <= last for first, last in ranges)


def _as_day(value: object) -> dt.date:
    return value.date() if isinstance(value, dt.datetime) else value  # type: ignore[return-value]


def _count(job: JobConfig, wide: Sequence[Row]) -> dict[tuple[dt.date, str], int]:
    """Rows per (day, outcome) of final JoinTypes in the target, in the catch-up windows' days.

    From the add actions first: a file of one day (its partition value) and one JoinType (its min = max statistic)
    is counted by its row count, unread; only other files in those days are read, two columns of them. A file with
    deleted rows (a deletion vector) is not counted from its statistics: LogUnreadable, the windows show whole."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    location = source_location(job.target, "target")
    if is_s3(location):
        raise LogUnreadable("the target is in S3: its files are not read without Spark")
    table = open_table(location)
    if table is None:
        raise FileNotFoundError(f"no Delta table at {job.target.label}")
    with reading(location):
        types = column_types(table, location)
        inc = next((name for name in types if name.lower() == job.join.inc_col.lower()), job.join.inc_col)
        partitioned = inc in table.metadata().partition_columns
        deleted = set(table.deletion_vectors().read_all().column("filepath").to_pylist())
        actions = table.get_add_actions(flatten=True)
        names = set(actions.column_names)

        def column(name: str) -> list[object]:
            return list(actions.column(name).to_pylist()) if name in names else [None] * actions.num_rows

        paths, records = column("path"), column("num_records")
        days = column(f"partition.{inc}") if partitioned else [None] * actions.num_rows
        lows, highs = column(f"min.{inc}"), column(f"max.{inc}")
        codes_low, codes_high = column(f"min.{JOIN_TYPE}"), column(f"max.{JOIN_TYPE}")
    ranges = [(_day(w.get("window_start")), _day(w.get("window_end"))) for w in wide]
    final = {int(code) for code in JoinType if code not in WAITING_TYPES}
    counts: dict[tuple[dt.date, str], int] = {}

    def add(day: dt.date, code: int, rows: int) -> None:
        if code in final and _in(day, ranges):
            key = (day, JoinType(code).outcome)
            counts[key] = counts.get(key, 0) + rows

    for index, path in enumerate(paths):
        if partitioned:
            value = days[index]
            if value is None or not _in(_as_day(spark_value(value, types[inc], inc)), ranges):
                continue
        elif lows[index] is not None and highs[index] is not None:
            low, high = (
                _as_day(spark_value(lows[index], types[inc], inc)),
                _as_day(spark_value(highs[index], types[inc], inc)),
            )
            if not any(low <= last and first <= high for first, last in ranges):
                continue
        if path in deleted or unquote(str(path)) in deleted:
            raise LogUnreadable(f"{location}: a file of those days has deleted rows (a deletion vector)")
        one_code = codes_low[index] is not None and codes_low[index] == codes_high[index]
        if partitioned and one_code and records[index] is not None:
            add(_as_day(spark_value(days[index], types[inc], inc)), int(codes_low[index]), int(records[index]))  # type: ignore[call-overload]
            continue
        with reading(location):
            read = pq.read_table(
                Path(location) / unquote(str(path)), columns=[JOIN_TYPE] + ([] if partitioned else [inc])
            )
        if partitioned:
            day = _as_day(spark_value(days[index], types[inc], inc))
            for item in pc.value_counts(read[JOIN_TYPE]).to_pylist():
                if item["values"] is not None:
                    add(day, int(item["values"]), int(item["counts"]))
            continue
        for value, code in zip(read[inc].to_pylist(), read[JOIN_TYPE].to_pylist(), strict=True):
            if value is not None and code is not None:
                add(_as_day(value), int(code), 1)
    return counts
