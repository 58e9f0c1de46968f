"""What the report reads, through the Delta logs with delta-rs (no JVM): every run-log row of the job, where it
stands now, the target's layout and a catch-up window's final rows per unit; and the rows chosen by `--since` and
`--last`.

The run log counts a window's rows once: a catch-up of four days in an hour job is one bar of 96 hours' rows,
which flattens every hourly bar beside it. The target knows each final row's unit (its output RecDate), so the
report asks it, for the windows that span several units only: the files of those units (by partition value when
the target is partitioned by RecDate, by their RecDate statistics otherwise) are counted from their statistics
where a partition's file holds one JoinType, else read, two columns at most (JoinType, and the RecDate where it
is not the partition). Open rows are not counted here: they are the backlog, drawn apart (`series.backlog_chart`).

A report only reads; what it cannot read from the logs (a state folder given by a URL delta-rs does not reach)
is an error naming it, not a reason to start Spark.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from deltainc.errors import ConfigError, DeltaincError
from deltainc.join.options import WAITING_TYPES, JoinType
from deltainc.join.output_layout import JOIN_TYPE
from deltainc.pipeline.delta.delta_log import LogUnreadable, reading
from deltainc.pipeline.delta.snapshot import log_required, look
from deltainc.pipeline.delta.table import logs_else, open_handle
from deltainc.pipeline.inspect.status_from_logs import state_from_log
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.state import JobStatus, describe, latest_in_sources
from deltainc.pipeline.state.job_status import utc
from deltainc.report.series import Row, UnitCounts, span, window_label
from deltainc.settings import Settings
from deltainc.time_units import to_index, unit_label

__all__ = ["History", "NoRuns", "read_history", "chosen", "layout_text", "units_from_target"]

log = logging.getLogger("deltainc")

ALL_RUNS = 10_000_000


class NoRuns(DeltaincError):
    """The job never ran: there is nothing to report, which is no error (the command says so and exits 0)."""


@dataclass(frozen=True)
class History:
    """The job's run-log rows, oldest first (started_at aware UTC), and its status as `status` reads it."""

    rows: tuple[Row, ...]
    status: JobStatus


def read_history(job: JobConfig, settings: Settings) -> History:
    """Every run-log row of `job` and its status, from the Delta logs; ConfigError naming `state_dir` when they
    cannot be read. The run log is scanned twice (the state's few columns, then every row), not three times as
    `status_from_log` and a read of all runs would."""
    try:
        with log_required(f"state_dir: the run log of {job.name} cannot be read"):
            state, newest_first = state_from_log(job, settings, ALL_RUNS)
    except OSError as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]  # delta-rs may add a backtrace
        raise ConfigError(f"state_dir: the run log of {job.name} cannot be read: {first}") from exc
    # The header says why when the sources' logs cannot answer; the history is still the run log's.
    latest, problem = logs_else(
        "the sources' latest RecDate", lambda: (latest_in_sources(job, settings.state_dir), None), _unanswered
    )
    status = describe(
        job, state, latest, newest_first[:1], settings.lock_expiry_seconds, problem, "delta_log", settings.state_dir
    )
    for row in newest_first:  # pyspark's naive local time made explicit, as status shows it
        row["started_at"] = utc(row.get("started_at"))
    return History(tuple(reversed(newest_first)), status)


def _started(row: Row) -> dt.datetime | None:
    value = row.get("started_at")
    return value if isinstance(value, dt.datetime) else None


def chosen(rows: Sequence[Row], job: str, since: dt.date | None, last: int | None) -> tuple[Row, ...]:
    """The rows a report shows: those started on or after `since` (a UTC date), then the `last` of them. NoRuns
    when the job never ran; ConfigError naming --since when no run started since then.

    >>> chosen(rows, "trx", dt.date(2025, 3, 1), 30)  # doctest: +SKIP
    """
    if not rows:
        raise NoRuns(f"{job}: no runs yet: nothing to report (run the job first: deltainc run {job})")
    kept = list(rows)
    if since is not None:
        kept = [r for r in kept if (s := _started(r)) is not None and s.date() >= since]
        if not kept:
            newest = max((s for r in rows if (s := _started(r)) is not None), default=None)
            when = "none" if newest is None else newest.date().isoformat()
            raise ConfigError(f"--since {since.isoformat()}: {job} has no run since then (its last run started {when})")
    if last is not None:
        kept = kept[-last:]
    return tuple(kept)


def _unanswered(why: Exception) -> tuple[int | None, str | None]:
    """No latest RecDate, and why (the page's header shows it)."""
    return None, str(why)


def layout_text(job: JobConfig) -> str:
    """The header's 'partitioned by IsFinal (the target's Delta log)', 'not partitioned (...)', or why it is unknown:
    read from the target's log, since a target created by an older version keeps its own layout whatever the job
    file's `target.partition_by` (or its default for the job's unit) now says."""

    def from_log(location: str) -> str:
        columns = look(location).partition_columns
        shown = f"partitioned by {', '.join(columns)}" if columns else "not partitioned"
        return f"{shown} (the target's Delta log)"

    def unknown(why: Exception) -> str:
        first = (str(why).strip().splitlines() or [type(why).__name__])[0]
        return f"unknown: the target's Delta log cannot be read ({first})"

    return open_handle(job.target, "target").answer("the target's layout", from_log, unknown)


