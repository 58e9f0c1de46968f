"""The job state in Delta: the append-only run log (which carries the watermark) and the per-job lock.

A run costs two state commits: one to take the lock, and one per window that appends its run-log row;
that row moves the watermark (its `watermark_unit`) and, on the run's last window, releases the lock
(`releases_lock`). So the watermark, the run log and the lock's release can never disagree.
"""

from __future__ import annotations

import datetime as dt
import getpass
import os
import socket
from dataclasses import asdict, dataclass
from urllib.parse import unquote, urlparse

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
    "append_run",
    "read_runs",
    "acquire_lock",
    "release_lock",
    "remove_lock",
]

LEGACY_WATERMARK_SCHEMA = (
    "job STRING, time_uom STRING, watermark STRING, watermark_unit BIGINT, updated_at TIMESTAMP, run_id STRING"
)
LOCK_SCHEMA = "job STRING, run_id STRING, acquired_at TIMESTAMP, owner STRING"
RUN_SCHEMA = (
    "job STRING, run_id STRING, command STRING, window_start STRING, window_end STRING, status STRING, "
    "error STRING, started_at TIMESTAMP, duration_s DOUBLE, "
    "rows_same_time BIGINT, rows_a_late BIGINT, rows_b_late BIGINT, rows_a_timed_out BIGINT, rows_a_waiting BIGINT, "
    "rows_inserted BIGINT, rows_updated BIGINT, rows_deleted BIGINT, "
    "files_read_a BIGINT, bytes_read_a BIGINT, files_read_b BIGINT, bytes_read_b BIGINT, "
    "files_read_target BIGINT, bytes_read_target BIGINT, null_inc_a BIGINT, null_inc_b BIGINT, "
    "target_write STRING, target_version BIGINT, target_files_added BIGINT, target_files_removed BIGINT, "
    "target_rows_copied BIGINT, target_deletion_vectors BIGINT, "
    "time_uom STRING, watermark STRING, watermark_unit BIGINT, releases_lock BOOLEAN"
)


@dataclass(frozen=True)
class StatePaths:
    """Where the state tables of a job live (one folder may serve many jobs)."""

    root: str
    runs: str
    locks: str
    legacy_watermarks: str  # the watermark table of deltainc 0.1, still read when present


def state_paths(root: str) -> StatePaths:
    """The state tables under `root`."""
    root = root.rstrip("/")
    return StatePaths(root, f"{root}/runs", f"{root}/locks", f"{root}/watermarks")


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
    target_write: str | None = None  # replace_where, merge (forward), forward_only_merge (re-run), or None
    target_version: int | None = None
    target_files_added: int = 0
    target_files_removed: int = 0
    target_rows_copied: int = 0
    target_deletion_vectors: int = 0
    time_uom: str | None = None
    watermark: str | None = None  # set when this window moved the watermark
    watermark_unit: int | None = None
    releases_lock: bool = False  # the run's last row: the lock is free once it is committed


def _create(spark: SparkSession, path: str, schema: str) -> None:
    if DeltaTable.isDeltaTable(spark, path):
        return
    try:
        spark.createDataFrame([], schema).write.format("delta").mode("append").save(path)
    except Exception:  # a concurrent run may have created it first; that is fine, anything else is not
        if not DeltaTable.isDeltaTable(spark, path):
            raise


def ensure_state_tables(spark: SparkSession, paths: StatePaths) -> None:
    """Create the run-log and lock tables if they do not exist yet."""
    _create(spark, paths.runs, RUN_SCHEMA)
    _create(spark, paths.locks, LOCK_SCHEMA)


def _exists(spark: SparkSession, path: str) -> bool:
    local = urlparse(path)
    if local.scheme in ("", "file"):  # a local folder answers without starting a Delta log
        return os.path.isdir(os.path.join(unquote(local.path), "_delta_log"))
    return bool(DeltaTable.isDeltaTable(spark, path))


