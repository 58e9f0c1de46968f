"""What a source's Delta log says without reading its data, through delta-rs: its latest RecDate, its NULL
counts, the files a window's units span. No Spark, no JVM; deltalake is imported on first use.

Each function means exactly what its Spark counterpart means (`sources.latest_unit`, `sources.count_null_inc`,
`sources.scan_stats`). Where the log cannot answer exactly (deletion vectors, a file without statistics, column
mapping, another reader feature), they raise LogUnreadable and the caller asks Spark.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from deltainc.join.windows import to_index
from deltainc.pipeline.delta.delta_log import LogUnreadable, column_types, open_table, reading, spark_value
from deltainc.pipeline.job.table_refs import TableRef
from deltainc.storage import is_s3

if TYPE_CHECKING:
    from deltalake import DeltaTable

__all__ = [
    "source_location",
    "source_table",
    "has_deletion_vectors",
    "latest_unit_from_log",
    "null_count_from_log",
    "files_in_units",
    "null_keys_in_units",
]

_TIME_TYPES = {"date", "timestamp", "timestamp_ntz"}
# Reader features whose tables the log answers exactly (deletion vectors are checked file by file).
_LOG_READER_FEATURES = {"deletionVectors", "timestampNtz", "v2Checkpoint", "vacuumProtocolCheck"}


def _has_log(location: str) -> bool:
    return os.path.isdir(os.path.join(location, "_delta_log"))


def source_location(ref: TableRef, role: str) -> str:
    """The local folder of a source given by path; LogUnreadable for anything else, FileNotFoundError if absent."""
    if ref.path is None:
        raise LogUnreadable(f"{role} is a catalog table ({ref.table}): its location needs the metastore")
    if is_s3(ref.path):  # delta-rs reads it there (deltainc.storage); an absent table is left to Spark to report
        return ref.path
    if "://" in ref.path or ref.path.startswith("file:"):
        raise LogUnreadable(f"{role} is not a local path or in S3 ({ref.path})")
    if not _has_log(ref.path):
        raise FileNotFoundError(f"{role}: no Delta table at {ref.label}")
    return ref.path


def _reader_features_known(table: DeltaTable, location: str) -> None:
    """Refuse a table whose protocol may change what its add actions mean (column mapping, type widening, ...)."""
    protocol = table.protocol()
    features = set(protocol.reader_features or ())
    unknown = features - _LOG_READER_FEATURES
    if protocol.min_reader_version > 3 or unknown - {"columnMapping"}:
        raise LogUnreadable(f"{location} needs reader features {sorted(unknown)} (v{protocol.min_reader_version})")
    mode = table.metadata().configuration.get("delta.columnMapping.mode", "none")
    if mode != "none":
        raise LogUnreadable(f"{location} maps its column names ({mode}): its statistics are keyed apart")


def has_deletion_vectors(table: DeltaTable) -> bool:
    """Whether a live file of the table has deleted rows (a max in its statistics may be a deleted row's)."""
    if "deletionVectors" not in set(table.protocol().reader_features or ()):
        return False
    return table.deletion_vectors().read_all().num_rows > 0


def _column(types: dict[str, str], inc_col: str, location: str) -> str:
    """The column `inc_col` names, matched as Spark does by default: ignoring case."""
    matches = [name for name in types if name.lower() == inc_col.lower()]
    if len(matches) != 1 or "." in matches[0]:
        raise LogUnreadable(f"{location}: no single top-level column {inc_col!r} (Spark says why)")
    return matches[0]


def _latest_value(table: DeltaTable, column: str, partitioned: bool, location: str) -> Any:
    """The greatest value of `column` from the add actions: partition values or per-file max statistics."""
    actions = table.get_add_actions(flatten=True)
    if actions.num_rows == 0:
        return None
    names = set(actions.column_names)

    def values(name: str) -> list[Any]:
        if name not in names:
            return [None] * actions.num_rows
        return list(actions.column(name).to_pylist())

    records = values("num_records")
    if partitioned:
        candidates = values(f"partition.{column}")
        nulls = [0 if value is not None else count for value, count in zip(candidates, records, strict=True)]
    else:
        candidates, nulls = values(f"max.{column}"), values(f"null_count.{column}")
    latest = None
    for value, count, null_count in zip(candidates, records, nulls, strict=True):
        if count is None:
            raise LogUnreadable(f"{location}: a file has no row count in the log")
        if count == 0:
            continue
        if value is None:
            if null_count == count:  # every row of the file is NULL there: max() skips it
                continue
            raise LogUnreadable(f"{location}: a file has no max statistic for {column}")
        latest = value if latest is None or value > latest else latest
    return latest


def source_table(location: str, inc_col: str) -> tuple[DeltaTable, dict[str, str], str]:
    """The Delta table at `location` with its column types and the column `inc_col` names, refused
    (LogUnreadable) when absent or when its protocol may change what its add actions mean."""
    table = open_table(location)
    if table is None:
        raise LogUnreadable(f"no Delta table at {location} (Spark says so)")
    with reading(location):
        _reader_features_known(table, location)
        types = column_types(table, location)
    return table, types, _column(types, inc_col, location)


def latest_unit_from_log(location: str, inc_col: str, time_uom: str) -> int | None:
    """`sources.latest_unit` of the Delta table at `location`, from its add actions alone (no data file read).

    The max of `inc_col` (DATE, TIMESTAMP or TIMESTAMP_NTZ) is the greatest partition value when it partitions
    the table, else the greatest per-file max statistic (Delta truncates timestamps there to the millisecond,
    which never moves a day or an hour). LogUnreadable when that may not be the max of the live rows: deletion
    vectors in use, a file without statistics, column mapping or another reader feature, no table there.
    """
    table, types, column = source_table(location, inc_col)
    with reading(location):
        if types[column] not in _TIME_TYPES:
            raise LogUnreadable(f"{location}: {column} is {types[column]}, not a date or timestamp (Spark says so)")
        if has_deletion_vectors(table):
            raise LogUnreadable(f"{location} has deletion vectors: a max statistic may be a deleted row's")
        partitioned = column in table.metadata().partition_columns
        latest = _latest_value(table, column, partitioned, location)
    if latest is None:
        return None
    return to_index(spark_value(latest, types[column], column), time_uom)


def null_count_from_log(location: str, inc_col: str) -> int:
    """`sources.count_null_inc` of the Delta table at `location`: its rows whose `inc_col` is NULL, from the add
    actions (the partition value, or each file's null_count statistic). LogUnreadable where that may not be
    exact: deletion vectors in use, a file without statistics, column mapping or another reader feature."""
    table, _types, column = source_table(location, inc_col)
    with reading(location):
        if has_deletion_vectors(table):
            raise LogUnreadable(f"{location} has deletion vectors: a null count may include deleted rows")
        partitioned = column in table.metadata().partition_columns
        actions = table.get_add_actions(flatten=True)
        names = set(actions.column_names)
        key = f"partition.{column}" if partitioned else f"null_count.{column}"
        if actions.num_rows == 0:
            return 0
        if key not in names or "num_records" not in names:
            raise LogUnreadable(f"{location}: the log has no {key} for its files")
        records = actions.column("num_records").to_pylist()
        values = actions.column(key).to_pylist()
    total = 0
    for count, value in zip(records, values, strict=True):
        if count is None or (value is None and not partitioned):
            raise LogUnreadable(f"{location}: a file has no row count or null count in the log")
        total += (count if value is None else 0) if partitioned else int(value)
    return total


def files_in_units(location: str, inc_col: str, time_uom: str, first: int, last: int | None) -> tuple[int, int]:
    """The files, and their bytes, that a scan of units [first, last] (last None: open) of `inc_col` reads in a
    table partitioned by `inc_col`: the live files whose partition value falls in the range (what Delta's
    partition pruning keeps, as `sources.scan_stats` counts it). LogUnreadable for a table not so partitioned."""
    table, types, column = source_table(location, inc_col)
    with reading(location):
        if column not in table.metadata().partition_columns or types[column] not in _TIME_TYPES:
            raise LogUnreadable(f"{location} is not partitioned by {column}: Spark's file pruning counts its files")
        actions = table.get_add_actions(flatten=True)
        if actions.num_rows == 0:
            return 0, 0
        values = actions.column(f"partition.{column}").to_pylist()
        sizes = actions.column("size_bytes").to_pylist()
    files = size = 0
    for value, file_size in zip(values, sizes, strict=True):
        if value is None:
            continue
        unit = to_index(spark_value(value, types[column], column), time_uom)
        if first <= unit and (last is None or unit <= last):
            files, size = files + 1, size + int(file_size)
    return files, size


def null_keys_in_units(location: str, key: str, inc_col: str, time_uom: str, first: int, last: int) -> int:
    """The rows of units [first, last] of `inc_col` whose column `key` is NULL, in a table partitioned by
    `inc_col`: the null_count statistics of the files of those partitions. LogUnreadable where that may not be
    exact: not so partitioned, deletion vectors in use, a file without statistics, another reader feature."""
    table, types, column = source_table(location, inc_col)
    key_column = _column(types, key, location)
    with reading(location):
        partitions = table.metadata().partition_columns
        if column not in partitions or types[column] not in _TIME_TYPES or key_column in partitions:
            raise LogUnreadable(f"{location}: not partitioned by {column} alone: Spark counts its NULL keys")
        if has_deletion_vectors(table):
            raise LogUnreadable(f"{location} has deletion vectors: a null count may include deleted rows")
        actions = table.get_add_actions(flatten=True)
        if actions.num_rows == 0:
            return 0
        if f"null_count.{key_column}" not in set(actions.column_names):
            raise LogUnreadable(f"{location}: the log has no null count of {key_column}")
        values = actions.column(f"partition.{column}").to_pylist()
        nulls = actions.column(f"null_count.{key_column}").to_pylist()
    total = 0
    for value, count in zip(values, nulls, strict=True):
        if value is None or not first <= to_index(spark_value(value, types[column], column), time_uom) <= last:
            continue
        if count is None:
            raise LogUnreadable(f"{location}: a file has no null count of {key_column} in the log")
        total += int(count)
    return total
