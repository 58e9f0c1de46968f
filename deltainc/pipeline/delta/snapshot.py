"""One look at each Delta table per command: its log opened once, and what the readers ask of it kept with it.

A command (run, rerun, backfill, status, validate, ...) runs inside `one_look()`. There `look(location)` opens a
table's log with delta-rs the first time and hands the same `Snapshot` back after, until `retake(location)` after a
commit to that table (the window's write, the too-late rows). Outside a command every `look` opens the log anew, so
a library caller's reads see the latest commit. Whether the log or Spark answers a question of a table is decided
by the table's handle (`delta/table.py`), built on these snapshots.

No pyspark here; deltalake and pyarrow are imported on first use.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from deltainc.errors import ConfigError
from deltainc.pipeline.delta.delta_log import LogUnreadable, column_types, open_table, reading, table_uri

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake import DeltaTable

__all__ = ["Snapshot", "look", "retake", "one_look", "counting_opens", "log_required"]

log = logging.getLogger(__name__)
T = TypeVar("T")

# Reader features whose tables the log answers exactly (deletion vectors are checked file by file).
_WITHOUT_LOG = "%s read without the Delta log: %s"
_LOG_READER_FEATURES = {"deletionVectors", "timestampNtz", "v2Checkpoint", "vacuumProtocolCheck"}


@dataclass(frozen=True, eq=False)
class Snapshot:
    """A Delta table's log as one command saw it: the table (None when none has committed at `location`) and,
    computed on first use and kept, its column types, partition columns, properties, add actions and whether
    deletion vectors are in use."""

    location: str
    found: DeltaTable | None

    @property
    def table(self) -> DeltaTable:
        """The table; LogUnreadable when none is at `location` (Spark says so, in its words)."""
        if self.found is None:
            raise LogUnreadable(f"no Delta table at {self.location}")
        return self.found

    @cached_property
    def types(self) -> dict[str, str]:
        """Each top-level column's Delta type name, in schema order."""
        return column_types(self.table, self.location)

    @cached_property
    def schema_json(self) -> str:
        """The schema as Delta's log holds it: the JSON of Spark's StructType."""
        with reading(self.location):
            return str(self.table.schema().to_json())

    @cached_property
    def partition_columns(self) -> tuple[str, ...]:
        with reading(self.location):
            return tuple(self.table.metadata().partition_columns or ())

    @cached_property
    def properties(self) -> dict[str, str]:
        """The table's properties (`delta.enableDeletionVectors`, ...), values lower-cased."""
        with reading(self.location):
            configuration = self.table.metadata().configuration or {}
        return {key: str(value).lower() for key, value in configuration.items()}

    @cached_property
    def features(self) -> tuple[str, ...]:
        """The table features the protocol names, reader's then writer's (`deletionVectors`, ...); () for a table
        of protocol versions before features."""
        with reading(self.location):
            protocol = self.table.protocol()
        named = [*(protocol.reader_features or ()), *(protocol.writer_features or ())]
        return tuple(dict.fromkeys(named))

    @cached_property
    def actions(self) -> pa.Table:
        """The live files' add actions, flattened (`path`, `size_bytes`, `num_records`, `partition.X`, `max.X`, ...)."""
        with reading(self.location):
            return self.table.get_add_actions(flatten=True)

    @cached_property
    def deletion_vectors(self) -> bool:
        """Whether a live file has deleted rows (a statistic may then be a deleted row's)."""
        with reading(self.location):
            if "deletionVectors" not in set(self.table.protocol().reader_features or ()):
                return False
            return bool(self.table.deletion_vectors().read_all().num_rows > 0)

    @cached_property
    def _statistics_exact(self) -> str | None:
        """Why the add actions may not mean what they say (a reader feature, column mapping); None when they do."""
        with reading(self.location):
            protocol = self.table.protocol()
            unknown = set(protocol.reader_features or ()) - _LOG_READER_FEATURES
            if protocol.min_reader_version > 3 or unknown - {"columnMapping"}:
                return f"{self.location} needs reader features {sorted(unknown)} (v{protocol.min_reader_version})"
        mode = self.properties.get("delta.columnMapping.mode", "none")
        return None if mode == "none" else f"{self.location} maps its column names ({mode}): its statistics differ"

    def statistics(self) -> Snapshot:
        """This snapshot, its add actions' statistics and partition values known to mean what Spark reads;
        LogUnreadable when no table is there or its protocol may change that."""
        if self.found is None:
            raise LogUnreadable(f"no Delta table at {self.location} (Spark says so)")
        why = self._statistics_exact
        if why is not None:
            raise LogUnreadable(why)
        return self

    def history(self, limit: int) -> list[dict[str, Any]]:
        """The table's latest `limit` commits, newest first (version, operation, operationMetrics, ...); [] when
        none is there."""
        if self.found is None:
            return []
        with reading(self.location):
            return list(self.found.history(limit))

    def column(self, name: str) -> str:
        """The top-level column `name` names, matched as Spark does by default: ignoring case."""
        matches = [column for column in self.types if column.lower() == name.lower()]
        if len(matches) != 1 or "." in matches[0]:
            raise LogUnreadable(f"{self.location}: no single top-level column {name!r} (Spark says why)")
        return matches[0]

    def values(self, name: str) -> list[Any]:
        """One add-action column's values (None for each file where the log has no such column)."""
        actions = self.actions
        if name not in set(actions.column_names):
            return [None] * actions.num_rows
        return list(actions.column(name).to_pylist())


