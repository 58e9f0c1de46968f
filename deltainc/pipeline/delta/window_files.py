"""The data files of some units of a source, from its Delta log (delta-rs): what a window's scan of the source
reads, listed without Spark (docs/design.md#what-a-window-reads).

Spark's Delta reader loads a source's snapshot state and filters its files inside every window's write, four
Spark jobs a source whenever the source got a new version since the last run (every day, in production). The
log names the same files: a window reads them as Parquet files of the table's folder, their partition values
taken from their paths (`basePath`), so the rows are the Delta read's. Only where that holds exactly: a table
partitioned by the incremental DATE column, plain partition types, no deletion vector, no column mapping or
other reader feature that changes what a file holds, every file in the folder of its partition values with a
name Hadoop reads literally. Anything else is LogUnreadable, and the window reads the table with Delta.
No pyspark here; deltalake is imported on first use.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from deltainc.join.windows import to_index
from deltainc.pipeline.delta.delta_log import TIME_TYPES, LogUnreadable, plain_location, reading, spark_value
from deltainc.pipeline.delta.snapshot import Snapshot, look

__all__ = ["WindowFiles", "window_files"]

# Partition column types whose path value Spark parses back to exactly the log's value.
_PATH_TYPES = {"date", "string", "long", "integer", "short", "byte", "boolean"}
_NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
_BELOW_NEXT_MILLISECOND = dt.timedelta(microseconds=999)


@dataclass(frozen=True)
class WindowFiles:
    """The files a scan of some units reads: the table's folder (Spark's `basePath`) and each file's path in it."""

    root: str
    paths: tuple[str, ...]


def window_files(location: str, inc_col: str, time_uom: str, first: int, last: int) -> WindowFiles:
    """The live data files of units [first, last] of `inc_col` in the Delta table at `location` (partition
    pruning as Delta's), for a read as Parquet files; LogUnreadable where such a read may differ from Delta's.

    E.g. `window_files("/data/ledger", "RecDate", "day", to_index(d1, "day"), to_index(d2, "day")).paths` ->
    `("/data/ledger/RecDate=2025-03-10/part-0.parquet", ...)`.
    """
    snapshot = look(location).statistics()
    with reading(location):
        column, types, partitions = snapshot.column(inc_col), snapshot.types, snapshot.partition_columns
        partitioned = column in partitions
        if types[column] not in (_PATH_TYPES & TIME_TYPES if partitioned else TIME_TYPES):
            raise LogUnreadable(f"{location}: {column} is not a DATE partition column nor a date or timestamp column")
        odd = [name for name in partitions if types[name] not in _PATH_TYPES]
        if odd:
            raise LogUnreadable(f"{location}: partition columns {odd} are not read back from a path exactly")
        if snapshot.deletion_vectors:
            raise LogUnreadable(f"{location} has deletion vectors: a file's rows are not all live")
        paths = snapshot.values("path")
        values = {name: snapshot.values(f"partition.{name}") for name in partitions}
        spans = _spans(snapshot, column, time_uom) if not partitioned else []
    root = location.rstrip("/")
    chosen: list[str] = []
    for number, path in enumerate(paths):
        if partitioned:
            day = values[column][number]
            if day is None or not first <= to_index(spark_value(day, "date", column), time_uom) <= last:
                continue
        else:
            span = spans[number]
            if span is not None and not (span[0] <= last and first <= span[1]):
                continue
        folder = "/".join(f"{name}={_path_value(values[name][number])}" for name in partitions)
        name = path[len(folder) + 1 :] if path.startswith(folder + "/") else path if not folder else ""
        if not name or "/" in name:
            raise LogUnreadable(f"{location}: file {path} is not in the folder of its partition values")
        full = f"{root}/{path}"
        if ":" in path or not plain_location(full):
            raise LogUnreadable(f"{location}: file {path} has a name Hadoop would not read literally")
        chosen.append(full)
    return WindowFiles(root, tuple(chosen))


def _spans(snapshot: Snapshot, column: str, time_uom: str) -> list[tuple[int, int] | None]:
    """Each file's units of `column` from its min and max statistics: None where the file may hold any unit (no
    statistics), an empty span (1, 0) where it holds no row with a value. Delta truncates a timestamp's max to the
    millisecond: the unit of the greatest value below the next millisecond is taken."""
    kind = snapshot.types[column]
    records, nulls = snapshot.values("num_records"), snapshot.values(f"null_count.{column}")
    lows, highs = snapshot.values(f"min.{column}"), snapshot.values(f"max.{column}")
    spans: list[tuple[int, int] | None] = []
    for count, null_count, low, high in zip(records, nulls, lows, highs, strict=True):
        if count == 0 or (count is not None and null_count == count):
            spans.append((1, 0))  # no row, or only NULLs, which no window reads
        elif low is None or high is None:
            spans.append(None)
        else:
            top = high if kind == "date" else high + _BELOW_NEXT_MILLISECOND
            spans.append((_unit(low, kind, column, time_uom), _unit(top, kind, column, time_uom)))
    return spans


def _unit(value: Any, kind: str, column: str, time_uom: str) -> int:
    return to_index(spark_value(value, kind, column), time_uom)


def _path_value(value: Any) -> str:
    """A partition value as Spark writes it in a folder name (the plain types only: no character is escaped)."""
    if value is None:
        return _NULL_PARTITION
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)