def read_watermark(spark: SparkSession, paths: StatePaths, job: str) -> int | None:
    """The last unit fully processed by `job` (the greatest watermark its run log records), or None."""
    units: list[int] = []
    for path in (paths.runs, paths.legacy_watermarks):
        if not _exists(spark, path):
            continue
        row = spark.read.format("delta").load(path).where(F.col("job") == job).agg(F.max("watermark_unit")).first()
        if row is not None and row[0] is not None:
            units.append(int(row[0]))
    return max(units) if units else None


def append_run(spark: SparkSession, paths: StatePaths, record: RunRecord) -> None:
    """Append one row to the run log: one blind append, Delta's cheapest commit (it conflicts with nothing).

    A row with `watermark_unit` moves the job's watermark; the greatest one wins, so it never moves back.
    """
    values = asdict(record)
    frame = spark.createDataFrame([Row(**values)], RUN_SCHEMA)
    frame.write.format("delta").mode("append").option("mergeSchema", "true").save(paths.runs)


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


def _finished(spark: SparkSession, paths: StatePaths, job: str, run_id: str) -> bool:
    """Whether run `run_id` of `job` committed its last run-log row, which releases its lock."""
    rows = spark.read.format("delta").load(paths.runs)
    done = rows.where((F.col("job") == job) & (F.col("run_id") == run_id) & F.col("releases_lock")).limit(1)
    return bool(done.collect())


def _holder(spark: SparkSession, paths: StatePaths, job: str) -> Row | None:
    return spark.read.format("delta").load(paths.locks).where(F.col("job") == job).first()


def acquire_lock(
    spark: SparkSession, paths: StatePaths, job: str, run_id: str, stale_after_minutes: int, attempts: int = 5
) -> None:
    """Take the job's lock in one commit, or raise JobLockedError when another live run holds it.

    The lock is one row per job, swapped with a MERGE that only replaces the row this run saw (compare and
    swap): a lock row whose run committed its last run-log row, or that is older than
    `stale_after_minutes`, is free. Two runs racing for it are serialised by Delta's optimistic
    concurrency; the loser sees a conflict, reads the lock again and finds it held. A conflict with a run
    of another job that shares the state folder is simply retried.
    """
    for _attempt in range(attempts):
        held = _holder(spark, paths, job)
        if held is not None and held["run_id"] != run_id:
            age = dt.datetime.now() - held["acquired_at"]  # pyspark gives timestamps as naive local time
            stale = age > dt.timedelta(minutes=stale_after_minutes)
            if not stale and not _finished(spark, paths, job, held["run_id"]):
                raise JobLockedError(
                    f"job {job!r} is locked by run {held['run_id']} ({held['owner']}) since {held['acquired_at']}; "
                    f"wait for it to finish. If that run died, the lock expires {stale_after_minutes} minutes "
                    f"after it was taken, or remove it with `deltainc unlock {job}`"
                )
        seen = "NULL" if held is None else "'" + str(held["run_id"]).replace("'", "''") + "'"
        claim = spark.createDataFrame([(job, run_id, _owner())], "job STRING, run_id STRING, owner STRING")
        claim = claim.withColumn("acquired_at", F.current_timestamp())
        values: dict[str, str | Column] = {c: f"s.{c}" for c in ("job", "run_id", "acquired_at", "owner")}
        try:
            (
                DeltaTable.forPath(spark, paths.locks)
                .alias("t")
                .merge(claim.alias("s"), "t.job = s.job")
                .whenMatchedUpdate(condition=f"t.run_id <=> {seen}", set=values)
                .whenNotMatchedInsert(values=values)
                .execute()
            )
        except Exception as exc:
            if not _is_write_conflict(exc):
                raise
            continue  # someone committed to the lock table meanwhile: look again
        now = _holder(spark, paths, job)
        if now is not None and now["run_id"] == run_id:
            return
    raise JobLockedError(
        f"job {job!r} is locked: the lock changed hands {attempts} times while this run tried to take it"
    )


def release_lock(spark: SparkSession, paths: StatePaths, job: str, run_id: str) -> None:
    """Give the lock back (only if this run still holds it): for a run that ends without a run-log row."""
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
