"""The writes of one window (docs/design.md#the-two-slices-and-the-forward-write): the window's output checked
against the target, laid out as its write mode wants it, and written by that mode in one commit at most (its
too-late B rows: `too_late_writes`). The modes are objects, one per module under `target/`.

Where it can, the write counts and checks the window itself (`Counting`, one Spark query joins, checks and writes:
docs/design.md#one-pass-the-write-counts-and-checks-its-rows). The identity check is a window count over the
target identity whose filter raises when a group holds two rows, so a duplicate fails the write's query before
Delta commits anything; the named message is then built as the two-pass check builds it. The counts by JoinType are
observed on the rows as the write reads them (`DataFrame.observe`), above the layout's shuffle: each counted once.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F
from pyspark.sql.window import Window as Over

from deltainc.errors import ConfigError
from deltainc.join.options import JoinType
from deltainc.join.output_layout import JOIN_TYPE, RESERVED_PREFIX
from deltainc.join.windows import Window
from deltainc.pipeline.delta.sources import table_shape
from deltainc.pipeline.delta.sql import table_exists
from deltainc.pipeline.job.join_plan import Identity
from deltainc.pipeline.prepared_job import PreparedJob
from deltainc.pipeline.target.duplicate_identity import WindowSources, ambiguous_identity
from deltainc.pipeline.target.layout import ensure_target, holds_open_rows_apart, lay_out, with_is_final
from deltainc.pipeline.target.merge import check_unambiguous
from deltainc.pipeline.target.schema import new_columns
from deltainc.pipeline.target.write_mode import WriteMode, Written
from deltainc.pipeline.window.too_late_writes import create_late_rows_table

__all__ = ["Counting", "fitted", "partitioning", "shaped", "write_window", "written_counted"]

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


def fitted(prepared: PreparedJob, output: DataFrame, scans: Mapping[str, DataFrame]) -> DataFrame:
    """The window's output checked against the target's columns before the join runs, from its schema alone: a
    dropped or retyped column is refused at once. A new source column the job does not add (schema_evolution
    "none") is refused only when the window's reads (`scans`, A's and B's) hold a value of it: a window from
    before the column appeared is written without it, so a job catching up runs to the day before the change."""
    spark, job, origins = prepared.spark, prepared.job, prepared.origins
    if not table_exists(spark, job.target):
        return output
    target = table_shape(spark, job.target, "target").schema  # from the Delta log: no Spark read
    added = new_columns(target, output.schema, origins, job.target.label, "add_columns")
    if not added or job.target.schema_evolution == "add_columns":
        return output

    def read(column: str) -> bool:
        if column not in origins:
            return True
        role, source = origins[column]
        return bool(scans[role].where(F.col(f"`{source}`").isNotNull()).limit(1).count())

    unread = [column for column in added if not read(column)]
    new_columns(target, output.drop(*unread).schema, origins, job.target.label, "none")  # refuses what is read
    return output.drop(*unread)


def partitioning(prepared: PreparedJob, mode: WriteMode) -> tuple[str, ...]:
    """The partition columns the window's rows are written under: the existing target's own, read from its log
    (a target created by an earlier version keeps its layout); the job's for a new target and for a rebuild,
    which replaces the table's layout with its rows."""
    if mode.replaces_columns:
        return prepared.partition_by
    try:
        return table_shape(prepared.spark, prepared.job.target, "target").partition_by
    except ConfigError:  # no target yet: the first write creates it in the job's layout
        return prepared.partition_by


def shaped(prepared: PreparedJob, mode: WriteMode, output: DataFrame, counting: Counting | None = None) -> DataFrame:
    """The window's output as its write wants it: with `IsFinal` where the target holds its open rows apart, and
    laid out (`lay_out`) where its rows become the target's files; checked and counted by the write's own query
    with a `counting` (below the layout's shuffle and above it)."""
    partition_by = partitioning(prepared, mode)
    if counting is not None:
        output = counting.check(output)
    if holds_open_rows_apart(partition_by):
        output = with_is_final(output)
    if mode.lays_out:
        output = lay_out(output, partition_by, prepared.rec)
    return output if counting is None else counting.observe(output)


def write_window(
    prepared: PreparedJob, window: Window, mode: WriteMode, output: DataFrame, metadata: dict[str, str]
) -> Written:
    """Write the window's output to the target (created on the job's first write, with its too-late rows' table
    when the job keeps them), in one commit at most."""
    made = prepared.job.target
    if ensure_target(
        prepared.spark, made, output.schema, prepared.partition_by, made.deletion_vectors, made.change_data_feed
    ):
        create_late_rows_table(prepared, window)
    return mode.write(prepared, window, output, metadata)
