"""The run record: one row of the run log, what one window of a command did. No Spark here.

It is the one description of a run: the run log's Delta schema (`RUN_SCHEMA`) is derived from its fields,
and a command's result (`results.WindowReport`) carries the record its window committed.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import typing
from collections.abc import Mapping
from dataclasses import dataclass

from deltainc.text_enum import TextEnum

__all__ = ["Command", "RunStatus", "RunRecord", "RUN_SCHEMA", "run_document"]


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
    target_write: str | None = None  # replace_where, merge (forward), forward_only_merge (re-run), or None
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
    job_settings: str | None = None  # JSON: the settings the target is built with (remembered_settings)
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
        if name in ("job_settings", "source_reads", "source_latest") and isinstance(value, str):
            value = json.loads(value)
        document[name] = value.isoformat() if isinstance(value, dt.datetime) else value
    return document


_SQL_TYPES: dict[object, str] = {
    str: "STRING",
    int: "BIGINT",
    float: "DOUBLE",
    bool: "BOOLEAN",
    dt.datetime: "TIMESTAMP",
}


def _sql_type(hint: object) -> str:
    """The Spark SQL type of a field's Python type; `X | None` is a nullable X (every column is nullable)."""
    kinds = [kind for kind in typing.get_args(hint) or (hint,) if kind is not type(None)]
    if len(kinds) != 1 or kinds[0] not in _SQL_TYPES:
        raise TypeError(f"run log: no Spark SQL type for a field of type {hint}")
    return _SQL_TYPES[kinds[0]]


def _schema(record: type) -> str:
    """A dataclass's fields as a Spark DDL schema string: `name TYPE, ...`, in field order."""
    hints = typing.get_type_hints(record)
    return ", ".join(f"{field.name} {_sql_type(hints[field.name])}" for field in dataclasses.fields(record))


RUN_SCHEMA = _schema(RunRecord)  # the run log's Delta schema
