"""What `status` needs, read from the Delta logs with delta-rs (the `deltalake` package): no Spark, no JVM.

Each function means exactly what its Spark counterpart means (`state.read_state`, `state.read_runs`,
`sources.latest_unit`), down to the Python types pyspark returns. Where the log cannot answer exactly, or
delta-rs cannot read a table, they raise LogUnreadable and the caller asks Spark. Only local tables are read.
deltalake is imported on first use, and nothing here imports pyspark.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from deltainc.join.windows import to_index
from deltainc.pipeline.lock_model import LockHolder
from deltainc.pipeline.log_tables import (
    LogUnreadable,
    Row,
    column_types,
    instant,
    job_rows,
    open_table,
    reading,
    require,
    spark_row,
    spark_value,
)
from deltainc.pipeline.state_model import JobState, StatePaths

if TYPE_CHECKING:
    from deltalake import DeltaTable

__all__ = [
    "LogUnreadable",
    "read_state_from_log",
    "read_runs_from_log",
    "latest_unit_from_log",
    "null_count_from_log",
    "files_in_units",
    "null_keys_in_units",
]

_TIME_TYPES = {"date", "timestamp", "timestamp_ntz"}
# Reader features whose tables the log answers exactly (deletion vectors are checked file by file).
_LOG_READER_FEATURES = {"deletionVectors", "timestampNtz", "v2Checkpoint", "vacuumProtocolCheck"}


def _max_unit(location: str, job: str, column: str) -> int | None:
    """max(`column`) over the rows of `job` in the table at `location`, None if absent or all null."""
    table = open_table(location)
    if table is None:
        return None
    require(column_types(table, location), location, "job", column)
    units = [row[column] for row in job_rows(table, location, job, [column]) if row[column] is not None]
    return max(units) if units else None


def read_state_from_log(paths: StatePaths, job: str) -> JobState:
    """`state.read_state` from the logs: the job's watermark, its lock's holder and the settings it was built with.

    Watermark: the greatest `watermark_unit` of the job's run-log rows and of the 0.1 watermark table. The holder
    is `finished` once its run_id has a run-log row with `releases_lock` true. Settings: the JSON `job_settings`
    of the latest (by started_at) succeeded row that moved the watermark. A run log without `releases_lock` (0.1)
    moves no watermark and releases no lock; a lock table without `heartbeat_at` has no heartbeat.
    """
    held: Row | None = None
    locks = open_table(paths.locks)
    if locks is not None:
        lock_types = column_types(locks, paths.locks)
        require(lock_types, paths.locks, "job", "run_id", "owner", "acquired_at")
        lock_columns = [name for name in ("run_id", "owner", "acquired_at", "heartbeat_at") if name in lock_types]
        rows = job_rows(locks, paths.locks, job, lock_columns)
        held = spark_row(rows[0], lock_types) if rows else None
    watermark: int | None = None
    finished = False
    settings: dict[str, object] | None = None
    runs = open_table(paths.runs)
    if runs is not None:
        run_types = column_types(runs, paths.runs)
        require(run_types, paths.runs, "job", "run_id", "status", "started_at")
        if "releases_lock" in run_types:
            require(run_types, paths.runs, "watermark_unit")
        optional = [name for name in ("watermark_unit", "releases_lock", "job_settings") if name in run_types]
        rows = job_rows(runs, paths.runs, job, ["run_id", "status", "started_at", *optional])
        for row in rows:
            if "releases_lock" not in run_types:  # a run log of deltainc 0.1: no watermark, no lock release
                row["watermark_unit"], row["releases_lock"] = None, False
            row.setdefault("job_settings", None)  # written before settings were remembered
        units = [row["watermark_unit"] for row in rows if row["watermark_unit"] is not None]
        watermark = max(units) if units else None
        holder_run = None if held is None else held["run_id"]
        finished = holder_run is not None and any(
            row["run_id"] == holder_run and row["releases_lock"] is True for row in rows
        )
        built = [
            row
            for row in rows
            if row["status"] == "succeeded"
            and row["watermark_unit"] is not None
            and row["job_settings"] is not None
            and row["started_at"] is not None
        ]
        if built:
            latest = max(built, key=lambda row: instant(row["started_at"]))
            settings = json.loads(latest["job_settings"])
    legacy = _max_unit(paths.legacy_watermarks, job, "watermark_unit")
    if legacy is not None:
        watermark = legacy if watermark is None else max(watermark, legacy)
    holder = None
    if held is not None:
        holder = LockHolder(
            run_id=held["run_id"],
            owner=held["owner"],
            acquired_at=held["acquired_at"],
            heartbeat_at=held.get("heartbeat_at"),
            finished=finished,
        )
    return JobState(watermark=watermark, holder=holder, settings=settings)


def read_runs_from_log(paths: StatePaths, job: str, limit: int) -> list[dict[str, object]]:
    """`[row.asDict() for row in state.read_runs(...)]` from the log: the job's latest `limit` runs, newest first.

    Every column of the run log, in its order, with pyspark's Python values (timestamps naive local time);
    ordered by started_at descending, rows without one last (Spark's order); no run log yet gives [].
    """
    if limit < 0:
        raise LogUnreadable(f"limit {limit}: Spark refuses a negative limit")
    runs = open_table(paths.runs)
    if runs is None:
        return []
    types = column_types(runs, paths.runs)
    require(types, paths.runs, "job", "started_at")
    rows = job_rows(runs, paths.runs, job, list(types))
    dated = sorted((row for row in rows if row["started_at"] is not None), key=lambda row: instant(row["started_at"]))
    ordered = [*reversed(dated), *(row for row in rows if row["started_at"] is None)]
    return [spark_row(row, types) for row in ordered[:limit]]


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


def _has_deletion_vectors(table: DeltaTable) -> bool:
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


def _source_table(location: str, inc_col: str) -> tuple[DeltaTable, dict[str, str], str]:
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
    table, types, column = _source_table(location, inc_col)
    with reading(location):
        if types[column] not in _TIME_TYPES:
            raise LogUnreadable(f"{location}: {column} is {types[column]}, not a date or timestamp (Spark says so)")
        if _has_deletion_vectors(table):
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
    table, _types, column = _source_table(location, inc_col)
    with reading(location):
        if _has_deletion_vectors(table):
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
    table, types, column = _source_table(location, inc_col)
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
    table, types, column = _source_table(location, inc_col)
    key_column = _column(types, key, location)
    with reading(location):
        partitions = table.metadata().partition_columns
        if column not in partitions or types[column] not in _TIME_TYPES or key_column in partitions:
            raise LogUnreadable(f"{location}: not partitioned by {column} alone: Spark counts its NULL keys")
        if _has_deletion_vectors(table):
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
