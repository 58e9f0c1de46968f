"""The processes that can commit for a run, as its lock row records them: where each runs, its pid and its start time.

A run can commit through two processes: the command's own (Python, the state's commits) and the Spark driver JVM
it started (the target's commits). Killing the first does not stop the second at once: an orphaned JVM notices its
parent is gone and exits, but a Delta commit it had begun still lands. So the lock names both, and a run is over
on this host only when neither is alive (docs/design.md#state-tables-and-the-lock). The start time (clock ticks
after boot, from /proc) tells a reused pid from the process the lock recorded; where /proc is missing it is None
and the pid alone is checked. Plain OS calls, no Spark.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Process",
    "COMMAND",
    "DRIVER",
    "start_ticks",
    "this_process",
    "spark_drivers",
    "encode",
    "decode",
    "stop",
]

COMMAND = "command"  # the deltainc command (or the Python program) that holds the lock
DRIVER = "spark driver"  # a Spark driver JVM the command started: it makes the target's commits

_PROC = Path("/proc")


@dataclass(frozen=True)
class Process:
    """One process that can commit for a run: its role, host, pid and start time (None where unknown)."""

    role: str
    host: str
    pid: int
    started: int | None = None

    @property
    def local(self) -> bool:
        """Whether it runs (or ran) on this host, where its life can be checked."""
        return self.host == socket.gethostname()

    def alive(self) -> bool:
        """Whether this very process still runs on this host (a pid taken by a later process does not count)."""
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except (PermissionError, OverflowError):
            return True  # another user's process: it exists
        fields = _stat(self.pid)
        if fields is None or len(fields) < 20:
            return True  # no /proc: the pid exists, which is all that can be known
        if fields[0] in ("Z", "X"):  # a zombie has exited: it commits nothing more
            return False
        return self.started is None or int(fields[19]) == self.started

    def label(self) -> str:
        """How messages name it: `spark driver pid 4242`."""
        return f"{self.role} pid {self.pid}"


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state, ppid, ...), or None where unreadable."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks after boot (field 22 of /proc/PID/stat), None where unknown."""
    fields = _stat(pid)
    return None if fields is None or len(fields) < 20 else int(fields[19])


def this_process() -> Process:
    """The calling process, as the command that holds a lock."""
    return Process(COMMAND, socket.gethostname(), os.getpid(), start_ticks(os.getpid()))


def spark_drivers() -> tuple[Process, ...]:
    """The Java processes this process started: the driver JVM of a local SparkSession (PySpark launches it as a
    child, `spark-submit` exec-ing into java). Empty where /proc is missing or no JVM runs (Spark Connect)."""
    me, host, found = os.getpid(), socket.gethostname(), []
    try:
        entries = [entry for entry in _PROC.iterdir() if entry.name.isdigit()]
    except OSError:
        return ()
    for entry in entries:
        fields = _stat(int(entry.name))
        if fields is None or len(fields) < 20 or int(fields[1]) != me:
            continue
        try:
            name = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if name == "java":
            found.append(Process(DRIVER, host, int(entry.name), int(fields[19])))
    return tuple(sorted(found, key=lambda process: process.pid))


def encode(processes: tuple[Process, ...]) -> str:
    """The lock row's `processes` column: JSON, one object a process."""
    return json.dumps([{"role": p.role, "host": p.host, "pid": p.pid, "started": p.started} for p in processes])


def decode(text: str | None) -> tuple[Process, ...]:
    """The processes of a lock row's `processes` column (empty for a row written before it existed)."""
    if not text:
        return ()
    return tuple(Process(str(p["role"]), str(p["host"]), int(p["pid"]), p.get("started")) for p in json.loads(text))


def stop(processes: tuple[Process, ...], timeout_seconds: float = 60) -> bool:
    """Kill these processes of this host (SIGKILL: a Delta commit is one atomic put, a kill cannot tear it) and wait
    until they are gone; False when one is still alive at the timeout or may not be signalled (another user's)."""
    for process in processes:
        if not process.alive():
            continue
        try:
            os.kill(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
        except PermissionError:
            return False
    deadline = time.monotonic() + timeout_seconds
    while any(process.alive() for process in processes):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
