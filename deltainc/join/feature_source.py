"""One feature source of a spine (`FeatureSource`), the output columns it adds (`feature_columns`), and what
`feature_join` checks before it plans anything: the sources' names and output columns, each source's single-source
join on the schemas, and its join condition resolved by Spark's analyzer (`check_features`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from deltainc.errors import ConfigError, SchemaError
from deltainc.join.join_spec import JoinSpec, check_inc_col, check_join, column_type, resolve_join_cond
from deltainc.join.options import AsofStrategy, IncJoinSettings
from deltainc.join.output_layout import DIFF_ARRIVAL_TIME, IS_FINAL, JOIN_TYPE, RESERVED_PREFIX, WAITING_TIME
from deltainc.time_units import TimeUnit

__all__ = [
    "FeatureSource",
    "contributed",
    "feature_columns",
    "spine_rec",
    "spine_names",
    "spine_renamed",
    "check_features",
    "check_source",
    "combined_columns",
    "resolve_feature_conds",
    "source_settings",
]


@dataclass(frozen=True)
class FeatureSource:
    """One feature source: its rows, how it joins the spine, and the columns it adds (named `prefix` + column).
    Given its schema instead of its rows, it can be checked (`check_features`, e.g. from a Delta log before Spark
    starts) but not joined.

    Attributes:
        name: the source's name, in messages and as the default prefix of its columns (`name_`).
        df: its rows (a DataFrame with its incremental column), or only its schema.
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
        inc_col: its own incremental column (a DATE, or a TIMESTAMP read by its day in a day job); None = the
            settings' `inc_col_name`. Its output columns are named by `inc_col_name` all the same (`pay_RecDate`).

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
    inc_col: str | None = None  # None = the settings' inc_col_name

    def inc_of(self, inc: str) -> str:
        """The column the source is read, pruned and windowed by: its own `inc_col`, else `inc` (inc_col_name)."""
        return self.inc_col or inc

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


def spine_names(spine: T.StructType, settings: IncJoinSettings) -> dict[str, str]:
    """Each spine column's output name: its incremental column (its own `inc_col_name_a`, else `inc_col_name`) is
    `spine_rec`; the others the output or a source's join makes of its own (RecDate, and on a job's target as the
    spine JoinType, WaitingTime, IsFinal, DiffArrivalTime) end in the spine's alias."""
    inc_a, alias = settings.inc_col_of("source_a"), settings.alias_a
    own = {n.lower() for n in (settings.inc_col_name, WAITING_TIME, JOIN_TYPE, IS_FINAL, DIFF_ARRIVAL_TIME)}
    return {
        c: spine_rec(settings) if c == inc_a else f"{c}_{alias}" if c.lower() in own else c for c in spine.fieldNames()
    }


def spine_renamed(spine: DataFrame, settings: IncJoinSettings) -> DataFrame:
    """The spine's rows with its columns' output names (`spine_names`)."""
    renames = {c: name for c, name in spine_names(spine.schema, settings).items() if c != name}
    return spine.withColumnsRenamed(renames)


def contributed(source: FeatureSource, inc: str) -> tuple[str, ...]:
    """The source's own columns it adds to the output (unprefixed): `columns`, checked, or all but the keys and its
    incremental column (its own, else `inc`)."""
    schema = source.schema
    if source.columns is not None:
        for column in source.columns:
            column_type(schema, column, f"features[{source.name}]", "columns")
        return source.columns
    skip = {c.lower() for c in (*source.join_cols, source.inc_of(inc))}
    return tuple(c for c in schema.fieldNames() if c.lower() not in skip)


def feature_columns(source: FeatureSource, inc: str) -> dict[str, str]:
    """A source's output columns: output name -> what it is (a source column, its RecDate, its outcome). Its row's
    RecDate is named by `inc` (inc_col_name) whatever column dates the source."""
    p = source.out_prefix
    names = {f"{p}{c}": f"column {c!r}" for c in contributed(source, inc)}
    names[f"{p}{inc}"] = "its row's RecDate"
    names[f"{p}{DIFF_ARRIVAL_TIME}"] = "its DiffArrivalTime"
    names[f"{p}{JOIN_TYPE}"] = "its JoinType"
    return names


def _check(
    spine: T.StructType, features: Sequence[FeatureSource], keys: Sequence[str], settings: IncJoinSettings
) -> None:
    """The sources' names and hows, the spine keys, and every output name once (ignoring case)."""
    if not features:
        raise ConfigError("features: give at least one feature source")
    inc, inc_a = settings.inc_col_name, settings.inc_col_of("source_a")
    check_inc_col(spine, inc_a, "source_a", settings.inc_setting("source_a"), TimeUnit.parse(settings.time_uom))
    for key in keys:
        column_type(spine, key, "the spine (source_a)", "target.keys")
    owners: dict[str, str] = {}

    def claim(name: str, owner: str) -> None:
        if name.lower().startswith(RESERVED_PREFIX):
            raise SchemaError(f"{owner}: output column {name!r} starts with the reserved {RESERVED_PREFIX!r}")
        if name.lower() in owners:
            raise SchemaError(
                f"{owner}: output column {name!r} collides with {owners[name.lower()]}; give the source another "
                "prefix or fewer columns"
            )
        owners[name.lower()] = owner

    for name in (inc, WAITING_TIME, JOIN_TYPE):
        claim(name, "the output's own column")
    claim(spine_rec(settings), "the spine's RecDate")
    for column, name in spine_names(spine, settings).items():
        if column != inc_a:
            claim(name, f"source_a column {column!r}")
    seen: set[str] = set()
    for source in features:
        where = f"features[{source.name}]"
        if source.name.lower() in seen:
            raise ConfigError(f"{where}.name: the name {source.name!r} is used twice; give each source its own")
        seen.add(source.name.lower())
        if source.how not in ("left", "asof"):
            raise ConfigError(f"{where}.how: expected 'left' or 'asof', got {source.how!r}")
        for name, what in feature_columns(source, inc).items():
            claim(name, f"{where} ({what})")


