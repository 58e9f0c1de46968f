"""The report's charts gathered from run-log rows: pure functions, no I/O, no Spark.

A run-log row is a mapping of its columns (`RunRecord`'s fields; an older run log lacks the newer ones,
which read as unknown). The rows come oldest first. A *window* here is a succeeded row that moved the
watermark (a forward run, a backfill chunk, a rebuild): re-runs recompute a processed window and would
count its rows twice, so the windows' charts leave them out; the runs' charts (durations) show every row.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Mapping, Sequence

from deltainc.join.options import COUNTED_ORDER, WAITING_TYPES, JoinType
from deltainc.report.charts import Chart, Fold, Kind, Series
from deltainc.time_units import to_index

__all__ = [
    "Row",
    "UnitCounts",
    "Marks",
    "window_label",
    "span",
    "windows_of",
    "outcome_chart",
    "backlog_chart",
    "late_chart",
    "lag_chart",
    "duration_chart",
    "reads_charts",
    "open_rows",
    "run_mark",
    "PHASES",
]

Row = Mapping[str, object]
# A window's final rows per unit of output RecDate, read from the target: {unit label: {outcome: rows}}.
UnitCounts = Mapping[str, Mapping[str, int]]
# What a window's points are marked with (its failed runs, its takeover): {window label: "failed, took over"}.
Marks = Mapping[str, str]

OPEN = tuple(code.outcome for code in WAITING_TYPES)
PHASES = (
    ("spark_start_s", "Spark's start"),
    ("join_s", "join"),
    ("write_s", "write"),
    ("bookkeeping_s", "bookkeeping"),
)


def _int(value: object) -> int | None:
    return None if value is None else int(value)  # type: ignore[call-overload]


def _float(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def window_label(row: Row) -> str:
    """A row's window as the report names it: its start, or 'start..end' when it spans several units."""
    start, end = row.get("window_start"), row.get("window_end")
    return str(start) if start == end else f"{start}..{end}"


def span(row: Row, uom: str) -> int:
    """How many units of `uom` a row's window spans (1 for one hour of an hour job)."""
    start, end = row.get("window_start"), row.get("window_end")
    return 1 if start == end else _unit(str(end), uom) - _unit(str(start), uom) + 1


def windows_of(rows: Sequence[Row]) -> list[Row]:
    """The rows of succeeded windows that moved the watermark, in the order of their windows."""
    moved = [r for r in rows if r.get("status") == "succeeded" and r.get("watermark") is not None]
    return sorted(moved, key=lambda r: (str(r.get("window_end")), str(r.get("window_start"))))


def _final(rows: Sequence[Row], per_unit: Mapping[str, UnitCounts]) -> list[str]:
    """The final outcomes any row or unit counted, in the run log's order (a plain left job has no B side's)."""
    counted = {name for units in per_unit.values() for counts in units.values() for name, n in counts.items() if n}
    return [
        code.outcome
        for code in COUNTED_ORDER
        if code.outcome not in OPEN
        and (
            code is JoinType.SAME_TIME
            or code.outcome in counted
            or any(_int(r.get(f"rows_{code.outcome}")) for r in rows)
        )
    ]


def outcome_chart(
    windows: Sequence[Row], per_unit: Mapping[str, UnitCounts] | None = None, marks: Marks | None = None
) -> Chart:
    """Rows that became final per window, by outcome, stacked; the open rows a window re-wrote are the backlog,
    charted apart (`backlog_chart`). A window found in `per_unit` (a catch-up that spans several units) is shown
    unit by unit, its final rows by output RecDate as the target holds them. A window's mark goes on its last point.

    >>> outcome_chart([{"window_start": "2025-01-01", "window_end": "2025-01-01", "rows_same_time": 3}]).x
    ('2025-01-01',)
    """
    per_unit, marks = per_unit or {}, marks or {}
    names = _final(windows, per_unit)
    x: list[str] = []
    columns: list[dict[str, int | None]] = []
    marked: list[str | None] = []
    for row in windows:
        label = window_label(row)
        units = per_unit.get(label)
        if not units:
            x.append(label)
            columns.append({name: _int(row.get(f"rows_{name}")) for name in names})
            marked.append(marks.get(label))
            continue
        for unit in sorted(units):
            x.append(unit)
            columns.append({n: int(units[unit].get(n, 0)) for n in names})
            marked.append(None)
        marked[-1] = marks.get(label)
    series = tuple(Series(n, tuple(_as_float(c.get(n)) for c in columns)) for n in names)
    title = "Rows that became final per window, by outcome"
    return Chart("outcomes", title, "rows", tuple(x), series, Kind.STACKED, _marks(marked))


def _marks(marked: Sequence[str | None]) -> tuple[str | None, ...]:
    """A chart's marks: none at all when no point is marked."""
    return tuple(marked) if any(marked) else ()


def _as_float(value: int | None) -> float | None:
    return None if value is None else float(value)


def open_rows(row: Row) -> int:
    """The rows a window left open (waiting for a partner, or a provisional match): the backlog at its end."""
    return sum(int(_int(row.get(f"rows_{name}")) or 0) for name in OPEN)


def backlog_chart(windows: Sequence[Row], marks: Marks | None = None) -> Chart:
    """The open rows after each window, by kind, over the windows' ends: the backlog at the watermark."""
    names = [n for n in OPEN if any(_int(r.get(f"rows_{n}")) for r in windows)] or ["a_waiting"]
    series = tuple(Series(n, tuple(_as_float(_int(r.get(f"rows_{n}"))) for r in windows), Fold.LAST) for n in names)
    x = tuple(str(r.get("window_end")) for r in windows)
    title = "Open rows at the watermark after each window (the backlog)"
    return Chart("backlog", title, "rows", x, series, Kind.STACKED, _window_marks(windows, marks))


