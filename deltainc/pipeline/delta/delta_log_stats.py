"""What a source's Delta log says without reading its data, through delta-rs: its latest RecDate, its NULL
counts, the files a window's units span and read (docs/design.md#what-a-window-reads). No Spark, no JVM;
deltalake is imported on first use.

Each function means exactly what its Spark counterpart means (`spark_counts.latest_unit`, `spark_counts.count_null_inc`,
`spark_counts.scan_stats`, a Delta read of a window's units). Where the log cannot answer exactly (deletion vectors,
a file without statistics, column mapping, another reader feature), they raise LogUnreadable and the caller asks
Spark.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deltainc.pipeline.delta.delta_log import TIME_TYPES, LogUnreadable, plain_location, reading, spark_value
from deltainc.pipeline.delta.snapshot import Snapshot, look
from deltainc.time_units import to_index

if TYPE_CHECKING:
    pass

Span = tuple[int, int]  # a file's first and last unit of a time column (empty: first > last)

__all__ = [
    "Span",
    "latest_unit_from_log",
    "null_count_from_log",
    "files_in_units",
    "null_keys_in_units",
    "spans_by_partition",
    "WindowFiles",
    "window_files",
]


def _latest_value(snapshot: Snapshot, column: str, partitioned: bool) -> Any:
    """The greatest value of `column` from the add actions: partition values or per-file max statistics."""
    records = snapshot.values("num_records")
    if partitioned:
        candidates = snapshot.values(f"partition.{column}")
        nulls = [0 if value is not None else count for value, count in zip(candidates, records, strict=True)]
    else:
        candidates, nulls = snapshot.values(f"max.{column}"), snapshot.values(f"null_count.{column}")
    latest = None
    for value, count, null_count in zip(candidates, records, nulls, strict=True):
        if count is None:
            raise LogUnreadable(f"{snapshot.location}: a file has no row count in the log")
        if count == 0:
            continue
        if value is None:
            if null_count == count:  # every row of the file is NULL there: max() skips it
                continue
            raise LogUnreadable(f"{snapshot.location}: a file has no max statistic for {column}")
        latest = value if latest is None or value > latest else latest
    return latest


def _time_column(snapshot: Snapshot, inc_col: str, partitioned: bool = False) -> str:
    """The DATE or TIMESTAMP column `inc_col` names (partitioning the table when `partitioned`)."""
    column = snapshot.column(inc_col)
    if snapshot.types[column] not in TIME_TYPES:
        raise LogUnreadable(f"{snapshot.location}: {column} is {snapshot.types[column]}, not a date or timestamp")
    if partitioned and column not in snapshot.partition_columns:
        raise LogUnreadable(f"{snapshot.location} is not partitioned by {column}: Spark prunes its files")
    return column


def _no_deletion_vectors(snapshot: Snapshot, why: str) -> None:
    if snapshot.deletion_vectors:
        raise LogUnreadable(f"{snapshot.location} has deletion vectors: {why}")


def _units(snapshot: Snapshot, column: str, time_uom: str) -> list[int | None]:
    """Each live file's unit of the partition column `column` (None for a NULL partition)."""
    kind = snapshot.types[column]
    return [None if v is None else _unit(v, kind, column, time_uom) for v in snapshot.values(f"partition.{column}")]


def latest_unit_from_log(location: str, inc_col: str, time_uom: str) -> int | None:
    """`spark_counts.latest_unit` of the Delta table at `location`, from its add actions alone (no data file read).

    The max of `inc_col` (DATE, TIMESTAMP or TIMESTAMP_NTZ) is the greatest partition value when it partitions
    the table, else the greatest per-file max statistic (Delta truncates timestamps there to the millisecond,
    which never moves a day or an hour). LogUnreadable when that may not be the max of the live rows: deletion
    vectors in use, a file without statistics, column mapping or another reader feature, no table there.
    """
    snapshot = look(location).statistics()
    with reading(location):
        column = _time_column(snapshot, inc_col)
        _no_deletion_vectors(snapshot, "a max statistic may be a deleted row's")
        latest = _latest_value(snapshot, column, column in snapshot.partition_columns)
    if latest is None:
        return None
    return to_index(spark_value(latest, snapshot.types[column], column), time_uom)


def null_count_from_log(location: str, inc_col: str) -> int:
    """`spark_counts.count_null_inc` of the Delta table at `location`: its rows whose `inc_col` is NULL, from the add
    actions (the partition value, or each file's null_count statistic). LogUnreadable where that may not be
    exact: deletion vectors in use, a file without statistics, column mapping or another reader feature."""
    snapshot = look(location).statistics()
    with reading(location):
        column = snapshot.column(inc_col)
        _no_deletion_vectors(snapshot, "a null count may include deleted rows")
        partitioned = column in snapshot.partition_columns
        key = f"partition.{column}" if partitioned else f"null_count.{column}"
        if snapshot.actions.num_rows == 0:
            return 0
        if not {key, "num_records"} <= set(snapshot.actions.column_names):
            raise LogUnreadable(f"{location}: the log has no {key} for its files")
        records, values = snapshot.values("num_records"), snapshot.values(key)
    total = 0
    for count, value in zip(records, values, strict=True):
        if count is None or (value is None and not partitioned):
            raise LogUnreadable(f"{location}: a file has no row count or null count in the log")
        total += (count if value is None else 0) if partitioned else int(value)
    return total


