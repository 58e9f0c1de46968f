"""The job state in Delta: the append-only run log (which carries the watermark) and the per-job lock.

A run costs two state commits: one to take the lock, and one per window that appends its run-log row;
that row moves the watermark (its `watermark_unit`) and, on the run's last window, releases the lock
(`releases_lock`). So the watermark, the run log and the lock's release can never disagree. Every read and
commit here goes through delta-rs (`from_delta_log`, `commits`): milliseconds, no Spark, atomic across
processes. Spark still reads these tables like any other Delta table.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deltainc.errors import JobLockedError
from deltainc.pipeline.delta.delta_log import column_types, open_table
from deltainc.pipeline.delta.snapshot import log_required
from deltainc.pipeline.state.commits import append, create_table, instant_utc, retrying, state_folder, swap
from deltainc.pipeline.state.from_delta_log import read_runs_from_log, read_state_from_log
from deltainc.pipeline.state.lock import judge, lock_schema, locked_message, take_lock
from deltainc.pipeline.state.model import JobState, RunRecord, StatePaths, state_paths
from deltainc.pipeline.state.processes import stop

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake import DeltaTable

__all__ = [
    "StatePaths",
    "RunRecord",  # its home is model; the run log's rows are written and read here
    "JobState",
    "Acquired",
    "state_paths",
    "run_schema",
    "ensure_state_tables",
    "read_state",
    "read_watermark",
    "acquire",
    "append_run",
    "read_runs",
]

log = logging.getLogger("deltainc")


def run_schema() -> pa.Schema:
    """The run log's columns: RunRecord's fields, in order (their Python types as Arrow types)."""
    import pyarrow as pa

    kinds: dict[object, pa.DataType] = {
        str: pa.string(),
        int: pa.int64(),
        float: pa.float64(),
        bool: pa.bool_(),
        dt.datetime: pa.timestamp("us", tz="UTC"),
    }
    hints = typing.get_type_hints(RunRecord)
    fields = []
    for item in dataclasses.fields(RunRecord):
        hint = hints[item.name]
        kind = next(k for k in typing.get_args(hint) or (hint,) if k is not type(None))
        fields.append(pa.field(item.name, kinds[kind]))
    return pa.schema(fields)


def ensure_state_tables(paths: StatePaths) -> None:
    """Create the run-log and lock tables if they do not exist yet (and bring an older lock table up to date:
    `heartbeat_at` came in 0.2, `processes` later)."""
    create_table(paths.runs, run_schema())
    create_table(paths.locks, lock_schema())
    locks = open_table(paths.locks)
    if locks is None:
        return
    present = column_types(locks, paths.locks)
    for name, kind in (("heartbeat_at", "timestamp"), ("processes", "string")):
        if name not in present:
            _add_column(paths.locks, name, kind)


def _add_column(location: str, name: str, kind: str) -> None:
    """Add a nullable column to a state table, in one commit retried over other commits."""
    from deltalake.schema import Field, PrimitiveType

    def change(table: DeltaTable, commit: Any) -> None:
        table.alter.add_columns(Field(name, PrimitiveType(kind)), commit_properties=commit)

    retrying(lambda: swap(location, change))


_UNREADABLE = "state_dir: the job's state cannot be read"


def read_state(paths: StatePaths, job: str) -> JobState:
    """The job's watermark (the greatest one its run log records), who holds its lock, and the settings its
    target was built with. The lock row is read first, then the run log: a holder seen finished has no more
    rows to come, and the watermark is current as long as nobody takes the lock after this read (which the
    lock's compare and swap checks)."""
    state_folder(paths.root)
    with log_required(_UNREADABLE):
        return read_state_from_log(paths, job)


def read_watermark(paths: StatePaths, job: str) -> int | None:
    """The last unit fully processed by `job`, or None before its first run."""
    return read_state(paths, job).watermark


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


def _record_rows(record: RunRecord) -> pa.Table:
    import pyarrow as pa

    schema = run_schema()
    values = dataclasses.asdict(record)
    values["started_at"] = instant_utc(record.started_at)
    return pa.table({name: pa.array([values[name]], schema.field(name).type) for name in schema.names})


def append_run(paths: StatePaths, record: RunRecord) -> None:
    """Append one row to the run log: one blind append, which conflicts with nothing.

    A row with `watermark_unit` moves the job's watermark; the greatest one wins, so it never moves back.
    """
    create_table(paths.runs, run_schema())
    append(paths.runs, _record_rows(record))


def read_runs(paths: StatePaths, job: str, limit: int = 10) -> list[dict[str, object]]:
    """The latest runs of `job`, newest first, as dicts of pyspark's Python values."""
    state_folder(paths.root)
    with log_required(_UNREADABLE):
        return read_runs_from_log(paths, job, limit)