def source_settings(
    source: FeatureSource, settings: IncJoinSettings, select: str, spine: Sequence[str] = ()
) -> IncJoinSettings:
    """The single-source join of `source` onto the rows with columns `spine`: waiting rows kept (a combined row
    needs every component), the source read by its own incremental column."""
    options = settings.model_copy(
        update={"alias_b": _b_alias(source, spine), "include_waiting": True, "enforce_sliding_join_window": True,
                "b_waits_for_a": False, "output_select": select, "inc_col_name_b": source.inc_col}
    )  # fmt: skip
    if source.how != "asof":
        return options
    return IncJoinSettings(
        **options.model_dump(exclude={"asof_strategy", "asof_col", "asof_col_b", "asof_tie_break"}),
        asof_strategy=source.asof_strategy,
        asof_col=source.asof_col,
        asof_col_b=source.asof_col_b,
        asof_tie_break=source.asof_tie_break,
    )


def _b_alias(source: FeatureSource, spine: Sequence[str]) -> str:
    """The source's alias in its join: `alias_b`, or, without a join_cond to name it, the first of B2, B3, ... that
    suffixes no column of the source as a spine column is named (a job's target as the spine has RecDate_B). The
    suffixed names never reach the output: each of the source's columns there is named by its prefix."""
    taken, alias, n = {c.lower() for c in spine}, source.alias_b, 1
    while source.join_cond is None and any(f"{c}_{alias}".lower() in taken for c in source.schema.fieldNames()):
        n += 1
        alias = f"{source.alias_b}{n}"
    return alias


def check_source(spine: T.StructType, source: FeatureSource, settings: IncJoinSettings) -> JoinSpec:
    """The single-source join's checks on the schemas (all but resolving its join condition), with the messages
    naming the source; `spine` may be the rows the sources before it were joined onto."""
    options = source_settings(source, settings, "inc_col", spine.fieldNames())
    try:
        return check_join(spine, source.schema, source.how, source.join_cols, source.join_cond,
                          source.look_back_time, source.max_waiting_time, None, None, options)  # fmt: skip
    except (ConfigError, SchemaError) as exc:
        text = str(exc).replace("source_b", "the feature source")
        if text.startswith("inc_col_name_b:"):  # the source's own incremental column
            raise type(exc)(f"features[{source.name}].inc_col:{text.removeprefix('inc_col_name_b:')}") from None
        raise type(exc)(f"features[{source.name}]: {text}") from None


def resolve_feature_conds(
    spine: DataFrame, features: Sequence[FeatureSource], settings: IncJoinSettings | None = None
) -> None:
    """Each source's join condition resolved against the spine and the source by Spark's analyzer (no Spark job):
    the one check that needs DataFrames, so a source given by its schema only is left out. ConfigError naming
    the source."""
    settings = settings if settings is not None else IncJoinSettings()
    for source in features:
        if source.join_cond is None or isinstance(source.df, T.StructType):
            continue
        try:
            resolve_join_cond(
                spine, source.df, source.join_cond, source_settings(source, settings, "inc_col", spine.columns)
            )
        except ConfigError as exc:
            raise ConfigError(f"features[{source.name}].{exc}") from None


def combined_columns(spine: T.StructType, features: Sequence[FeatureSource], settings: IncJoinSettings) -> list[str]:
    """The combined rows' columns in order: RecDate, the spine's, each source's block, WaitingTime, JoinType."""
    inc = settings.inc_col_name
    spine_out = list(spine_names(spine, settings).values())
    blocks = [name for source in features for name in feature_columns(source, inc)]
    return [inc, *spine_out, *blocks, WAITING_TIME, JOIN_TYPE]


def check_features(
    spine: DataFrame | T.StructType,
    features: Sequence[FeatureSource],
    spine_keys: Sequence[str],
    settings: IncJoinSettings | None = None,
) -> list[str]:
    """Everything `feature_join` checks, without building its plan: raises ConfigError or SchemaError naming the
    source; returns the output's columns. Every check on the schemas comes first; then, given the spine's and the
    sources' DataFrames, each join condition is resolved (`resolve_feature_conds`). Given the spine's schema (or a
    source's), everything but that, as `check_join` does, so that a job can be checked from the Delta logs before
    Spark starts."""
    settings = settings if settings is not None else IncJoinSettings()
    schema = spine if isinstance(spine, T.StructType) else spine.schema
    _check(schema, features, spine_keys, settings)
    for source in features:
        check_source(schema, source, settings)
    if not isinstance(spine, T.StructType):
        resolve_feature_conds(spine, features, settings)
    return combined_columns(schema, features, settings)
