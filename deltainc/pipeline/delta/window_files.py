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
from deltainc.pipeline.delta.delta_log import LogUnreadable, plain_location, reading, spark_value
from deltainc.pipeline.delta.snapshot import look

__all__ = ["WindowFiles", "window_files"]

# Partition column types whose path value Spark parses back to exactly the log's value.
_PATH_TYPES = {"date", "string", "long", "integer", "short", "byte", "boolean"}
_NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"


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
        if column not in partitions or types[column] != "date":
            raise LogUnreadable(f"{location} is not partitioned by the DATE column {column}")
        odd = [name for name in partitions if types[name] not in _PATH_TYPES]
        if odd:
            raise LogUnreadable(f"{location}: partition columns {odd} are not read back from a path exactly")
        if snapshot.deletion_vectors:
            raise LogUnreadable(f"{location} has deletion vectors: a file's rows are not all live")
        if snapshot.actions.num_rows == 0:
            return WindowFiles(location, ())
        paths = snapshot.values("path")
        values = {name: snapshot.values(f"partition.{name}") for name in partitions}
    root = location.rstrip("/")
    chosen: list[str] = []
    for number, path in enumerate(paths):
        day = values[column][number]
        if day is None or not first <= to_index(spark_value(day, "date", column), time_uom) <= last:
            continue
        folder = "/".join(f"{name}={_path_value(values[name][number])}" for name in partitions)
        name = path[len(folder) + 1 :] if path.startswith(folder + "/") else ""
        if not name or "/" in name:
            raise LogUnreadable(f"{location}: file {path} is not in the folder of its partition values")
        full = f"{root}/{path}"
        if ":" in path or not plain_location(full):
            raise LogUnreadable(f"{location}: file {path} has a name Hadoop would not read literally")
        chosen.append(full)
    return WindowFiles(root, tuple(chosen))


def _path_value(value: Any) -> str:
    """A partition value as Spark writes it in a folder name (the plain types only: no character is escaped)."""
    if value is None:
        return _NULL_PARTITION
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)
