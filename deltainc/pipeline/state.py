"""The job state in Delta: the append-only run log (which carries the watermark) and the per-job lock.

A run costs two state commits: one to take the lock, and one per window that appends its run-log row;
that row moves the watermark (its `watermark_unit`) and, on the run's last window, releases the lock
(`releases_lock`). So the watermark, the run log and the lock's release can never disagree.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from pyspark.sql import Row, SparkSession
from pyspark.sql import functions as F

from deltainc.errors import JobLockedError
from deltainc.pipeline.delta_sql import is_delta_path
from deltainc.pipeline.lock import LOCK_SCHEMA, LockHolder, judge, locked_message, take_lock
from deltainc.pipeline.run_record import RUN_SCHEMA, RunRecord
from deltainc.pipeline.state_model import JobState, StatePaths, state_paths

__all__ = [
    "StatePaths",
    "RunRecord",  # its home is run_record; the run log's rows are written and read here
    "JobState",
    "Acquired",
    "state_paths",
    "ensure_state_tables",
    "read_state",
    "read_watermark",
    "acquire",
    "append_run",
    "read_runs",
]

LEGACY_WATERMARK_SCHEMA = (
    "job STRING, time_uom STRING, watermark STRING, watermark_unit BIGINT, updated_at TIMESTAMP, run_id STRING"
)


def _create(spark: SparkSession, path: str, schema: str) -> None:
    if _exists(spark, path):
        return
    try:
        spark.createDataFrame([], schema).write.format("delta").mode("append").save(path)
    except Exception:  # a concurrent run may have created it first; that is fine, anything else is not
        if not _exists(spark, path):  # (Delta's own check may answer from a stale cache here)
            raise


def ensure_state_tables(spark: SparkSession, paths: StatePaths) -> None:
    """Create the run-log and lock tables if they do not exist yet (and bring a 0.1 lock table up to date)."""
    _create(spark, paths.runs, RUN_SCHEMA)
    _create(spark, paths.locks, LOCK_SCHEMA)
    if "heartbeat_at" not in spark.read.format("delta").load(paths.locks).columns:
        spark.sql(f"ALTER TABLE delta.`{paths.locks}` ADD COLUMNS (heartbeat_at TIMESTAMP)")


def _exists(spark: SparkSession, path: str) -> bool:
    """Whether a Delta table has committed at `path` (a local folder answers without a Delta log read)."""
    return is_delta_path(spark, path)


def _legacy_watermark(spark: SparkSession, paths: StatePaths, job: str) -> int | None:
    if not _exists(spark, paths.legacy_watermarks):
        return None
    legacy = spark.read.format("delta").load(paths.legacy_watermarks).where(F.col("job") == job)
    row = legacy.agg(F.max("watermark_unit")).first()
    return None if row is None or row[0] is None else int(row[0])


def read_state(spark: SparkSession, paths: StatePaths, job: str) -> JobState:
    """The job's watermark (the greatest one its run log records) and who holds its lock.

    The lock row is read first, then the run log once, for both the watermark and whether the holder's
    run wrote its last row: so a holder seen finished has no more rows to come, and the watermark is
    current as long as nobody takes the lock after this read (which the lock's compare and swap checks).
    """
    held = None
    if _exists(spark, paths.locks):
        held = spark.read.format("delta").load(paths.locks).where(F.col("job") == job).first()
    watermark, finished, settings = None, False, None
    if _exists(spark, paths.runs):
        runs = spark.read.format("delta").load(paths.runs).where(F.col("job") == job)
        if "releases_lock" not in runs.columns:  # a run log of deltainc 0.1: no watermark, no lock release
            runs = runs.withColumn("watermark_unit", F.lit(None).cast("bigint"))
            runs = runs.withColumn("releases_lock", F.lit(False))
        if "job_settings" not in runs.columns:  # written before settings were remembered
            runs = runs.withColumn("job_settings", F.lit(None).cast("string"))
        holder_done = F.lit(False) if held is None else (F.col("run_id") == held["run_id"]) & F.col("releases_lock")
        built = F.when(F.col("watermark_unit").isNotNull() & (F.col("status") == "succeeded"), F.col("job_settings"))
        row = runs.agg(
            F.max("watermark_unit"),
            F.max(F.when(holder_done, 1).otherwise(0)),
            F.max_by(built, F.when(built.isNotNull(), F.col("started_at"))),
        ).first()
        if row is not None:
            watermark = None if row[0] is None else int(row[0])
            finished = bool(row[1])
            settings = None if row[2] is None else json.loads(row[2])
    legacy = _legacy_watermark(spark, paths, job)
    if legacy is not None:
        watermark = legacy if watermark is None else max(watermark, legacy)
    holder = None
    if held is not None:
        heartbeat = held.asDict().get("heartbeat_at")  # absent from lock tables of deltainc 0.1
        holder = LockHolder(held["run_id"], held["owner"], held["acquired_at"], heartbeat, finished)
    return JobState(watermark, holder, settings)


def read_watermark(spark: SparkSession, paths: StatePaths, job: str) -> int | None:
    """The last unit fully processed by `job`, or None before its first run."""
    return read_state(spark, paths, job).watermark


@dataclass(frozen=True)
class Acquired:
    """The lock is this run's: the job's state as of taking it, and the dead run it took over, if any."""

    state: JobState
    took_over: str | None


def acquire(
    spark: SparkSession,
    paths: StatePaths,
    job: str,
    run_id: str,
    expiry_seconds: int,
    state: JobState | None = None,
    attempts: int = 8,
) -> Acquired:
    """Take the job's lock in one commit, or raise JobLockedError when a live run holds it.

    `state` (read just before) saves a read; after a lost race or a write conflict with another job of
    the same state folder, the state is read again and the holder judged again.
    """
    for _attempt in range(attempts):
        state = state or read_state(spark, paths, job)
        held, took_over = state.holder, None
        if held is not None and held.run_id != run_id:
            life = judge(held, expiry_seconds)
            if life.alive:
                raise JobLockedError(locked_message(job, held, life))
            if not held.finished:
                took_over = f"{held.run_id} ({held.owner}): {life.reason}"
        if take_lock(spark, paths.locks, job, run_id, held):
            return Acquired(state, took_over)
        state = None
    raise JobLockedError(f"job {job!r} is locked: the lock changed hands {attempts} times while this run tried")


def append_run(spark: SparkSession, paths: StatePaths, record: RunRecord) -> None:
    """Append one row to the run log: one blind append, Delta's cheapest commit (it conflicts with nothing).

    A row with `watermark_unit` moves the job's watermark; the greatest one wins, so it never moves back.
    """
    values = asdict(record)
    frame = spark.createDataFrame([Row(**values)], RUN_SCHEMA)
    frame.write.format("delta").mode("append").option("mergeSchema", "true").save(paths.runs)


def read_runs(spark: SparkSession, paths: StatePaths, job: str, limit: int = 10) -> list[Row]:
    """The latest runs of `job`, newest first."""
    if not _exists(spark, paths.runs):
        return []
    runs = spark.read.format("delta").load(paths.runs).where(F.col("job") == job)
    return runs.orderBy(F.col("started_at").desc()).limit(limit).collect()
