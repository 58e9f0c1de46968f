"""The job state in Delta: the watermark table, the append-only run log, and the per-job lock."""

from __future__ import annotations

import datetime as dt
import getpass
import os
import socket
from dataclasses import asdict, dataclass, field

from delta.exceptions import DeltaConcurrentModificationException
from delta.tables import DeltaTable
from pyspark.sql import Column, Row, SparkSession
from pyspark.sql import functions as F

from deltainc.errors import ConfigError, JobLockedError

__all__ = [
    "StatePaths",
    "RunRecord",
    "state_paths",
    "ensure_state_tables",
    "read_watermark",
    "advance_watermark",
    "append_run",
    "read_runs",
    "acquire_lock",
    "release_lock",
    "remove_lock",
]

WATERMARK_SCHEMA = (
    "job STRING, time_uom STRING, watermark STRING, watermark_unit BIGINT, updated_at TIMESTAMP, run_id STRING"
)
LOCK_SCHEMA = "job STRING, run_id STRING, acquired_at TIMESTAMP, owner STRING"
RUN_SCHEMA = (
    "job STRING, run_id STRING, command STRING, window_start STRING, window_end STRING, status STRING, "
    "error STRING, started_at TIMESTAMP, duration_s DOUBLE, "
    "rows_same_time BIGINT, rows_a_late BIGINT, rows_b_late BIGINT, rows_a_timed_out BIGINT, rows_a_waiting BIGINT, "
    "rows_inserted BIGINT, rows_updated BIGINT, rows_deleted BIGINT, "
    "files_read_a BIGINT, bytes_read_a BIGINT, files_read_b BIGINT, bytes_read_b BIGINT, "
    "files_read_target BIGINT, bytes_read_target BIGINT, null_inc_a BIGINT, null_inc_b BIGINT"
)


@dataclass(frozen=True)
class StatePaths:
    """Where the state tables of a job live (one folder may serve many jobs)."""

    root: str
    watermarks: str
    runs: str
    locks: str


def state_paths(root: str) -> StatePaths:
    """The three state tables under `root`."""
    root = root.rstrip("/")
    return StatePaths(root, f"{root}/watermarks", f"{root}/runs", f"{root}/locks")


@dataclass(frozen=True)
class RunRecord:
    """One row of the run log."""

    job: str
    run_id: str
    command: str
    window_start: str | None
    window_end: str | None
    status: str
    error: str | None
    started_at: dt.datetime
    duration_s: float
    rows_same_time: int = 0
    rows_a_late: int = 0
    rows_b_late: int = 0
    rows_a_timed_out: int = 0
    rows_a_waiting: int = 0
    rows_inserted: int = 0
    rows_updated: int = 0
    rows_deleted: int = 0
    files_read_a: int = 0
    bytes_read_a: int = 0
    files_read_b: int = 0
    bytes_read_b: int = 0
    files_read_target: int = 0
    bytes_read_target: int = 0
    null_inc_a: int = 0
    null_inc_b: int = 0
    extra: dict[str, str] = field(default_factory=dict, compare=False)


def _create(spark: SparkSession, path: str, schema: str) -> None:
    if DeltaTable.isDeltaTable(spark, path):
        return
    try:
        spark.createDataFrame([], schema).write.format("delta").mode("append").save(path)
    except Exception:  # a concurrent run may have created it first; that is fine, anything else is not
        if not DeltaTable.isDeltaTable(spark, path):
            raise


def ensure_state_tables(spark: SparkSession, paths: StatePaths) -> None:
    """Create the watermark, run-log and lock tables if they do not exist yet."""
    _create(spark, paths.watermarks, WATERMARK_SCHEMA)
    _create(spark, paths.runs, RUN_SCHEMA)
    _create(spark, paths.locks, LOCK_SCHEMA)


def read_watermark(spark: SparkSession, paths: StatePaths, job: str) -> int | None:
    """The last unit fully processed by `job`, or None before its first run."""
    if not DeltaTable.isDeltaTable(spark, paths.watermarks):
        return None
    row = (
        spark.read.format("delta")
        .load(paths.watermarks)
        .where(F.col("job") == job)
        .agg(F.max("watermark_unit").alias("unit"))
        .first()
    )
    return None if row is None or row["unit"] is None else int(row["unit"])


def advance_watermark(
    spark: SparkSession, paths: StatePaths, job: str, unit: int, label: str, time_uom: str, run_id: str
) -> None:
    """Record that `job` has processed everything up to `unit`.

    The table is append-only: each move is one row, and a job's watermark is the greatest `watermark_unit`
    among its rows, so it can never move backwards. A blind append is Delta's cheapest commit: it reads no
    data, where an upsert would scan and rewrite the table on every run.
    """
    row = spark.createDataFrame(
        [(job, time_uom, label, unit, run_id)],
        "job STRING, time_uom STRING, watermark STRING, watermark_unit BIGINT, run_id STRING",
    ).withColumn("updated_at", F.current_timestamp())
    columns = ["job", "time_uom", "watermark", "watermark_unit", "updated_at", "run_id"]
    row.select(*columns).write.format("delta").mode("append").save(paths.watermarks)


