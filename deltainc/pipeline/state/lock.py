"""The per-job lock, a lease: one row per job in the `locks` Delta table, renewed by a heartbeat, held while a
command works (taken once, before Spark starts for a command that starts it; released by the run's last run-log row,
or here when the run ends without one).

A run takes the lock with one compare and swap (`store.swap`): it replaces the job's row only if the row is still the
one the run saw, and its commit goes in only if nothing else committed to the table since the run read it. The run
judged that row's run over before (it wrote its last run-log row, every process the row names on this host is gone,
or, on another host, its heartbeat is older than the lease: `model.judge`). Of two runs racing for it, one commit
wins; the loser reads the lock again and finds it held. A live run is never taken over: its heartbeat thread renews
`heartbeat_at` every quarter of the lease while it works. A run stopped before a window's row released the lock
ends the command's own Spark driver JVM first. Every commit here is delta-rs's (no Spark).
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from deltainc import spark_driver
from deltainc.errors import Cancelled, JobLockedError
from deltainc.pipeline.state.model import JobState, LockHolder, StatePaths, judge, locked_message, owner_id
from deltainc.pipeline.state.processes import Process, encode, spark_drivers, stop, this_process
from deltainc.pipeline.state.store import (
    SwapLost,
    delete_lock_rows,
    ensure_state_tables,
    lock_rows,
    lock_schema,
    read_state,
    retrying,
    swap,
)

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake import DeltaTable

__all__ = [
    "Heartbeat",
    "take_lock",
    "renew_lock",
    "record_processes",
    "start_heartbeat",
    "release_lock",
    "Acquired",
    "acquire",
    "Lease",
    "locked",
]

log = logging.getLogger("deltainc")


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
    claim = lock_rows(
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
    row = lock_rows([{"job": job, "run_id": run_id, column: value}])

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


def release_lock(locks: str, job: str, run_id: str) -> None:
    """Give the lock back (only if this run still holds it): for a run that ends without a run-log row."""
    delete_lock_rows(locks, job, [run_id])


@dataclass(frozen=True)
class Acquired:
    """The lock is this run's: the job's state as of taking it, and the dead run it took over, if any."""

    state: JobState
    took_over: str | None


def acquire(
    paths: StatePaths,
    job: str,
    run_id: str,
    expiry_seconds: int,
    state: JobState | None = None,
    attempts: int = 40,
) -> Acquired:
    """Take the job's lock in one commit, or raise JobLockedError when a live run holds it.

    `state` (read just before) saves a read; after a lost race (another run, or another job of the same
    state folder, committed first) the state is read again and the holder judged again. A holder whose command is
    gone while its Spark driver still runs on this host (a kill -9 during a commit) is taken over only once that
    driver is stopped: killed and waited for, so that none of its commits can land after this run holds the lock.
    """
    stopped = ""
    for _attempt in range(attempts):
        state = state or read_state(paths, job)
        held, took_over = state.holder, None
        if held is not None and held.run_id != run_id:
            life = judge(held, expiry_seconds)
            if life.orphans and stop(life.orphans):
                names = ", ".join(p.label() for p in life.orphans)
                log.warning("%s: stopped the %s of dead run %s before taking its lock", job, names, held.run_id)
                stopped = f"; its {names} was stopped"
                state = None
                continue
            if life.alive:
                raise JobLockedError(locked_message(job, held, life))
            if not held.finished:
                took_over = f"{held.run_id} ({held.owner}): {life.reason}{stopped}"
        if take_lock(paths.locks, job, run_id, held):
            return Acquired(state, took_over)
        state = None
    raise JobLockedError(f"job {job!r} is locked: the lock changed hands {attempts} times while this run tried")


@dataclass
class Lease:
    """This run's hold on the job's lock; `released` once a committed run-log row has released it."""

    run_id: str
    state: JobState  # as of taking the lock
    took_over: str | None
    heartbeat: Heartbeat
    job: str
    locks: str  # the lock table
    drivers: tuple[Process, ...] = ()  # the Spark driver JVMs the lock row names
    released: bool = False

    def check(self, job: str) -> None:
        """Raise before a commit if another run took the lock (this run's heartbeats stopped reaching it)."""
        if self.heartbeat.lost.is_set():
            raise JobLockedError(
                f"job {job!r}: run {self.run_id} lost its lock to another run (its heartbeat could not be renewed "
                "in time); it stops before writing more"
            )

    def name_drivers(self) -> None:
        """Make the lock row name the Spark driver JVM this process has started since it took the lock (one
        commit; none when the row names it already): from then on the run counts as alive while that JVM is."""
        drivers = spark_drivers()
        if drivers == self.drivers:
            return
        if not record_processes(self.locks, self.job, self.run_id, (this_process(), *drivers)):
            raise JobLockedError(f"job {self.job!r}: run {self.run_id} lost its lock to another run")
        self.drivers = drivers


@contextmanager
def locked(paths: StatePaths, name: str, expiry: int, state: JobState | None = None) -> Iterator[Lease]:
    """Hold job `name`'s lock for the block, renewing it every quarter of `expiry` seconds; released by the run's
    last run-log row, or here. `state`, read before, saves reading it again when nobody took the lock since."""
    run_id = uuid.uuid4().hex[:12]
    ensure_state_tables(paths)
    drivers = spark_drivers()  # the lock row names them as it is taken
    acquired = acquire(paths, name, run_id, expiry, state)
    if acquired.took_over:
        log.warning("%s: took over the lock of run %s", name, acquired.took_over)
    heartbeat = start_heartbeat(
        paths.locks, name, run_id, expiry / 4, lambda exc: log.warning("%s: heartbeat failed: %s", name, exc)
    )
    lease = Lease(run_id, acquired.state, acquired.took_over, heartbeat, name, paths.locks, drivers)
    try:
        yield lease
    except (KeyboardInterrupt, Cancelled) as stop:  # a stop before any window's row: the command's JVM goes first
        spark_driver.stop()
        if getattr(stop, "summary", None) is None:  # no window's row said what was stopped
            last, first = (
                "after its last window: every window is recorded",
                "before its first window; nothing was committed",
            )
            what = last if lease.released else first
            stop.summary = f"{name}: stopped {what}"  # type: ignore[union-attr]
        raise
    finally:
        heartbeat.end()
        if not lease.released:
            release_lock(paths.locks, name, run_id)