def _window_marks(windows: Sequence[Row], marks: Marks | None) -> tuple[str | None, ...]:
    return _marks([(marks or {}).get(window_label(w)) for w in windows])


def late_chart(windows: Sequence[Row], marks: Marks | None = None) -> Chart:
    """Timed-out A rows and too-late B rows per window (too late: unknown in rows written before it was counted)."""
    series = (
        Series("a_timed_out", tuple(_as_float(_int(r.get("rows_a_timed_out"))) for r in windows)),
        Series("too_late", tuple(_as_float(_int(r.get("rows_too_late"))) for r in windows)),
    )
    x = tuple(window_label(r) for r in windows)
    marked = _window_marks(windows, marks)
    return Chart("late", "Timed-out rows and too-late B rows per window", "rows", x, series, Kind.LINES, marked)


@functools.lru_cache(maxsize=65536)
def _unit(label: str, uom: str) -> int:
    return to_index(dt.datetime.fromisoformat(label), uom)


def lag_chart(rows: Sequence[Row], uom: str) -> Chart:
    """How far the watermark is behind each source's latest RecDate at each run, in units of `uom`: the latest
    the run saw when it began, against the watermark after it. Rows written before the sources' latest was
    recorded have no lag (unknown)."""
    watermark: str | None = None
    points: list[tuple[str, dict[str, float]]] = []
    roles: list[str] = []
    marked: list[str | None] = []
    for row in rows:
        if row.get("watermark") is not None:
            watermark = str(row["watermark"])
        latest = row.get("source_latest")
        if not isinstance(latest, str) or watermark is None:
            continue
        seen = {role: label for role, label in json.loads(latest).items() if label is not None}
        roles += [role for role in seen if role not in roles]
        behind = {role: float(_unit(label, uom) - _unit(watermark, uom)) for role, label in seen.items()}
        points.append((_started(row), behind))
        marked.append(run_mark(row))
    series = tuple(Series(role, tuple(p.get(role) for _, p in points), Fold.LAST) for role in roles)
    x = tuple(label for label, _ in points)
    title = f"Watermark behind each source's latest RecDate ({uom}s)"
    return Chart("lag", title, f"{uom}s", x, series, Kind.LINES, _marks(marked))


def _started(row: Row) -> str:
    started = row.get("started_at")
    if isinstance(started, dt.datetime):
        return started.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    return str(started)


def run_mark(row: Row) -> str | None:
    """What a run's point is marked with: 'failed' or 'cancelled', else 'took over' when it took a dead run's lock."""
    status = row.get("status")
    if status in ("failed", "cancelled"):
        return str(status)
    return "took over" if row.get("took_over") else None


def duration_chart(rows: Sequence[Row]) -> Chart:
    """Each run's seconds by phase, stacked; a row written before phases were recorded shows its whole duration as
    'unrecorded'. Failed, cancelled and taken-over runs are marked."""
    columns: dict[str, list[float | None]] = {label: [] for _, label in PHASES}
    unrecorded: list[float | None] = []
    for row in rows:
        known = row.get("join_s") is not None or row.get("bookkeeping_s") is not None
        for name, label in PHASES:
            columns[label].append(_float(row.get(name)) if known else None)
        unrecorded.append(None if known else _float(row.get("duration_s")))
    series = [Series(label, tuple(values)) for label, values in columns.items()]
    if any(v is not None for v in unrecorded):
        series.append(Series("unrecorded", tuple(unrecorded)))
    x = tuple(_started(r) for r in rows)
    marks = tuple(run_mark(r) for r in rows)
    return Chart("durations", "Run durations by phase (s)", "s", x, tuple(series), Kind.STACKED, marks)


def _reads(row: Row) -> dict[str, tuple[int, int]]:
    """Files and bytes a window read per source: A, then B or each feature source, then the target."""
    found = {"source_a": (int(_int(row.get("files_read_a")) or 0), int(_int(row.get("bytes_read_a")) or 0))}
    features = row.get("source_reads")
    if isinstance(features, str):
        features = json.loads(features)
    if isinstance(features, dict) and features:
        for role, read in features.items():
            found[role] = (int(read["files"]), int(read["bytes"]))
    else:
        found["source_b"] = (int(_int(row.get("files_read_b")) or 0), int(_int(row.get("bytes_read_b")) or 0))
    found["target"] = (int(_int(row.get("files_read_target")) or 0), int(_int(row.get("bytes_read_target")) or 0))
    return found


def reads_charts(windows: Sequence[Row], marks: Marks | None = None) -> tuple[Chart, Chart]:
    """Files and MiB read per source per window (per feature source for a feature job), and of the target: flat
    lines mean pruning works."""
    reads = [_reads(r) for r in windows]
    roles: list[str] = []
    for read in reads:
        roles += [role for role in read if role not in roles]
    x = tuple(window_label(r) for r in windows)

    def series(pick: int, scale: float) -> tuple[Series, ...]:
        return tuple(
            Series(role, tuple(None if role not in r else r[role][pick] / scale for r in reads)) for role in roles
        )

    marked = _window_marks(windows, marks)
    files = Chart("files", "Files read per window, by source", "files", x, series(0, 1.0), Kind.LINES, marked)
    size = Chart("bytes", "MiB read per window, by source", "MiB", x, series(1, 1024.0 * 1024.0), Kind.LINES, marked)
    return files, size