def append_run(spark: SparkSession, paths: StatePaths, record: RunRecord) -> None:
    """Append one row to the run log."""
    values = asdict(record)
    values.pop("extra")
    spark.createDataFrame([Row(**values)], RUN_SCHEMA).write.format("delta").mode("append").save(paths.runs)


def read_runs(spark: SparkSession, paths: StatePaths, job: str, limit: int = 10) -> list[Row]:
    """The latest runs of `job`, newest first."""
    if not DeltaTable.isDeltaTable(spark, paths.runs):
        return []
    runs = spark.read.format("delta").load(paths.runs).where(F.col("job") == job)
    return runs.orderBy(F.col("started_at").desc()).limit(limit).collect()


def _owner() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{socket.gethostname()}:{os.getpid()}"


def _is_write_conflict(exc: Exception) -> bool:
    """Whether `exc` is Delta's optimistic-concurrency conflict (another writer committed first)."""
    return (
        isinstance(exc, DeltaConcurrentModificationException)
        or "Concurrent" in type(exc).__name__
        or ("ConcurrentAppendException" in str(exc) or "ConcurrentModificationException" in str(exc))
    )


def acquire_lock(spark: SparkSession, paths: StatePaths, job: str, run_id: str, stale_after_minutes: int) -> None:
    """Take the job's lock, or raise JobLockedError when another live run holds it.

    The lock is a row in a Delta table, so it works wherever Delta does: two runs racing for it are
    serialised by Delta's optimistic concurrency, and the loser sees a conflict and fails fast.
    A lock older than `stale_after_minutes` belongs to a run that died, and is taken over.
    """
    claim = spark.createDataFrame([(job, run_id, _owner())], "job STRING, run_id STRING, owner STRING")
    claim = claim.withColumn("acquired_at", F.current_timestamp())
    values: dict[str, str | Column] = {c: f"s.{c}" for c in ("job", "run_id", "acquired_at", "owner")}
    try:
        (
            DeltaTable.forPath(spark, paths.locks)
            .alias("t")
            .merge(claim.alias("s"), "t.job = s.job")
            .whenMatchedUpdate(
                condition=f"t.acquired_at < s.acquired_at - INTERVAL {int(stale_after_minutes)} MINUTES", set=values
            )
            .whenNotMatchedInsert(values=values)
            .execute()
        )
    except Exception as exc:
        if not _is_write_conflict(exc):
            raise
        raise JobLockedError(
            f"job {job!r} is locked: another run took the lock at the same moment ({type(exc).__name__})"
        ) from None
    holder = spark.read.format("delta").load(paths.locks).where(F.col("job") == job).first()
    if holder is None or holder["run_id"] != run_id:
        since = "?" if holder is None else holder["acquired_at"]
        who = "?" if holder is None else f"{holder['run_id']} ({holder['owner']})"
        raise JobLockedError(
            f"job {job!r} is locked by run {who} since {since}; wait for it to finish. If that run died, "
            f"the lock expires {stale_after_minutes} minutes after it was taken, or remove it with "
            f"`deltainc unlock {job}`"
        )


def release_lock(spark: SparkSession, paths: StatePaths, job: str, run_id: str) -> None:
    """Give the lock back (only if this run still holds it)."""
    DeltaTable.forPath(spark, paths.locks).delete((F.col("job") == job) & (F.col("run_id") == run_id))


def remove_lock(spark: SparkSession, paths: StatePaths, job: str, run_id: str | None = None) -> list[dict[str, object]]:
    """Delete the lock row(s) of `job` (only run `run_id`'s, when given); returns the rows removed."""
    if not DeltaTable.isDeltaTable(spark, paths.locks):
        return []
    held = spark.read.format("delta").load(paths.locks).where(F.col("job") == job).collect()
    if run_id is not None:
        matching = [row for row in held if row["run_id"] == run_id]
        if held and not matching:
            holders = ", ".join(f"{row['run_id']} ({row['owner']})" for row in held)
            raise ConfigError(f"--run-id: job {job!r} is locked by run {holders}, not by run {run_id!r}")
        held = matching
    if held:
        ids = [row["run_id"] for row in held]
        DeltaTable.forPath(spark, paths.locks).delete((F.col("job") == job) & F.col("run_id").isin(ids))
    return [row.asDict() for row in held]
