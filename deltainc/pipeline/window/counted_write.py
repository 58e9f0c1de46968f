"""A window counted and checked by its own write: one Spark query joins, checks and writes, where a window otherwise
runs its join once to count and check it and reads it again to write
(docs/design.md#one-pass-the-write-counts-and-checks-its-rows).

The identity check is a window count over the target identity whose filter raises when a group holds two rows, so
a duplicate fails the write's query before Delta commits anything; the named message is then built as the two-pass
check builds it. The counts by JoinType are observed on the rows as the write reads them (`DataFrame.observe`),
above the layout's shuffle, so each row is counted once.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F
from pyspark.sql.window import Window as Over

from deltainc.join.join_types import JoinType
from deltainc.join.output_layout import JOIN_TYPE, RESERVED_PREFIX
from deltainc.pipeline.job.join_plan import Identity
from deltainc.pipeline.target.duplicate_identity import WindowSources, ambiguous_identity
from deltainc.pipeline.target.merge import check_unambiguous
from deltainc.pipeline.target.write_mode import Written

__all__ = ["Counting", "written_counted"]

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
