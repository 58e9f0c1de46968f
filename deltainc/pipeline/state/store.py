"""The job state in Delta: the append-only run log (which carries the watermark), the per-job lock table, and the
commits to them with delta-rs (the `deltalake` package): no Spark, a few milliseconds each.

A run costs two state commits: one to take the lock, and one per window that appends its run-log row; that row
moves the watermark (its `watermark_unit`) and, on the run's last window, releases the lock (`releases_lock`). So
the watermark, the run log and the lock's release can never disagree. Spark still reads these tables like any other.

Why not Spark: delta-spark makes a commit on a local disk atomic only inside one JVM (its log store checks
`exists` and then renames, in a `synchronized` block), so two processes could both write version N + 1.
delta-rs writes a commit file with put-if-absent (the object store's create-only put; on a local disk a
hard link that fails when the file exists), so of two writers of version N + 1 exactly one wins, in any
number of processes or hosts. `swap` builds on that a compare and swap of a whole table: its commit goes
in only if no commit came after the version it read (no retry, no rebase), which is what the lock needs.
Appends to the run log commute, so they may be retried on top of other commits. deltalake is imported on
first use, and nothing here imports pyspark.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
import time
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from deltainc.errors import ConfigError
from deltainc.pipeline.delta.delta_log import column_types, job_rows, open_table, spark_row, table_uri
from deltainc.pipeline.delta.snapshot import log_required
from deltainc.pipeline.state.from_delta_log import read_runs_from_log, read_state_from_log
from deltainc.pipeline.state.model import JobState, RunRecord, StatePaths, state_paths
from deltainc.settings import storage_options

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake import DeltaTable

__all__ = [
    "StatePaths",
    "RunRecord",  # its home is model; the run log's rows are written and read here
    "JobState",
    "state_paths",
    "run_schema",
    "lock_schema",
    "ensure_state_tables",
    "read_state",
    "append_run",
    "read_runs",
    "SwapLost",
    "state_folder",
    "create_table",
    "swap",
    "retrying",
    "append",
    "instant_utc",
    "lock_rows",
    "delete_lock_rows",
    "remove_lock",
]

T = TypeVar("T")


class SwapLost(Exception):
    """Another commit went in after the version a compare and swap read: read again and decide again."""


def state_folder(location: str) -> str:
    """delta-rs's name for a state table (a local folder or an s3:// URI); a ConfigError naming `state_dir` for a
    location delta-rs is not given here."""
    with log_required("state_dir: the job's state must be in a local folder, a file: URI or S3 (s3:// or s3a://)"):
        return table_uri(location)


def _is_commit_race(exc: BaseException) -> bool:
    """Whether delta-rs refused a commit because another writer took its version first."""
    from deltalake.exceptions import CommitFailedError, DeltaError

    # A put-if-absent refused by the store comes as CommitFailedError, or as delta-rs' or the object store's
    # error naming the version that already exists; any other error is not a race and surfaces.
    if isinstance(exc, CommitFailedError):
        return True
    return isinstance(exc, (DeltaError, OSError)) and "already exists" in str(exc)


def create_table(location: str, schema: pa.Schema) -> None:
    """Create an empty Delta table at `location` unless one has committed there (two creators: one wins)."""
    from deltalake import DeltaTable

    folder = state_folder(location)
    if open_table(location) is not None:
        return
    try:
        DeltaTable.create(folder, schema, mode="ignore", storage_options=storage_options(folder))
    except Exception as exc:  # another process committed version 0 first: that table is as good
        if not _is_commit_race(exc) or open_table(location) is None:
            raise


def swap(location: str, change: Callable[[DeltaTable, Any], T]) -> T:
    """Run `change(table, commit_properties)` on the table as of now, committed only as the very next version.

    `change` must pass the properties to its one commit; SwapLost when any other commit went in first.
    """
    from deltalake import CommitProperties

    state_folder(location)
    table = open_table(location)
    if table is None:
        raise ConfigError(f"state_dir: no state table at {location}")
    try:
        return change(table, CommitProperties(max_commit_retries=0))
    except Exception as exc:
        if _is_commit_race(exc):
            raise SwapLost(str(exc)) from exc
        raise


def retrying(attempt: Callable[[], T], attempts: int = 40) -> T:
    """Call `attempt` until it does not lose a swap, with a short random pause after each loss."""
    for number in range(attempts):
        try:
            return attempt()
        except SwapLost:
            if number == attempts - 1:
                raise
            time.sleep(random.uniform(0, min(0.2, 0.005 * 2**number)))
    raise AssertionError("unreachable")


def append(location: str, rows: pa.Table) -> None:
    """Append `rows` in one commit; new columns are added to the table (an older run log gains them)."""
    from deltalake import write_deltalake

    uri = state_folder(location)
    write_deltalake(uri, rows, mode="append", schema_mode="merge", storage_options=storage_options(uri))


def instant_utc(value: dt.datetime) -> dt.datetime:
    """A timestamp to write: aware values as they are, naive ones read as pyspark reads them (local time)."""
    return value if value.tzinfo is not None else value.astimezone(dt.timezone.utc)


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


def lock_schema() -> pa.Schema:
    """The lock table's columns: one row per locked job; `processes` (JSON) names every process that can commit
    for the run, with its host, pid and start time (`processes.encode`)."""
    import pyarrow as pa

    stamp = pa.timestamp("us", tz="UTC")
    return pa.schema(
        [("job", pa.string()), ("run_id", pa.string()), ("acquired_at", stamp), ("owner", pa.string()),
         ("heartbeat_at", stamp), ("processes", pa.string())]
    )  # fmt: skip


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


def lock_rows(values: list[dict[str, Any]]) -> pa.Table:
    """Rows of the lock table (columns a row leaves out are null)."""
    import pyarrow as pa

    schema = lock_schema()
    columns = {name: [row.get(name) for row in values] for name in schema.names}
    return pa.table({name: pa.array(columns[name], schema.field(name).type) for name in schema.names})


def delete_lock_rows(locks: str, job: str, run_ids: list[str]) -> None:
    """Delete the lock rows of `job` held by `run_ids`, in one commit (retried when another commit wins)."""
    gone = lock_rows([{"job": job, "run_id": run_id} for run_id in run_ids])

    def change(table: DeltaTable, commit: Any) -> None:
        (
            table.merge(gone, "t.job = s.job AND t.run_id = s.run_id", source_alias="s", target_alias="t",
                        commit_properties=commit)
            .when_matched_delete()
            .execute()
        )  # fmt: skip

    retrying(lambda: swap(locks, change))


def remove_lock(locks: str, job: str, run_id: str | None = None) -> list[dict[str, object]]:
    """Delete the lock row(s) of `job` (only run `run_id`'s, when given); returns the rows removed."""
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
        delete_lock_rows(locks, job, [str(row["run_id"]) for row in held])
    return held
