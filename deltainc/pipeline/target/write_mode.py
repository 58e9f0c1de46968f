"""A write mode: how one window's output reaches the target, as one object (docs/design.md#run-modes), and what
the commit did to the target, read from Delta's own operation metrics (no extra scan of the data).

Each mode says what it writes (`write`), whether the window's run-log row moves the watermark, whether the
window is a forward one (right after the watermark), whether its rows become the target's files in the job's
layout, and whether it may replace the target's columns. The modes live in `forward_write`, `merge` (the
forward-only and the re-run) and `recompute_write` (the recompute and the rebuild); the plan names one.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from pyspark.sql import DataFrame, SparkSession

from deltainc.join.windows import Window
from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.sources import latest_commit
from deltainc.pipeline.delta.spark_counts import ScanStats
from deltainc.pipeline.delta.sql import detail
from deltainc.pipeline.delta.table import open_handle
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds.job_kind import Identity
from deltainc.pipeline.job.sections import TableRef
from deltainc.pipeline.target.found import TargetFound
from deltainc.spark_compat import session_conf
from deltainc.text_enum import TextEnum
from deltainc.time_units import TimeUnit

__all__ = [
    "TargetWrite",
    "WriteInputs",
    "Written",
    "Write",
    "WriteMode",
    "current_target",
    "Destination",
    "CommitResult",
    "NO_COMMIT",
    "deletion_vectors_added",
    "last_commit",
    "user_metadata",
]

log = logging.getLogger("deltainc")
_USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"


class TargetWrite(TextEnum):
    """How a window's commit changed the target, as the run log's `target_write` records it."""

    CREATE = "create"  # a job's first window: the target created with its rows, in one commit
    REPLACE_WHERE = "replace_where"  # the forward write's two slices, replaced (forward_write = "replace_where")
    MERGE = "merge"  # the same two slices, merged (forward_write = "merge")
    FORWARD_ONLY_MERGE = "forward_only_merge"
    RECOMPUTE = "recompute"
    REBUILD = "rebuild"


class WriteInputs(Protocol):
    """What a write needs of the prepared job (`PreparedJob` has it all)."""

    @property
    def spark(self) -> SparkSession: ...
    @property
    def job(self) -> JobConfig: ...
    @property
    def identity(self) -> Identity: ...
    @property
    def origins(self) -> Mapping[str, tuple[str, str]]: ...
    @property
    def partition_by(self) -> tuple[str, ...]: ...
    @property
    def rec(self) -> str: ...
    @property
    def uom(self) -> TimeUnit: ...
    @property
    def spine_reach(self) -> tuple[int, int, bool]: ...


@dataclass(frozen=True)
class Written:
    """What writing one window did to the target, and what of the target it read."""

    how: TargetWrite
    commit: CommitResult
    read: ScanStats
    too_late: int = 0  # matches of timed-out A rows a re-run kept out (corrections = "keep")


# A write of one window's output: given the target as the window found it (`found.TargetFound`).
Write = Callable[[WriteInputs, TargetFound, Window, DataFrame, dict[str, str]], Written]


@dataclass(frozen=True)
class WriteMode:
    """One way to write a window: the write itself and what the window run does around it."""

    name: str
    write: Write
    moves_watermark: bool  # the window's run-log row records its end as the watermark
    forward: bool  # the window starts right after the watermark (its too-late rows are appended, not replaced)
    lays_out: bool  # its rows become the target's files, in the job's layout (lay_out before the write)
    replaces_columns: bool = False  # the target takes the output's columns (no check against the target's)
    # Whether the job's write reads the output once, in one query, so that it can count and check the rows as it
    # writes them (`window.commit.Counting`); a MERGE reads its source more than once.
    single_pass: Callable[[JobConfig], bool] = lambda _job: False


def current_target(inputs: WriteInputs, found: TargetFound, output: DataFrame, metadata: dict[str, str]) -> Destination:
    """Where the window's commit goes, on the target as the window `found` it (its columns and partition columns
    as its Delta log records them); the output is checked against those columns (`TargetFound.new_columns`), and
    the sources' new columns, where the job allows them, are added."""
    spark, job = inputs.spark, inputs.job
    added = found.new_columns(output.schema, inputs.origins, job.target.schema_evolution)
    if added:
        log.warning("%s: adding the sources' new column(s) %s to the target %s", job.name, added, job.target.label)
    return Destination(spark, job.target, metadata, bool(added))


