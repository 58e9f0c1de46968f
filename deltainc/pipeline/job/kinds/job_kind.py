"""The one interface of the kinds of job (docs/design.md#where-the-code-is): a two-source job (`two_source`) and a
feature job (`feature_job`) answer the same questions, so no caller asks which kind a job is.

A kind is chosen once from the job file (`kind_of`); it says, from the job file alone (no Spark, no pyspark
import: `deltainc status` answers from the Delta logs), how far back a window's spine rows reach, what each source
is read in, the settings the target is built with and how to describe the joins. From the sources' schemas (the
Delta logs' or Spark's) it checks the job once (`plan`), and the plan joined to the sources' rows (`prepare`) joins
any window without checking again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql import types as T

    from deltainc.join.join_spec import JoinSpec
    from deltainc.join.options import How
    from deltainc.pipeline.job.job_config import JobConfig

__all__ = [
    "Identity",
    "WindowRows",
    "whole_tables",
    "window_rows_of",
    "SpineReach",
    "SourceScan",
    "WindowJoin",
    "LateSearch",
    "PreparedJoin",
    "JoinPlan",
    "JobKind",
]


@dataclass(frozen=True)
class Identity:
    """Output column names that identify a target row."""

    a_keys: tuple[str, ...]
    a_rec: str
    b_keys: tuple[str, ...]
    b_rec: str | None  # None when the output has no B columns (left_anti)
    key_names: tuple[str, ...] = ()  # target.keys then target.b_keys as the job file names them (a_keys, b_keys)
    b_setting: tuple[str, str] = ("target.b_keys", "source_b")  # the setting naming b_keys, and their source
    fan_out: str | None = None  # a feature job: which sources may match several rows of a spine row, for messages

    def setting_of(self, column: str) -> tuple[str, str, str]:
        """The job-file setting, source and column name behind the output key column `column`."""
        names = dict(zip([*self.a_keys, *self.b_keys], self.key_names, strict=False))
        side = ("target.keys", "source_a") if column in self.a_keys else self.b_setting
        return *side, names.get(column, column)

    @property
    def a_columns(self) -> list[str]:
        return [*self.a_keys, self.a_rec]

    @property
    def b_columns(self) -> list[str]:
        return [*self.b_keys, *([self.b_rec] if self.b_rec else [])]

    @property
    def columns(self) -> list[str]:
        return [*self.a_columns, *self.b_columns]


# A source's rows of a window's units, by role and units [first, last]: its Delta files read directly where the
# log names them (deltainc.pipeline.delta.sources.window_rows), or None: the window reads the whole table, pruned.
WindowRows = Callable[[str, int, int], "DataFrame | None"]


def whole_tables(role: str, first: int, last: int) -> DataFrame | None:
    """The `WindowRows` that reads every window from the whole Delta tables (pruned by Spark)."""
    return None


def window_rows_of(rows: WindowRows, frames: Mapping[str, DataFrame], role: str, first: int, last: int) -> DataFrame:
    """`role`'s rows of units [first, last]: read apart where `rows` reads them, else its whole table (Spark prunes
    it by the window's filter)."""
    read = rows(role, first, last)
    return frames[role] if read is None else read


class SpineReach(NamedTuple):
    """How far a window's A (spine) rows reach: look_back_time and max_waiting_time as they bound the A rows a
    window can change, and whether unmatched B rows wait for an A row (`read_bounds(window, *reach)`)."""

    look_back: int
    wait: int
    b_waits: bool


@dataclass(frozen=True)
class SourceScan:
    """One source's pruned scan in a window: its role (source_a, source_b, features[name]) and the units it reads,
    [first, last] as `JobKind.read_ranges` gives them."""

    role: str
    scan: DataFrame
    units: tuple[int, int]


@dataclass(frozen=True)
class WindowJoin:
    """A window's output rows and the scans behind them, source_a's first."""

    output: DataFrame
    scans: tuple[SourceScan, ...]


