"""One feature source of a spine (`FeatureSource`) and the output columns it adds (`feature_columns`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from deltainc.errors import ConfigError
from deltainc.join.join_spec import column_type
from deltainc.join.options import AsofStrategy, IncJoinSettings
from deltainc.join.output_layout import DIFF_ARRIVAL_TIME, JOIN_TYPE

__all__ = ["FeatureSource", "contributed", "feature_columns", "spine_rec"]


@dataclass(frozen=True)
class FeatureSource:
    """One feature source: its rows, how it joins the spine, and the columns it adds (named `prefix` + column).
    Given its schema instead of its rows, it can be checked (`check_features`, e.g. from a Delta log before Spark
    starts) but not joined.

    Attributes:
        name: the source's name, in messages and as the default prefix of its columns (`name_`).
        df: its rows (a DataFrame with the spine's incremental column), or only its schema.
        how: `left` (every matching row, each a component) or `asof` (the nearest row in time).
        join_cols: equality keys shared with the spine.
        join_cond: an extra SQL condition over `A` (the spine) and `alias_b`.
        look_back_time: units the source's row may arrive before the spine row.
        max_waiting_time: units a spine row waits for this source.
        columns: the columns it adds; None = every column but the join keys and the incremental column.
        prefix: the prefix of its output columns; None = `name` and `_`.
        alias_b: its alias in `join_cond`.
        asof_strategy: `asof` sources: `backward`, `forward` or `nearest`.
        asof_col: `asof` sources: the spine's time column compared exactly; None = the incremental column.
        asof_col_b: `asof` sources: the source's time column when its name differs from `asof_col`.
        asof_tie_break: `asof` sources: the columns that order equally near rows.

    Example:
        ```python
        payments = FeatureSource("pay", payments_df, "left", ("TrxId",), look_back_time=1, max_waiting_time=3,
                                 columns=("Status",))
        ```
    """

    name: str
    df: DataFrame | T.StructType
    how: str  # "left" or "asof"
    join_cols: tuple[str, ...] = ()
    join_cond: str | None = None
    look_back_time: int = 0
    max_waiting_time: int = 0
    columns: tuple[str, ...] | None = None  # None = every column but the join keys and the incremental column
    prefix: str | None = None  # None = name + "_"
    alias_b: str = "B"
    asof_strategy: AsofStrategy = "backward"
    asof_col: str | None = None
    asof_col_b: str | None = None
    asof_tie_break: tuple[str, ...] = field(default=())

    @property
    def out_prefix(self) -> str:
        return f"{self.name}_" if self.prefix is None else self.prefix

    @property
    def schema(self) -> T.StructType:
        """The source's schema: what every check but resolving `join_cond` reads."""
        return self.df if isinstance(self.df, T.StructType) else self.df.schema

    @property
    def rows(self) -> DataFrame:
        """The source's rows; ConfigError when it was given by its schema only."""
        if isinstance(self.df, T.StructType):
            raise ConfigError(f"features[{self.name}]: given its schema only, it can be checked but not joined")
        return self.df


def spine_rec(settings: IncJoinSettings) -> str:
    """The output name of the spine row's own RecDate (e.g. RecDate_A): the output RecDate is the row's."""
    return f"{settings.inc_col_name}_{settings.alias_a}"


def contributed(source: FeatureSource, inc: str) -> tuple[str, ...]:
    """The source's own columns it adds to the output (unprefixed): `columns`, checked, or all but keys and `inc`."""
    schema = source.schema
    if source.columns is not None:
        for column in source.columns:
            column_type(schema, column, f"features[{source.name}]", "columns")
        return source.columns
    skip = {c.lower() for c in (*source.join_cols, inc)}
    return tuple(c for c in schema.fieldNames() if c.lower() not in skip)


def feature_columns(source: FeatureSource, inc: str) -> dict[str, str]:
    """A source's output columns: output name -> what it is (a source column, its RecDate, its outcome)."""
    p = source.out_prefix
    names = {f"{p}{c}": f"column {c!r}" for c in contributed(source, inc)}
    names[f"{p}{inc}"] = "its row's RecDate"
    names[f"{p}{DIFF_ARRIVAL_TIME}"] = "its DiffArrivalTime"
    names[f"{p}{JOIN_TYPE}"] = "its JoinType"
    return names