def _unit(value: object, uom: str) -> int:
    """The unit index of a RecDate value as delta-rs or pyarrow give it (a naive timestamp is UTC)."""
    if isinstance(value, (dt.date, dt.datetime)):
        return to_index(value, uom)
    return to_index(dt.datetime.fromisoformat(str(value)), uom)


def units_from_target(job: JobConfig, windows: Sequence[Row]) -> Mapping[str, UnitCounts]:
    """Per window that spans several units (by its label), its final rows per unit of output RecDate as the target
    holds them now: {window label: {unit label: {outcome: rows}}}. Empty when no window spans several units, or
    when the target cannot be read from its log (then those windows are shown apart; the reason is logged).

    >>> units_from_target(job, windows)  # doctest: +SKIP
    {'2025-03-01T00:00:00..2025-03-01T05:00:00': {'2025-03-01T00:00:00': {'same_time': 2}, ...}}
    """
    uom = job.join.time_uom
    wide = [w for w in windows if span(w, uom) > 1]
    if not wide:
        return {}
    ranges = [(_unit(w.get("window_start"), uom), _unit(w.get("window_end"), uom)) for w in wide]

    def apart(why: Exception) -> dict[tuple[int, str], int] | None:
        log.warning("%s: catch-up windows shown apart: the target cannot be read per %s: %s", job.name, uom, why)
        return None

    target = open_handle(job.target, "target")
    counts = target.answer("the target's rows per unit", lambda at: _count(at, job, ranges), apart, on_disk=True)
    if counts is None:
        return {}
    found: dict[str, dict[str, dict[str, int]]] = {}
    for window, (first, last) in zip(wide, ranges, strict=True):
        units = found.setdefault(window_label(window), {})
        for unit in range(first, last + 1):  # a unit without rows is a bar of zero, not a gap
            units[unit_label(unit, uom)] = {}
        for (unit, outcome), rows in counts.items():
            if first <= unit <= last:
                units[unit_label(unit, uom)][outcome] = rows
    return found


def _in(unit: int, ranges: Sequence[tuple[int, int]]) -> bool:
    return any(first <= unit <= last for first, last in ranges)


def _count(location: str, job: JobConfig, ranges: Sequence[tuple[int, int]]) -> dict[tuple[int, str], int]:
    """Rows per (unit, outcome) of final JoinTypes in the target at `location` (a local folder), in `ranges` of
    units.

    From the add actions first: a file of one unit (its partition value) and one JoinType (its min = max statistic)
    is counted by its row count, unread; only other files in those units are read, two columns of them. A file with
    deleted rows (a deletion vector) is not counted from its statistics: LogUnreadable, the windows show apart."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    uom = job.join.time_uom
    snapshot = look(location)
    with reading(location):
        inc = next((name for name in snapshot.types if name.lower() == job.join.inc_col.lower()), job.join.inc_col)
        partitioned = inc in snapshot.partition_columns
        deleted = set(snapshot.table.deletion_vectors().read_all().column("filepath").to_pylist())
        column = snapshot.values
        paths, records = column("path"), column("num_records")
        parts = column(f"partition.{inc}") if partitioned else [None] * len(paths)
        lows, highs = column(f"min.{inc}"), column(f"max.{inc}")
        codes_low, codes_high = column(f"min.{JOIN_TYPE}"), column(f"max.{JOIN_TYPE}")
    final = {int(code) for code in JoinType if code not in WAITING_TYPES}
    counts: dict[tuple[int, str], int] = {}

    def add(unit: int, code: int, rows: int) -> None:
        if code in final and _in(unit, ranges):
            key = (unit, JoinType(code).outcome)
            counts[key] = counts.get(key, 0) + rows

    def unit_of(value: object) -> int:
        return _unit(value, uom)

    for index, path in enumerate(paths):
        one_unit: int | None = None
        if partitioned:
            if parts[index] is None or not _in(unit_of(parts[index]), ranges):
                continue
            one_unit = unit_of(parts[index])
        elif lows[index] is not None and highs[index] is not None:
            low, high = unit_of(lows[index]), unit_of(highs[index])
            if not any(low <= last and first <= high for first, last in ranges):
                continue
        if path in deleted or unquote(str(path)) in deleted:
            raise LogUnreadable(f"{location}: a file of those units has deleted rows (a deletion vector)")
        one_code = codes_low[index] is not None and codes_low[index] == codes_high[index]
        if one_unit is not None and one_code and records[index] is not None:
            add(one_unit, int(codes_low[index]), int(records[index]))
            continue
        with reading(location):
            read = pq.read_table(
                Path(location) / unquote(str(path)), columns=[JOIN_TYPE] + ([] if partitioned else [inc])
            )
        if one_unit is not None:
            for item in pc.value_counts(read[JOIN_TYPE]).to_pylist():
                if item["values"] is not None:
                    add(one_unit, int(item["values"]), int(item["counts"]))
            continue
        for value, code in zip(read[inc].to_pylist(), read[JOIN_TYPE].to_pylist(), strict=True):
            if value is not None and code is not None:
                add(_unit(value, uom), int(code), 1)
    return counts
