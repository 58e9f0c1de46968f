"""Which Delta reader features the job's tables carry, and dropping the one their writes never use
(docs/design.md#the-layout-open-rows-in-partitions-of-their-own).

Deletion vectors are a reader feature: delta-rs' pyarrow path (`deltalake.DeltaTable(path).to_pyarrow_table()`, on
which pandas and DuckDB read) refuses a table whose protocol names `deletionVectors`, even with the property
`delta.enableDeletionVectors` turned off. A target gets them only where its forward writes delete rows from files
that keep other rows (the earlier layout, without `IsFinal`); the current layout and the too-late rows' table
replace whole files. `deltainc migrate` drops the feature from a table an earlier release created with it.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import SparkSession

from deltainc.errors import DeltaincError
from deltainc.pipeline.delta.sources import latest_commit, table_exists, table_shape
from deltainc.pipeline.delta.sql import table_name
from deltainc.pipeline.job.sections import TableRef, TargetConfig
from deltainc.pipeline.target.layout import DELETION_VECTORS_FEATURE, holds_open_rows_apart, layout_of
from deltainc.pipeline.target.write_mode import user_metadata

__all__ = [
    "wants_deletion_vectors",
    "carries_deletion_vectors",
    "unused_deletion_vectors",
    "drop_deletion_vectors",
    "dropped_message",
]


def wants_deletion_vectors(asked: bool | None, partition_by: Sequence[str]) -> bool:
    """Whether a target partitioned by `partition_by` is created with deletion vectors: `asked` when the job sets
    `[target] deletion_vectors`, else only where its forward writes delete rows from files that keep other rows
    (the earlier layout, without `IsFinal`); a target that holds its open rows apart replaces whole files.

    >>> wants_deletion_vectors(None, ["RecDate", "IsFinal"]), wants_deletion_vectors(None, ["RecDate"])
    (False, True)
    """
    return (not holds_open_rows_apart(partition_by)) if asked is None else asked


def carries_deletion_vectors(spark: SparkSession, ref: TableRef, role: str) -> bool:
    """Whether the existing table's protocol names the deletion-vector feature (from its log for a path).

    Example: `carries_deletion_vectors(spark, job.target, "target")`.
    """
    return layout_of(table_shape(spark, ref, role)).carries_deletion_vectors


def unused_deletion_vectors(spark: SparkSession, target: TargetConfig, after: Sequence[str]) -> list[TableRef]:
    """The job's tables that carry the deletion-vector feature although their writes never use it: the target
    once in the layout `after` when that holds its open rows apart (unless `[target] deletion_vectors = true`),
    and the too-late rows' table (a window replaces whole days of it).

    Example: `unused_deletion_vectors(spark, job.target, ("RecDate", "IsFinal"))` gives `[job.target]` for a
    target an earlier release created.
    """
    found: list[TableRef] = []
    asked_for = target.deletion_vectors is True or not holds_open_rows_apart(after)
    if not asked_for and carries_deletion_vectors(spark, target, "target"):
        found.append(target)
    late = target.late_rows_ref
    if late is not None and table_exists(spark, late) and carries_deletion_vectors(spark, late, "target.late_rows"):
        found.append(late)
    return found


def drop_deletion_vectors(spark: SparkSession, ref: TableRef, metadata: dict[str, str]) -> int:
    """Drop the deletion-vector feature from the table (`ALTER TABLE ... DROP FEATURE deletionVectors`, its
    commits recording `metadata`), and give the table's version after it; the caller holds the job's lock (the
    command conflicts with any concurrent write).

    On Delta 4.0+ the drop is immediate and keeps the history: Delta purges the table's deletion vectors first
    (rewriting the files that have one), commits checkpoints that readers of the new protocol start from,
    downgrades the protocol to reader version 1 and adds the writer feature `checkpointProtection`. Raises
    DeltaincError, naming the table and the command to run by hand, when Delta refuses (a Delta before 4.0
    drops a reader feature only in two steps, 24 hours apart, the second with TRUNCATE HISTORY).

    Example: `drop_deletion_vectors(spark, job.target, {"job": "trx", "command": "migrate"})`.
    """
    statement = f"ALTER TABLE {table_name(ref)} DROP FEATURE {DELETION_VECTORS_FEATURE}"
    try:
        with user_metadata(spark, metadata):
            spark.sql(statement).collect()
    except Exception as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DeltaincError(
            f"{ref.label}: Delta refused to drop the {DELETION_VECTORS_FEATURE} feature: {reason}. Its rows are "
            f"unchanged; on Delta 4.0+ `{statement}` drops it at once, on earlier versions run it, wait 24 hours, "
            "then run it again with TRUNCATE HISTORY"
        ) from exc
    latest = latest_commit(spark, ref)
    return int(latest["version"]) if latest is not None else 0


def dropped_message(job: str, dropped: Sequence[tuple[str, int]]) -> str:
    """What migrate says of the feature: the tables it dropped it from, as (label, version after the drop)."""
    if not dropped:
        return f"{job}: no table of the job carries a Delta reader feature its writes do not use"
    done = "; ".join(f"{label} (version {version})" for label, version in dropped)
    return (
        f"{job}: dropped the Delta reader feature {DELETION_VECTORS_FEATURE}, which their writes never use, from "
        f"{done}: delta-rs readers (deltalake's to_pyarrow_table, pandas, polars, DuckDB) read them now; their "
        "history stays, and writers need Delta 4.0+ (the protocol names checkpointProtection)"
    )
