"""Holding the job's lock while a command works: taken once (before Spark starts, for a command that starts it),
renewed by a heartbeat, released by the run's last run-log row (or here, when the run ends without one). A run
stopped before a window's row released the lock ends the command's own Spark driver JVM first."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from deltainc import spark_driver
from deltainc.errors import Cancelled, JobLockedError
from deltainc.pipeline.state.lock import Heartbeat, record_processes, release_lock, start_heartbeat, take_lock
from deltainc.pipeline.state.model import JobState, StatePaths, judge, locked_message
from deltainc.pipeline.state.processes import Process, spark_drivers, stop, this_process
from deltainc.pipeline.state.store import ensure_state_tables, read_state

__all__ = ["Acquired", "acquire", "Lease", "locked"]

log = logging.getLogger("deltainc")


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
