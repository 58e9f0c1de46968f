"""What one commit did to the target, read from Delta's own operation metrics (no extra scan of the data)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from pyspark.sql import SparkSession

from deltainc.pipeline.delta.sql import latest_commit
from deltainc.pipeline.job.config import TableRef

__all__ = ["CommitResult", "NO_COMMIT", "last_commit", "user_metadata"]

_USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"


@contextmanager
def user_metadata(spark: SparkSession, metadata: dict[str, str]) -> Iterator[str]:
    """Every Delta commit inside the block records `metadata` (as JSON) in its commitInfo.userMetadata."""
    text = json.dumps(metadata, sort_keys=True)
    previous = spark.conf.get(_USER_METADATA, None)
    spark.conf.set(_USER_METADATA, text)
    try:
        yield text
    finally:
        if previous is None:
            spark.conf.unset(_USER_METADATA)
        else:
            spark.conf.set(_USER_METADATA, previous)


@dataclass(frozen=True)
class CommitResult:
    """Rows and files one target commit changed; `version` is None when nothing was committed.

    `rows_copied` counts rows that Delta physically rewrote into new files to change others. A file that
    only gets a deletion vector is not rewritten, so its kept rows are not counted (Delta's own
    numCopiedRows counts them all the same).
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
    operation = str(last["operation"])
    if operation == "MERGE":
        removed, copied = _metric(m, "numTargetFilesRemoved"), _metric(m, "numTargetRowsCopied")
        inserted, updated = _metric(m, "numTargetRowsInserted"), _metric(m, "numTargetRowsUpdated")
        deleted, added = _metric(m, "numTargetRowsDeleted"), _metric(m, "numTargetFilesAdded")
        vectors = _metric(m, "numTargetDeletionVectorsAdded")
    else:
        removed, copied = _metric(m, "numRemovedFiles"), _metric(m, "numCopiedRows")
        inserted, updated = _metric(m, "numOutputRows") - copied, 0
        deleted, added = _metric(m, "numDeletedRows"), _metric(m, "numFiles")
        vectors = _metric(m, "numDeletionVectorsAdded")
    return CommitResult(
        operation=operation,
        inserted=inserted,
        updated=updated,
        deleted=deleted,
        files_added=added,
        files_removed=removed,
        rows_copied=copied if removed else 0,
        deletion_vectors=vectors,
        version=int(last["version"]),
    )
