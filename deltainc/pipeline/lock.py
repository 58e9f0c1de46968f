"""The per-job lock, a lease: one row per job in the `locks` Delta table, renewed by a heartbeat.

A run takes the lock with one MERGE that replaces the job's row only if it is still the row the run saw
(compare and swap), and only if that row's run is over: it wrote its last run-log row, its process on
this host is gone, or its heartbeat is older than the lease. Delta's optimistic concurrency serialises
two runs racing for it; the loser reads the lock again and finds it held. A live run is never taken
over: its heartbeat thread renews `heartbeat_at` every quarter of the lease while it works.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from delta.exceptions import (
    ConcurrentAppendException,
    ConcurrentDeleteDeleteException,
    ConcurrentDeleteReadException,
    ConcurrentTransactionException,
    ConcurrentWriteException,
    DeltaConcurrentModificationException,
    MetadataChangedException,
    ProtocolChangedException,
)
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from deltainc.errors import ConfigError
from deltainc.pipeline.delta_sql import delete_where, is_delta_path, path_ref
from deltainc.pipeline.lock_model import Liveness, LockHolder, judge, locked_message, owner_id
from deltainc.spark_compat import error_condition

__all__ = [
    "LOCK_SCHEMA",
    "LockHolder",
    "Liveness",
    "Heartbeat",
    "owner_id",
    "judge",
    "take_lock",
    "start_heartbeat",
    "release_lock",
    "remove_lock",
    "is_write_conflict",
    "locked_message",
]

LOCK_SCHEMA = "job STRING, run_id STRING, acquired_at TIMESTAMP, owner STRING, heartbeat_at TIMESTAMP"


_CONFLICTS = (
    DeltaConcurrentModificationException,
    ConcurrentWriteException,
    MetadataChangedException,
    ProtocolChangedException,
    ConcurrentAppendException,
    ConcurrentDeleteReadException,
    ConcurrentDeleteDeleteException,
    ConcurrentTransactionException,
)


# Delta's error classes for the same conflicts, as a Spark Connect client receives them (no Delta exception types).
_CONFLICT_CONDITIONS = ("DELTA_CONCURRENT", "DELTA_METADATA_CHANGED", "DELTA_PROTOCOL_CHANGED")


def is_write_conflict(exc: BaseException) -> bool:
    """Whether `exc` is one of Delta's optimistic-concurrency conflicts (another writer committed first)."""
    if isinstance(exc, _CONFLICTS) or "Concurrent" in type(exc).__name__:
        return True
    return error_condition(exc).startswith(_CONFLICT_CONDITIONS)


def _quote(text: str | None) -> str:
    return "NULL" if text is None else "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def take_lock(spark: SparkSession, locks: str, job: str, run_id: str, seen: LockHolder | None) -> bool:
    """One compare-and-swap commit: make `run_id` the holder if the job's row is still `seen`'s (or absent).

    True when this run now holds the lock; False when the row changed hands since it was read (read
    again and judge the new holder). A write conflict with any other writer of the table counts as False.
    """
    expected = _quote(None if seen is None else seen.run_id)
    claim = (
        f"SELECT {_quote(job)} AS job, {_quote(run_id)} AS run_id, current_timestamp() AS acquired_at, "
        f"{_quote(owner_id())} AS owner, current_timestamp() AS heartbeat_at"
    )
    try:
        result = spark.sql(
            f"MERGE INTO delta.`{locks}` AS t USING ({claim}) AS s ON t.job = s.job "
            f"WHEN MATCHED AND t.run_id <=> {expected} THEN UPDATE SET * "
            "WHEN NOT MATCHED THEN INSERT *"
        ).first()
    except Exception as exc:
        if is_write_conflict(exc):
            return False
        raise
    return result is not None and int(result["num_affected_rows"]) == 1


@dataclass
class Heartbeat:
    """The thread that renews this run's lease; `lost` is set if the lock was found in another run's hands."""

    stop: threading.Event = field(default_factory=threading.Event)
    lost: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def end(self) -> None:
        """Stop renewing (waits for a renewal in flight)."""
        self.stop.set()
        if self.thread is not None:
            self.thread.join()


def _renew(spark: SparkSession, locks: str, job: str, run_id: str) -> bool | None:
    """Move this run's heartbeat to now: True, False when the lock is no longer ours, None on a conflict."""
    try:
        result = spark.sql(
            f"UPDATE delta.`{locks}` SET heartbeat_at = current_timestamp() "
            f"WHERE job = {_quote(job)} AND run_id = {_quote(run_id)}"
        ).first()
    except Exception as exc:
        if is_write_conflict(exc):
            return None  # another job's lock commit won the race; try again at the next beat
        raise
    return result is not None and int(result["num_affected_rows"]) == 1


def start_heartbeat(
    spark: SparkSession,
    locks: str,
    job: str,
    run_id: str,
    every_seconds: float,
    on_error: Callable[[BaseException], None] | None = None,
) -> Heartbeat:
    """Renew the lease every `every_seconds` in a daemon thread until `Heartbeat.end()`."""
    beat = Heartbeat()

    def loop() -> None:
        while not beat.stop.wait(every_seconds):
            try:
                if _renew(spark, locks, job, run_id) is False:
                    beat.lost.set()
                    return
            except BaseException as exc:  # a failed renewal is retried; the lease runs out if it keeps failing
                if on_error is not None:
                    on_error(exc)

    beat.thread = threading.Thread(target=loop, name=f"deltainc-heartbeat-{job}", daemon=True)
    beat.thread.start()
    return beat


def release_lock(spark: SparkSession, locks: str, job: str, run_id: str) -> None:
    """Give the lock back (only if this run still holds it): for a run that ends without a run-log row."""
    delete_where(spark, path_ref(locks), f"job = {_quote(job)} AND run_id = {_quote(run_id)}")


def remove_lock(spark: SparkSession, locks: str, job: str, run_id: str | None = None) -> list[dict[str, object]]:
    """Delete the lock row(s) of `job` (only run `run_id`'s, when given); returns the rows removed."""
    if not is_delta_path(spark, locks):
        return []
    held = spark.read.format("delta").load(locks).where(F.col("job") == job).collect()
    if run_id is not None:
        matching = [row for row in held if row["run_id"] == run_id]
        if held and not matching:
            holders = ", ".join(f"{row['run_id']} ({row['owner']})" for row in held)
            raise ConfigError(f"--run-id: job {job!r} is locked by run {holders}, not by run {run_id!r}")
        held = matching
    if held:
        ids = [row["run_id"] for row in held]
        held_ids = ", ".join(_quote(i) for i in ids)
        delete_where(spark, path_ref(locks), f"job = {_quote(job)} AND run_id IN ({held_ids})")
    return [row.asDict() for row in held]