@dataclass(frozen=True)
class LateSearch:
    """What a window's search for too-late B rows reads besides the A rows: the one B source, the job's join, and
    how far after its A row a B row is still looked for (docs/design.md#the-b-side-and-too-late-rows)."""

    sources: Mapping[str, DataFrame]  # the job's sources' rows by role (`SourceFrames`: read when first asked)
    spec: JoinSpec
    horizon: int
    schema: T.StructType  # B's columns, known without a read of its rows
    role: str = "source_b"  # B's role among the job's sources: its table, for a read through its Delta log

    @property
    def rows(self) -> DataFrame:
        """B's rows, as Spark reads its table (a search that cannot read B's files through its log)."""
        return self.sources[self.role]


class PreparedJoin(Protocol):
    """A job's join checked against its sources and holding their rows: it joins any window without checking
    again."""

    @property
    def identity(self) -> Identity:
        """The output columns that identify a target row."""
        ...

    @property
    def origins(self) -> Mapping[str, tuple[str, str]]:
        """Output column -> (the source's role, its column), for messages and the checks of new columns."""
        ...

    @property
    def frames(self) -> Mapping[str, DataFrame]:
        """Each source's rows by role, source_a first."""
        ...

    @property
    def late_search(self) -> LateSearch | None:
        """What the too-late search reads; None when the job looks for no too-late rows."""
        ...

    @property
    def rows(self) -> WindowRows:
        """Each source's rows of a window's units where they are read apart from its table (`sources.window_rows`)."""
        ...

    def join(self, first: int, last: int) -> WindowJoin:
        """The output rows of the window [first, last] and each source's pruned scan."""
        ...


class JoinPlan(Protocol):
    """A job checked against its sources' schemas, once: everything but what only Spark's analyzer says."""

    @property
    def identity(self) -> Identity:
        """The output columns that identify a target row."""
        ...

    @property
    def schemas(self) -> Mapping[str, T.StructType]:
        """The sources' schemas it was checked against, by role (the Delta logs' or Spark's)."""
        ...

    def prepare(self, frames: Mapping[str, DataFrame], rows: WindowRows = whole_tables) -> PreparedJoin:
        """The plan joined to the sources' rows (by role), with their join conditions resolved by Spark's
        analyzer (no Spark job); ConfigError naming the condition that does not resolve. `rows` gives a window
        a source's rows of its units where they can be read apart from the whole table."""
        ...


class JobKind(Protocol):
    """What a kind of job says of itself from its job file alone, and how it is checked against its sources."""

    @property
    def job(self) -> JobConfig:
        """The job file's model."""
        ...

    @property
    def reach(self) -> SpineReach:
        """How far a window's spine rows reach (the forward-only MERGE and the read bounds rest on it)."""
        ...

    @property
    def others(self) -> str:
        """How messages name the sources besides source_a together: "source_b", "the feature sources"."""
        ...

    @property
    def outcome_kind(self) -> How:
        """The join kind whose outcomes the job's rows take: which JoinTypes its windows count."""
        ...

    def read_ranges(self, first: int, last: int) -> dict[str, tuple[int, int]]:
        """The units each source is read in for the output window [first, last], by role."""
        ...

    def join_conds(self) -> tuple[str | None, ...]:
        """The job's join conditions (None where a join has none): only Spark's analyzer resolves them."""
        ...

    def key_columns(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Each source joined on keys with its keys (role, keys): source_a with every key a source joins it on
        first; empty when no source is joined on keys (NULL keys never match: they are counted)."""
        ...

    def source_reads(self, reads: Mapping[str, tuple[int, int]]) -> str | None:
        """What each source read (files, bytes by role) as the run log's `source_reads` keeps it beside A's and
        the others' sums: JSON, or None when those sums say it all."""
        ...

    def remembered(self) -> dict[str, object]:
        """The settings that decide which rows the target holds, by their names in the job file (JSON values)."""
        ...

    def summary(self) -> list[tuple[str, str]]:
        """The joins as `deltainc report`'s header lists them: (label, text) rows."""
        ...

    def described(self) -> list[tuple[str, str]]:
        """The sources and joins as `deltainc validate` prints them once they fit: (label, text) lines."""
        ...

    def plan(self, schemas: Mapping[str, T.StructType]) -> JoinPlan:
        """The job checked against its sources' schemas (by role): raises ConfigError or SchemaError naming the
        setting, the same from the Delta logs' schemas and from Spark's."""
        ...
