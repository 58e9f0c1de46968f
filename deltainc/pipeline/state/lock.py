"""The per-job lock, a lease: one row per job in the `locks` Delta table, renewed by a heartbeat.

A run takes the lock with one compare and swap (`store.swap`): it replaces the job's row only if the
row is still the one the run saw, and its commit goes in only if nothing else committed to the table since
the run read it. The run judged that row's run over before (it wrote its last run-log row, every process the
row names on this host is gone, or, on another host, its heartbeat is older than the lease: `model.judge`).
Of two runs racing for it, one commit wins; the loser reads the lock again and finds it held. A live run is
never taken over: its heartbeat thread renews `heartbeat_at` every quarter of the lease while it works. Every
commit here is delta-rs's (no Spark).
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from deltainc.errors import ConfigError
from deltainc.pipeline.delta.delta_log import column_types, job_rows, spark_row
from deltainc.pipeline.state.model import Liveness, LockHolder, judge, locked_message, owner_id
from deltainc.pipeline.state.processes import Process, encode, spark_drivers, this_process
from deltainc.pipeline.state.store import SwapLost, lock_schema, retrying, swap

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake import DeltaTable

__all__ = [
    "LockHolder",
    "Liveness",
    "Heartbeat",
    "owner_id",
    "judge",
    "take_lock",
    "renew_lock",
    "record_processes",
    "start_heartbeat",
    "release_lock",
    "remove_lock",
    "locked_message",
]


def _rows(values: list[dict[str, Any]]) -> pa.Table:
    import pyarrow as pa

    schema = lock_schema()
    columns = {name: [row.get(name) for row in values] for name in schema.names}
    return pa.table({name: pa.array(columns[name], schema.field(name).type) for name in schema.names})


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _affected(metrics: dict[str, Any]) -> int:
    return sum(int(metrics.get(key, 0)) for key in ("num_target_rows_inserted", "num_target_rows_updated"))


def take_lock(locks: str, job: str, run_id: str, seen: LockHolder | None) -> bool:
    """One compare and swap: make `run_id` the holder if the job's row is still `seen`'s (or still absent).

    The row names this process and the Spark driver JVMs it runs already (a command that takes the lock before
    Spark starts adds its driver later, `record_processes`). True when this run now holds the lock; False when
    the row changed hands since it was read, or another commit to the lock table went in first (read again and
    judge the holder again).
    """
    now = _now()
    processes = encode((this_process(), *spark_drivers()))
    claim = _rows(
        [{"job": job, "run_id": run_id, "acquired_at": now, "owner": owner_id(), "heartbeat_at": now,
          "processes": processes}]
    )  # fmt: skip
    claim = claim.append_column("seen_run_id", _text([None if seen is None else seen.run_id]))
    assign = {name: f"s.{name}" for name in lock_schema().names}

    def change(table: DeltaTable, commit: Any) -> bool:
        metrics = (
            table.merge(claim, "t.job = s.job", source_alias="s", target_alias="t", commit_properties=commit)
            .when_matched_update(assign, predicate="t.run_id IS NOT DISTINCT FROM s.seen_run_id")
            .when_not_matched_insert(assign)
            .execute()
        )
        return _affected(metrics) == 1

    try:
        return swap(locks, change)
    except SwapLost:
        return False


def _text(values: list[str | None]) -> pa.Array:
    import pyarrow as pa

    return pa.array(values, pa.string())


def _set_own_row(job: str, run_id: str, column: str, value: Any) -> Callable[[DeltaTable, Any], bool]:
    """A `swap` change that sets `column` of `run_id`'s lock row to `value`: True when it did, False when the lock
    row is no longer this run's (the MERGE matched nothing)."""
    row = _rows([{"job": job, "run_id": run_id, column: value}])

    def change(table: DeltaTable, commit: Any) -> bool:
        metrics = (
            table.merge(row, "t.job = s.job AND t.run_id = s.run_id", source_alias="s", target_alias="t",
                        commit_properties=commit)
            .when_matched_update({column: f"s.{column}"})
            .execute()
        )  # fmt: skip
        return _affected(metrics) == 1

    return change


def renew_lock(locks: str, job: str, run_id: str) -> bool | None:
    """Move this run's heartbeat to now: True, False when the lock is no longer ours, None when another commit
    went in first (try again)."""
    try:
        return swap(locks, _set_own_row(job, run_id, "heartbeat_at", _now()))
    except SwapLost:
        return None


def record_processes(locks: str, job: str, run_id: str, processes: tuple[Process, ...]) -> bool:
    """Make the lock row of `run_id` name `processes` (this command's and the Spark driver it has just started),
    in one commit retried over other commits; False when the lock is no longer this run's."""
    change = _set_own_row(job, run_id, "processes", encode(processes))
    return retrying(lambda: swap(locks, change))


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


def start_heartbeat(
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
                renewed = None
                for _ in range(5):  # another job's lock commit may win a race: try again at once
                    renewed = renew_lock(locks, job, run_id)
                    if renewed is not None:
                        break
                if renewed is False:
                    beat.lost.set()
                    return
            except BaseException as exc:  # a failed renewal is retried; the lease runs out if it keeps failing
                if on_error is not None:
                    on_error(exc)

    beat.thread = threading.Thread(target=loop, name=f"deltainc-heartbeat-{job}", daemon=True)
    beat.thread.start()
    return beat


def _delete(locks: str, job: str, run_ids: list[str]) -> None:
    """Delete the lock rows of `job` held by `run_ids`, in one commit (retried when another commit wins)."""
    gone = _rows([{"job": job, "run_id": run_id} for run_id in run_ids])

    def change(table: DeltaTable, commit: Any) -> None:
        (
            table.merge(gone, "t.job = s.job AND t.run_id = s.run_id", source_alias="s", target_alias="t",
                        commit_properties=commit)
            .when_matched_delete()
            .execute()
        )  # fmt: skip

    retrying(lambda: swap(locks, change))


def release_lock(locks: str, job: str, run_id: str) -> None:
    """Give the lock back (only if this run still holds it): for a run that ends without a run-log row."""
    _delete(locks, job, [run_id])


def remove_lock(locks: str, job: str, run_id: str | None = None) -> list[dict[str, object]]:
    """Delete the lock row(s) of `job` (only run `run_id`'s, when given); returns the rows removed."""
    from deltainc.pipeline.delta.delta_log import open_table

    table = open_table(locks)
    if table is None:
        return []
    types = column_types(table, locks)
    held = [spark_row(row, types) for row in job_rows(table, locks, job, list(types))]
    if run_id is not None:
        matching = [row for row in held if row["run_id"] == run_id]
        if held and not matching:
            holders = ", ".join(f"{row['run_id']} ({row['owner']})" for row in held)
            raise ConfigError(f"--run-id: job {job!r} is locked by run {holders}, not by run {run_id!r}")
        held = matching
    if held:
        _delete(locks, job, [str(row["run_id"]) for row in held])
    return held