def files_in_units(location: str, inc_col: str, time_uom: str, first: int, last: int | None) -> tuple[int, int]:
    """The files, and their bytes, that a scan of units [first, last] (last None: open) of `inc_col` reads: in a
    table partitioned by `inc_col` the live files whose partition value falls in the range (what Delta's partition
    pruning keeps, as `spark_counts.scan_stats` counts it), else those whose min and max statistics reach into it
    (what Delta's data skipping keeps; a file without statistics is read)."""
    snapshot = look(location).statistics()
    with reading(location):
        column = _time_column(snapshot, inc_col)
        spans = _file_spans(snapshot, column, time_uom)
        sizes = snapshot.values("size_bytes")
    files = size = 0
    for span, file_size in zip(spans, sizes, strict=True):
        if span is None or _reaches(span, first, last):
            files, size = files + 1, size + int(file_size)
    return files, size


def null_keys_in_units(location: str, key: str, inc_col: str, time_uom: str, first: int, last: int) -> int:
    """The rows of units [first, last] of `inc_col` whose column `key` is NULL: the null_count statistics of the
    files those units span (their partitions, or the files whose min and max statistics reach into them). A file
    that reaches past the units counts only if it holds no NULL key at all. LogUnreadable where that may not be
    exact: such a file with NULL keys, deletion vectors in use, a file without statistics, another reader feature."""
    snapshot = look(location).statistics()
    with reading(location):
        column = _time_column(snapshot, inc_col)
        key_column = snapshot.column(key)
        if key_column in snapshot.partition_columns:
            raise LogUnreadable(f"{location}: partitioned by {key_column}: Spark counts its NULL keys")
        _no_deletion_vectors(snapshot, "a null count may include deleted rows")
        if snapshot.actions.num_rows == 0:
            return 0
        if f"null_count.{key_column}" not in set(snapshot.actions.column_names):
            raise LogUnreadable(f"{location}: the log has no null count of {key_column}")
        spans, nulls = _file_spans(snapshot, column, time_uom), snapshot.values(f"null_count.{key_column}")
        partitioned = column in snapshot.partition_columns
        undated = [0] * len(spans) if partitioned else snapshot.values(f"null_count.{column}")
    total = 0
    for span, count, no_unit in zip(spans, nulls, undated, strict=True):
        if span is not None and not _reaches(span, first, last):
            continue
        if count is None or span is None:
            raise LogUnreadable(f"{location}: a file has no statistics of {key_column} and {column} in the log")
        if count and not (first <= span[0] and span[1] <= last and no_unit == 0):
            raise LogUnreadable(f"{location}: a file with NULL {key_column} reaches past the units: Spark counts them")
        total += int(count)
    return total


def spans_by_partition(location: str, inc_col: str, time_uom: str, partition: str) -> list[tuple[Any, Span | None]]:
    """Each live file's value of the partition column `partition` and the units of `inc_col` it holds (its
    partition's, or the span of its min and max statistics; None: no statistics, it may hold any). The statistics
    count rows a deletion vector deleted too, so a span bounds the live rows. LogUnreadable where `partition` does
    not partition the table.

    E.g. `spans_by_partition(target, "RecDate", "hour", "IsFinal")` -> `[(True, (483000, 483023)), (False, (483023,
    483023))]`.
    """
    snapshot = look(location).statistics()
    with reading(location):
        column, name = _time_column(snapshot, inc_col), snapshot.column(partition)
        if name not in snapshot.partition_columns:
            raise LogUnreadable(f"{location} is not partitioned by {name}")
        values = snapshot.values(f"partition.{name}")
        spans = _file_spans(snapshot, column, time_uom)
    return list(zip(values, spans, strict=True))


def _reaches(span: Span, first: int, last: int | None) -> bool:
    """Whether a file's units `span` (empty when its first is past its last) meet units [first, last]."""
    low, high = span
    return low <= high and high >= first and (last is None or low <= last)


def _file_spans(snapshot: Snapshot, column: str, time_uom: str) -> list[Span | None]:
    """Each live file's units of `column`: its partition's unit (a NULL partition holds no unit: empty) when
    `column` partitions the table, else the span of its min and max statistics (`_spans`)."""
    if column not in snapshot.partition_columns:
        return _spans(snapshot, column, time_uom)
    return [(1, 0) if unit is None else (unit, unit) for unit in _units(snapshot, column, time_uom)]


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
    pruning as Delta's), for a read as Parquet files of the table's folder (partition values from the paths), so
    that Spark does not load the source's snapshot state inside every window's write. LogUnreadable where such a
    read may differ from Delta's: other than plain partition types, deletion vectors, column mapping or another
    reader feature, a file outside the folder of its partition values or with a name Hadoop reads otherwise.

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
            if day is None or not first <= _unit(day, "date", column, time_uom) <= last:
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


def _spans(snapshot: Snapshot, column: str, time_uom: str) -> list[Span | None]:
    """Each file's units of `column` from its min and max statistics: None where the file may hold any unit (no
    statistics), an empty span (1, 0) where it holds no row with a value. Delta truncates a timestamp's max to the
    millisecond: the unit of the greatest value below the next millisecond is taken."""
    kind = snapshot.types[column]
    records, nulls = snapshot.values("num_records"), snapshot.values(f"null_count.{column}")
    lows, highs = snapshot.values(f"min.{column}"), snapshot.values(f"max.{column}")
    spans: list[Span | None] = []
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
