"""Commits to the state tables with delta-rs (the `deltalake` package): no Spark, a few milliseconds each.

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

import datetime as dt
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from deltainc.errors import ConfigError
from deltainc.pipeline.delta.delta_log import open_table, table_uri
from deltainc.pipeline.delta.snapshot import log_required
from deltainc.storage import storage_options

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake import DeltaTable

__all__ = ["SwapLost", "state_folder", "create_table", "swap", "retrying", "append", "instant_utc"]

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