@dataclass(frozen=True)
class Destination:
    """Where a write commits and what the commit carries: the table, its userMetadata (job, run, window),
    and whether the output's new columns are added to the table (Delta's schema evolution)."""

    spark: SparkSession
    ref: TableRef
    user_metadata: dict[str, str]
    add_columns: bool = False


@contextmanager
def user_metadata(spark: SparkSession, metadata: dict[str, str]) -> Iterator[str]:
    """Every Delta commit inside the block records `metadata` (as JSON) in its commitInfo.userMetadata."""
    text = json.dumps(metadata, sort_keys=True)
    with session_conf(spark, _USER_METADATA, text):
        yield text


@dataclass(frozen=True)
class CommitResult:
    """Rows and files one target commit changed, as Delta's operation metrics of the commit give them;
    `version` is None when nothing was committed.

    `rows_copied` is Delta's numCopiedRows (numTargetRowsCopied for a MERGE); `deletion_vectors` the deletion
    vectors the commit added: Delta's metric for a MERGE, and for a WRITE (whose metrics lack it) the files the
    commit's log entry adds with a deletion vector.
    """

    operation: str | None
    inserted: int
    updated: int
    deleted: int
    files_added: int
    files_removed: int
    rows_copied: int
    deletion_vectors: int
    version: int | None


NO_COMMIT = CommitResult(None, 0, 0, 0, 0, 0, 0, 0, None)


def _metric(metrics: dict[str, str], name: str) -> int:
    return int(metrics.get(name) or 0)


def last_commit(spark: SparkSession, ref: TableRef, operations: tuple[str, ...] = ("MERGE", "WRITE")) -> CommitResult:
    """The metrics of the table's latest commit, if it is one of `operations` (else NO_COMMIT).

    Delta names the facts differently for a MERGE and for a WRITE (an overwrite with replaceWhere), and a
    WRITE counts the rows it copied among its output rows; both are brought to one shape here.
    """
    last = latest_commit(spark, ref)
    if last is None or last["operation"] not in operations:
        return NO_COMMIT
    m = dict(last["operationMetrics"] or {})
    operation, version = str(last["operation"]), int(last["version"])
    if operation == "MERGE":
        removed, copied = _metric(m, "numTargetFilesRemoved"), _metric(m, "numTargetRowsCopied")
        inserted, updated = _metric(m, "numTargetRowsInserted"), _metric(m, "numTargetRowsUpdated")
        deleted, added = _metric(m, "numTargetRowsDeleted"), _metric(m, "numTargetFilesAdded")
        vectors = _metric(m, "numTargetDeletionVectorsAdded")
    else:
        removed, copied = _metric(m, "numRemovedFiles"), _metric(m, "numCopiedRows")
        inserted, updated = _metric(m, "numOutputRows") - copied, 0
        deleted, added = _metric(m, "numDeletedRows"), _metric(m, "numFiles")
        if "numDeletionVectorsAdded" in m:
            vectors = _metric(m, "numDeletionVectorsAdded")
        else:  # a WRITE's metrics lack it: its log entry says
            vectors = deletion_vectors_added(spark, ref, version) if deleted else 0
    return CommitResult(
        operation=operation,
        inserted=inserted,
        updated=updated,
        deleted=deleted,
        files_added=added,
        files_removed=removed,
        rows_copied=copied,
        deletion_vectors=vectors,
        version=version,
    )


def deletion_vectors_added(spark: SparkSession, ref: TableRef, version: int) -> int:
    """How many deletion vectors commit `version` of the table added: its `add` actions that carry one (a file
    that lost rows is re-added with its new vector). Read from the commit's log file: directly where the table
    is local, else with Spark."""
    name = f"_delta_log/{version:020d}.json"
    location = ref.path
    if location is None:
        found = detail(spark, ref)
        location = None if found is None else str(found["location"])
    if location is None:
        return 0
    where = location

    def from_log(folder: str) -> list[str]:
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as log_file:
                return list(log_file)
        except OSError as exc:  # a file this process cannot see (another machine's disk)
            raise LogUnreadable(str(exc)) from exc

    def with_spark(_why: Exception) -> list[str]:
        return [line[0] for line in spark.read.text(f"{where.rstrip('/')}/{name}").collect()]

    table = open_handle(TableRef(path=location), "target", spark)
    what = f"the deletion vectors of version {version} of {location}"
    lines = table.answer(what, from_log, with_spark, missing_ok=True, on_disk=True)
    return sum(1 for line in lines if line.strip() and (json.loads(line).get("add") or {}).get("deletionVector"))
