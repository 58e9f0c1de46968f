"""The state's pure data, without Spark: where a job's state tables live, what reading them gives, who holds a job's
lock and whether that run is still alive.

`deltainc.pipeline.state.store` and `deltainc.pipeline.state.lock` re-export it; it lives apart so that `status`
can read the state and judge a lock without pyspark.
"""

from __future__ import annotations

import datetime as dt
import getpass
import os
import re
import socket
from dataclasses import dataclass

from deltainc.pipeline.state.processes import COMMAND, Process

__all__ = ["StatePaths", "JobState", "state_paths", "LockHolder", "Liveness", "owner_id", "judge", "locked_message"]

_OWNER = re.compile(r"^(?P<user>.*)@(?P<host>[^@]*):(?P<pid>\d+)$")


@dataclass(frozen=True)
class LockHolder:
    """Who holds (or last held) a job's lock, and whether that run wrote its last run-log row."""

    run_id: str
    owner: str  # user@host:pid
    acquired_at: dt.datetime  # naive local time, as pyspark returns timestamps
    heartbeat_at: dt.datetime | None
    finished: bool
    processes: tuple[Process, ...] = ()  # every process that can commit for the run: its command, its Spark driver

    def committers(self) -> tuple[Process, ...]:
        """The processes that can commit for the run; for a lock row written before they were recorded, the
        owner's process (its start time unknown)."""
        if self.processes:
            return self.processes
        found = _OWNER.match(self.owner)
        return () if found is None else (Process(COMMAND, found["host"], int(found["pid"])),)


@dataclass(frozen=True)
class Liveness:
    """Whether a lock's run is alive, and why we think so. `orphans`: processes of this host that can still commit
    for a run whose command is gone (its Spark driver finishing a commit after a kill -9): the next run stops them
    before it takes the lock (`store.acquire`)."""

    alive: bool
    reason: str
    orphans: tuple[Process, ...] = ()


def owner_id() -> str:
    """This process as a lock owner: user@host:pid."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{socket.gethostname()}:{os.getpid()}"


def _gone(holder: LockHolder, processes: tuple[Process, ...]) -> str:
    """Why a run whose processes all ended on this host is over."""
    if len(processes) == 1 and processes[0].role == COMMAND:
        return f"its process ({holder.owner}) is gone"
    return f"its processes are gone ({holder.owner}: {', '.join(p.label() for p in processes)})"


def judge(holder: LockHolder, expiry_seconds: int, now: dt.datetime | None = None) -> Liveness:
    """Alive unless its run finished, every process that can commit for it is gone, or (for processes of another
    host, whose life cannot be checked) its heartbeat is older than the lease.

    On this host the processes decide, whatever the heartbeat: a live process may still commit. When the command
    is gone but its Spark driver still runs, the run is alive and the driver an orphan (`Liveness.orphans`).
    """
    if holder.finished:
        return Liveness(False, "its run finished")
    beat = holder.heartbeat_at or holder.acquired_at
    silent = ((now or dt.datetime.now()) - beat).total_seconds()
    heard = f"last heartbeat {max(0.0, silent):.0f} s ago (lease {expiry_seconds} s)"
    processes = holder.committers()
    local = tuple(p for p in processes if p.local)
    running = tuple(p for p in local if p.alive())
    if running:
        if any(p.role == COMMAND for p in running):
            return Liveness(True, heard)
        names = ", ".join(p.label() for p in running)
        return Liveness(True, f"its command ({holder.owner}) is gone but its {names} still runs", running)
    if processes and len(local) == len(processes):
        return Liveness(False, _gone(holder, processes))
    if silent > expiry_seconds:
        return Liveness(False, f"no heartbeat for {silent:.0f} s (lease {expiry_seconds} s)")
    return Liveness(True, heard)


def locked_message(job: str, holder: LockHolder, life: Liveness) -> str:
    """What a second run says when the lock is held by a live run."""
    return (
        f"job {job!r} is locked by run {holder.run_id} ({holder.owner}) since {holder.acquired_at:%Y-%m-%d %H:%M:%S}; "
        f"{life.reason}. Wait for it to finish: a run that died is taken over by the next run once its processes "
        "are gone (on this host; a Spark driver left running is stopped first) or its heartbeat is older than the "
        "lease (another host). `deltainc unlock` is only needed if the lock must go sooner"
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
class JobState:
    """A job's watermark and its lock's holder, read together (two small reads, no commit), and the settings
    its target was built with (those of the latest row that moved the watermark; None before 0.2)."""

    watermark: int | None
    holder: LockHolder | None
    settings: dict[str, object] | None = None
