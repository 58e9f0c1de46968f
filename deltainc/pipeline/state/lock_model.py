"""The lock's pure side, without Spark: who holds a job's lock and whether that run is still alive.

`deltainc.pipeline.state.lock` re-exports all of it; it lives apart so that `status` can judge a lock without
pyspark.
"""

from __future__ import annotations

import datetime as dt
import getpass
import os
import re
import socket
from dataclasses import dataclass

__all__ = ["LockHolder", "Liveness", "owner_id", "judge", "locked_message"]

_OWNER = re.compile(r"^(?P<user>.*)@(?P<host>[^@]*):(?P<pid>\d+)$")


@dataclass(frozen=True)
class LockHolder:
    """Who holds (or last held) a job's lock, and whether that run wrote its last run-log row."""

    run_id: str
    owner: str  # user@host:pid
    acquired_at: dt.datetime  # naive local time, as pyspark returns timestamps
    heartbeat_at: dt.datetime | None
    finished: bool


@dataclass(frozen=True)
class Liveness:
    """Whether a lock's run is alive, and why we think so."""

    alive: bool
    reason: str


def owner_id() -> str:
    """This process as a lock owner: user@host:pid."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{socket.gethostname()}:{os.getpid()}"


def _process_gone(owner: str) -> bool:
    """Whether `owner` names a process of this host that no longer exists."""
    found = _OWNER.match(owner)
    if found is None or found["host"] != socket.gethostname():
        return False
    try:
        os.kill(int(found["pid"]), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False
    return False


def judge(holder: LockHolder, expiry_seconds: int, now: dt.datetime | None = None) -> Liveness:
    """Alive unless its run finished, its process on this host is gone, or its heartbeat is too old."""
    if holder.finished:
        return Liveness(False, "its run finished")
    if _process_gone(holder.owner):
        return Liveness(False, f"its process ({holder.owner}) is gone")
    beat = holder.heartbeat_at or holder.acquired_at
    silent = ((now or dt.datetime.now()) - beat).total_seconds()
    if silent > expiry_seconds:
        return Liveness(False, f"no heartbeat for {silent:.0f} s (lease {expiry_seconds} s)")
    return Liveness(True, f"last heartbeat {max(0.0, silent):.0f} s ago (lease {expiry_seconds} s)")


def locked_message(job: str, holder: LockHolder, life: Liveness) -> str:
    """What a second run says when the lock is held by a live run."""
    return (
        f"job {job!r} is locked by run {holder.run_id} ({holder.owner}) since {holder.acquired_at:%Y-%m-%d %H:%M:%S}; "
        f"{life.reason}. Wait for it to finish: a run that died is taken over by the next run once its "
        "heartbeat is older than the lease (at once on the same host). `deltainc unlock` is only needed if "
        "the lock must go sooner"
    )
