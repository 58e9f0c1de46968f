"""One window's commit to the target (docs/design.md#the-two-slices-and-the-forward-write).

The window's output is checked against the target, laid out as its write mode wants it (one module per mode under
`target/`) and written in one commit at most. Where it can, the write counts and checks the window itself
(`Counting`: docs/design.md#one-pass-the-write-counts-and-checks-its-rows): a window count over the target identity
whose filter raises when a group holds two rows fails the write's query before Delta commits anything (the named
message is then built as the two-pass check builds it); the counts by JoinType are observed above the layout's
shuffle, each row counted once. A stop during the commit is `stop.py`'s.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F
from pyspark.sql.window import Window as Over

from deltainc.join.options import JoinType
from deltainc.join.output_layout import JOIN_TYPE, RESERVED_PREFIX
from deltainc.join.windows import Window
from deltainc.pipeline.controller.prepared_job import PreparedJob
from deltainc.pipeline.controller.too_late_search import create_late_rows_table
from deltainc.pipeline.delta.spark_counts import ScanStats
from deltainc.pipeline.job.kinds.job_kind import Identity
from deltainc.pipeline.target.duplicate_identity import WindowSources, ambiguous_identity
from deltainc.pipeline.target.found import TargetFound
from deltainc.pipeline.target.layout import create_table, holds_open_rows_apart, lay_out, with_is_final
from deltainc.pipeline.target.merge import check_unambiguous
from deltainc.pipeline.target.reader_features import wants_deletion_vectors
from deltainc.pipeline.target.write_mode import TargetWrite, WriteMode, Written, last_commit

__all__ = [
    "Counting",
    "fitted",
    "partitioning",
    "shaped",
    "write_window",
    "written_counted",
]


# A table's creation as Delta names it: a path's first write, a catalog table's saveAsTable.
_CREATES = ("WRITE", "CREATE TABLE AS SELECT")
# Raised inside the write's query when two rows share one identity; recognised here by this text.
REFUSED = "deltainc: two output rows share one target identity"
_GROUP = f"{RESERVED_PREFIX}identity_rows"
_names = (f"observed_{n}" for n in itertools.count())  # an Observation's name is unique in its session


@dataclass(frozen=True)
class Counting:
    """The counts and identity check one window's write makes as it writes: `check` goes below the layout's
    shuffle, `observe` above it; `counts` is read once the write is done."""

    identity: Identity
    observation: Observation
    sources: WindowSources | None = None  # where a duplicate identity is looked for, for the message

    @staticmethod
    def of(identity: Identity, sources: WindowSources | None = None) -> Counting:
        """A fresh counting for one window's write."""
        return Counting(identity, Observation(next(_names)), sources)

    def check(self, output: DataFrame) -> DataFrame:
        """`output`, which fails the query that reads it if two of its rows share the target identity."""
        group = Over.partitionBy(*[F.col(f"`{c}`") for c in self.identity.columns])
        rows = output.withColumn(_GROUP, F.count(F.lit(1)).over(group))
        unique = F.when(F.col(_GROUP) > 1, F.raise_error(F.lit(REFUSED))).otherwise(F.lit(True))
        return rows.where(unique).drop(_GROUP)

    def observe(self, output: DataFrame) -> DataFrame:
        """`output`, counting its rows by JoinType as a query reads it."""
        counted = [F.count(F.when(F.col(JOIN_TYPE) == int(code), 1)).alias(str(int(code))) for code in JoinType]
        return output.observe(self.observation, *counted)

    def counts(self) -> dict[int, int]:
        """The rows the write wrote by JoinType (those it has), e.g. `{1: 120, 4: 3}`."""
        return {int(code): int(n) for code, n in self.observation.get.items() if n}


def written_counted(counting: Counting | None, write: Callable[[], Written], unchecked: DataFrame) -> Written:
    """Run `write`; when its query refused a duplicate identity (`counting`'s check), raise the AmbiguousRowsError
    that names the keys, a sample and the source that holds the duplicate, found again in `unchecked` (the
    window's output before the check). Nothing was committed then."""
    try:
        return write()
    except Exception as exc:
        if counting is None or REFUSED not in str(exc):
            raise
        check_unambiguous(unchecked, counting.identity, counting.sources)
        raise ambiguous_identity(counting.identity, [], counting.sources) from exc


def fitted(prepared: PreparedJob, found: TargetFound, output: DataFrame, scans: Mapping[str, DataFrame]) -> DataFrame:
    """The window's output checked against the target's columns (as the window `found` it) before the join runs,
    from its schema alone: a dropped or retyped column is refused at once. A new source column the job does not
    add (schema_evolution "none") is refused only when the window's reads (`scans`, A's and B's) hold a value of
    it: a window from before the column appeared is written without it, so a job catching up runs to the day
    before the change."""
    job, origins = prepared.job, prepared.origins
    if not found.exists:
        return output
    added = found.new_columns(output.schema, origins, "add_columns")  # from the Delta log: no Spark read
    if not added or job.target.schema_evolution == "add_columns":
        return output

    def read(column: str) -> bool:
        if column not in origins:
            return True
        role, source = origins[column]
        return bool(scans[role].where(F.col(f"`{source}`").isNotNull()).limit(1).count())

    unread = [column for column in added if not read(column)]
    found.new_columns(output.drop(*unread).schema, origins, "none")  # refuses what is read
    return output.drop(*unread)


def partitioning(prepared: PreparedJob, mode: WriteMode, found: TargetFound) -> tuple[str, ...]:
    """The partition columns the window's rows are written under: the existing target's own, as the window
    `found` them (a target created by an earlier version keeps its layout); the job's for a new target and for a
    rebuild, which replaces the table's layout with its rows."""
    return prepared.partition_by if mode.replaces_columns else found.partition_by


def shaped(
    prepared: PreparedJob, mode: WriteMode, found: TargetFound, output: DataFrame, counting: Counting | None = None
) -> DataFrame:
    """The window's output as its write wants it: with `IsFinal` where the target holds its open rows apart, and
    laid out (`lay_out`) where its rows become the target's files; checked and counted by the write's own query
    with a `counting` (below the layout's shuffle and above it)."""
    partition_by = partitioning(prepared, mode, found)
    if counting is not None:
        output = counting.check(output)
    if holds_open_rows_apart(partition_by):  # the target's layout as found, or a rebuild's new one
        output = with_is_final(output)
    if mode.lays_out:
        output = lay_out(output, partition_by, prepared.rec)
    return output if counting is None else counting.observe(output)


def write_window(
    prepared: PreparedJob,
    found: TargetFound,
    window: Window,
    mode: WriteMode,
    output: DataFrame,
    metadata: dict[str, str],
) -> Written:
    """Write the window's output to the target (as the window `found` it) in one commit at most. The job's first
    write creates the target with the window's rows in that one commit (and then its too-late rows' table, empty,
    when the job keeps them: a first window its own query refuses creates neither), so a new job's first window
    reads nothing of a target, whatever the mode; with deletion vectors only where its layout's writes use them
    (`wants_deletion_vectors`)."""
    spark, made = prepared.spark, prepared.job.target
    if found.exists:
        return mode.write(prepared, found, window, output, metadata)
    text = json.dumps(metadata, sort_keys=True)
    vectors = wants_deletion_vectors(made.deletion_vectors, prepared.partition_by)
    create_table(output, made, prepared.partition_by, vectors, made.change_data_feed, text)
    commit = last_commit(spark, made, _CREATES)
    created = Written(TargetWrite.CREATE, commit, ScanStats(0, 0))
    create_late_rows_table(prepared, window)
    return created
