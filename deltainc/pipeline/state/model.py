"""The state's pure data, without Spark: where a job's state tables live, what reading them gives, who holds a job's
lock and whether that run is still alive, and the run record: one run-log row, what one window of a command did (the
run log's schema is derived from its fields, `store.run_schema`; a command's result carries its window's record).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import getpass
import json
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass

from deltainc.pipeline.state.processes import COMMAND, Process
from deltainc.text_enum import TextEnum

__all__ = [
    "StatePaths",
    "JobState",
    "state_paths",
    "LockHolder",
    "Liveness",
    "owner_id",
    "judge",
    "locked_message",
    "Command",
    "RunStatus",
    "RunRecord",
    "run_document",
]

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
    before it takes the lock (`lease.acquire`)."""

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


class Command(TextEnum):
    """The commands that process windows, as the run log's `command` records them."""

    RUN = "run"
    RERUN = "rerun"
    BACKFILL = "backfill"


class RunStatus(TextEnum):
    """How a window ended, as the run log's `status` records it."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"  # also the status a window's row starts with: a run killed before its row is written
    CANCELLED = "cancelled"  # SIGTERM or Ctrl-C


@dataclass(frozen=True)
class RunRecord:
    """One row of the run log. The fields are its columns, in order: existing run logs have them, so a new
    field goes at the end, with a default."""

    job: str
    run_id: str
    command: str  # a Command
    window_start: str | None
    window_end: str | None
    status: str  # a RunStatus
    error: str | None
    started_at: dt.datetime  # naive UTC
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
    target_write: str | None = None  # how the window committed (a TargetWrite value: create, replace_where...), or None
    target_version: int | None = None
    target_files_added: int = 0
    target_files_removed: int = 0
    target_rows_copied: int = 0
    target_deletion_vectors: int = 0
    time_uom: str | None = None
    watermark: str | None = None  # set when this window moved the watermark
    watermark_unit: int | None = None
    releases_lock: bool = False  # the run's last row: the lock is free once it is committed
    took_over: str | None = None  # the dead run whose lock this run took, and why it was judged dead
    job_settings: str | None = None  # JSON: the settings the target is built with (window_row.built_with)
    rows_not_matched: int = 0  # full_outer: B rows that never matched (final)
    rows_b_waiting: int = 0  # full_outer: B rows still waiting for their A
    rows_too_late: int | None = None  # B rows that matched an A row only after it timed out; None: not looked for
    rows_provisional: int = 0  # asof: matches a nearer B row can still replace
    null_key_a: int | None = None  # the window's A rows with a NULL join key: they never match (None: join_cond)
    null_key_b: int | None = None  # the window's B rows with a NULL join key
    source_reads: str | None = None  # JSON, a feature job: {"features[name]": {"files": n, "bytes": n}, ...}
    # The run's phases in seconds (None in rows written before they were recorded): Spark's start (the command's
    # first window only), the join (read, join, count, check), the target's write, and the bookkeeping (the state
    # read, the lock, the counts of NULL RecDates, the too-late search's wait). `duration_s` is their sum.
    spark_start_s: float | None = None
    join_s: float | None = None
    write_s: float | None = None
    bookkeeping_s: float | None = None
    source_latest: str | None = None  # JSON: each source's latest RecDate label when the command began
    # JSON, a rerun: the jobs that read this job's target and the units each must re-run (state/downstream.py)
    downstream: str | None = None

    def rows(self, name: str) -> int:
        """The window's output rows of the JoinType called `name` (`JoinType.outcome`): its `rows_<name>` field."""
        return int(getattr(self, f"rows_{name}"))

    def document(self) -> dict[str, object]:
        """The row as JSON, as `run_document` shows it (its naive UTC start made explicit)."""
        values = dataclasses.asdict(self)
        values["started_at"] = self.started_at.replace(tzinfo=dt.timezone.utc)
        return run_document(values)


def run_document(row: Mapping[str, object]) -> dict[str, object]:
    """A run-log row as JSON: one name per fact (the watermark as its label only), the settings and the reads per
    source as objects,
    timestamps in ISO 8601 with their zone."""
    document: dict[str, object] = {}
    for name, value in row.items():
        if name == "watermark_unit":
            continue
        if name in ("job_settings", "source_reads", "source_latest", "downstream") and isinstance(value, str):
            value = json.loads(value)
        document[name] = value.isoformat() if isinstance(value, dt.datetime) else value
    return document
