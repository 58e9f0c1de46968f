"""What one commit did to the target, read from Delta's own operation metrics (no extra scan of the data)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from pyspark.sql import SparkSession

from deltainc.pipeline.delta.delta_log import LogUnreadable, local_folder
from deltainc.pipeline.delta.snapshot import log_else
from deltainc.pipeline.delta.sql import detail, latest_commit
from deltainc.pipeline.job.sections import TableRef
from deltainc.spark_compat import session_conf

__all__ = ["CommitResult", "NO_COMMIT", "deletion_vectors_added", "last_commit", "user_metadata"]

_USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"


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

    def from_log() -> list[str]:
        try:
            with open(os.path.join(local_folder(where), name), encoding="utf-8") as log_file:
                return list(log_file)
        except OSError as exc:  # a file this process cannot see (another machine's disk)
            raise LogUnreadable(str(exc)) from exc

    def with_spark(_why: Exception) -> list[str]:
        return [line[0] for line in spark.read.text(f"{where.rstrip('/')}/{name}").collect()]

    lines = log_else(f"the deletion vectors of version {version} of {location}", from_log, with_spark)
    return sum(1 for line in lines if line.strip() and (json.loads(line).get("add") or {}).get("deletionVector"))