@dataclass
class _Looks:
    """The snapshots of the command under way (none outside one) and the hooks told of each log opened."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    depth: int = 0  # nested one_look() blocks: the same command
    taken: dict[str, Snapshot] = field(default_factory=dict)
    hooks: list[Callable[[str], None]] = field(default_factory=list)


_LOOKS = _Looks()


def look(location: str) -> Snapshot:
    """The snapshot of the Delta table at `location` (a local folder or S3): taken once per command.

    LogUnreadable when delta-rs cannot name the table (a catalog name, another file system). A table not there
    yet is not kept (a later look sees it once created), and opens no log.

    >>> look("/data/ledger").partition_columns  # doctest: +SKIP
    ('RecDate',)
    """
    key = table_uri(location)
    with _LOOKS.lock:
        kept = _LOOKS.taken.get(key)
    if kept is not None:
        return kept
    found = open_table(location)
    snapshot = Snapshot(location, found)
    if found is None:
        return snapshot
    with _LOOKS.lock:
        for hook in _LOOKS.hooks:
            hook(key)
        if _LOOKS.depth:
            snapshot = _LOOKS.taken.setdefault(key, snapshot)
    return snapshot


def retake(location: str) -> None:
    """Forget the snapshot of `location` after a commit to it: the next `look` reads its log again."""
    try:
        key = table_uri(location)
    except LogUnreadable:
        return
    with _LOOKS.lock:
        _LOOKS.taken.pop(key, None)


@contextmanager
def one_look() -> Iterator[None]:
    """The block is one command: each table's log is opened once in it (nested blocks are the same command)."""
    with _LOOKS.lock:
        _LOOKS.depth += 1
    try:
        yield
    finally:
        with _LOOKS.lock:
            _LOOKS.depth -= 1
            if not _LOOKS.depth:
                _LOOKS.taken.clear()


@contextmanager
def counting_opens() -> Iterator[collections.Counter[str]]:
    """Count, by table, the Delta logs opened in the block (for tests: a command opens each table's log once).

    >>> with counting_opens() as opened:  # doctest: +SKIP
    ...     run("bank_trx")
    >>> max(opened.values())  # doctest: +SKIP
    1
    """
    opened: collections.Counter[str] = collections.Counter()

    def count(key: str) -> None:
        opened[key] += 1

    with _LOOKS.lock:
        _LOOKS.hooks.append(count)
    try:
        yield opened
    finally:
        with _LOOKS.lock:
            _LOOKS.hooks.remove(count)


@contextmanager
def log_required(message: str) -> Iterator[None]:
    """Inside the block the Delta log must answer (the state tables, which only delta-rs reads): LogUnreadable
    becomes a ConfigError, `message` then why.

    >>> with log_required("state_dir: the job's state cannot be read"):  # doctest: +SKIP
    ...     read_state_from_log(paths, "bank_trx")
    """
    try:
        yield
    except LogUnreadable as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]  # delta-rs may add a backtrace
        raise ConfigError(f"{message}: {first}") from exc
