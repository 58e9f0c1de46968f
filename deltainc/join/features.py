"""A spine joined with several feature sources, each incrementally and point in time: `feature_join`.

The rules (docs/concepts/features.md):
- each feature source is joined to the spine (A) on its own, as a single-source `left` or `asof` join with its
  own keys, condition, look_back_time and max_waiting_time: that gives every spine row one *component* per
  source (several for a `left` source that matched several rows), with the source's JoinType and output RecDate;
- a combined row is one component of every source (fan-out multiplies: two matched rows of one source give two
  combined rows); it is final once every component is final, and open (waiting) while any is;
- its RecDate is the latest of its components' output RecDates (the window's end while one is open), its
  WaitingTime the units from the spine row's RecDate to that RecDate, its JoinType 5 (waiting) while a component
  waits for a row, else 7 (provisional) while an as-of match may still change, else the latest outcome of its
  components (4 timed out > 3 B late > 2 A late > 1 same time);
- for a window [s, e] the spine rows that can still change are those with RecDate >= s - max(mw): every source's
  components are recomputed for them as of e (a final component comes out the same every time), and the
  combined rows with RecDate in [s, e] are output. So a daily, a monthly and a one-shot schedule give the same
  rows, as for a single source.
Reads: the spine in [s - max(mw), e], once; a source in [s - max(mw) - its lb, e]. The sources are joined one
after the other onto the spine's rows, each row so far being one A row of the next single-source join, so the
combinations come out of the joins themselves, with no join of components on the spine's identity. The longest
wait goes first, and after each join the rows that can no longer reach [s, e] are dropped (`_may_reach`), so a
source with a short wait joins the spine rows of its own wait and those another source keeps open.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from deltainc.errors import ConfigError, SchemaError
from deltainc.join.engine import join_prepared
from deltainc.join.join_spec import JoinSpec, check_join, resolve_join_cond
from deltainc.join.join_types import JoinType
from deltainc.join.options import AsofStrategy, IncJoinSettings
from deltainc.join.output_layout import DIFF_ARRIVAL_TIME, JOIN_TYPE, RESERVED_PREFIX, WAITING_TIME, plan_layout
from deltainc.join.time_units import parse_point
from deltainc.join.unit_columns import column_type, source_filter, unit_index

__all__ = [
    "FeatureSource",
    "feature_join",
    "join_features",
    "prepare_features",
    "JoinedFeatures",
    "check_features",
    "resolve_feature_conds",
    "feature_columns",
    "spine_rec",
]


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


def _contributed(source: FeatureSource, inc: str) -> tuple[str, ...]:
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
    names = {f"{p}{c}": f"column {c!r}" for c in _contributed(source, inc)}
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
    inc = settings.inc_col_name
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
    for column in spine.fieldNames():
        if column != inc:
            claim(column, f"source_a column {column!r}")
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


def _settings(source: FeatureSource, settings: IncJoinSettings, select: str) -> IncJoinSettings:
    """The single-source join of `source`: waiting rows kept (a combined row needs every component)."""
    options = settings.model_copy(
        update={"alias_b": source.alias_b, "include_waiting": True, "enforce_sliding_join_window": True,
                "b_waits_for_a": False, "output_select": select}
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


def _probe(spine: T.StructType, source: FeatureSource, settings: IncJoinSettings) -> JoinSpec:
    """The single-source join's checks on the schemas (all but resolving its join condition), with the messages
    naming the source."""
    options = _settings(source, settings, "inc_col")
    try:
        return check_join(spine, source.schema, source.how, source.join_cols, source.join_cond,
                          source.look_back_time, source.max_waiting_time, None, None, options)  # fmt: skip
    except (ConfigError, SchemaError) as exc:
        raise type(exc)(f"features[{source.name}]: {str(exc).replace('source_b', 'the feature source')}") from None


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
            resolve_join_cond(spine, source.df, source.join_cond, _settings(source, settings, "inc_col"))
        except ConfigError as exc:
            raise ConfigError(f"features[{source.name}].{exc}") from None


def _output_names(spine: T.StructType, features: Sequence[FeatureSource], settings: IncJoinSettings) -> list[str]:
    """The combined rows' columns in order: RecDate, the spine's, each source's block, WaitingTime, JoinType."""
    inc = settings.inc_col_name
    spine_out = [spine_rec(settings) if c == inc else c for c in spine.fieldNames()]
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
        _probe(schema, source, settings)
    if not isinstance(spine, T.StructType):
        resolve_feature_conds(spine, features, settings)
    return _output_names(schema, features, settings)


def _carried_names(spine: T.StructType, features: Sequence[FeatureSource], settings: IncJoinSettings) -> list[str]:
    """Per source, a name for its component's output RecDate while the later sources are joined: unlike any column
    of the spine, of a source or of the output (the engine takes no reserved name on its A side)."""
    taken = {c.lower() for c in _output_names(spine, features, settings)}
    taken |= {c.lower() for source in features for c in source.schema.fieldNames()}
    names = []
    for source in features:
        name = f"{source.out_prefix}out"
        while name.lower() in taken:
            name = f"_{name}"
        taken.add(name.lower())
        names.append(name)
    return names


@dataclass(frozen=True)
class _Step:
    """One source's single-source join onto the rows so far, planned once: its JoinSpec (no window yet) and the
    names its output columns take (`renames`, output column -> name)."""

    source: FeatureSource
    carried: str  # the name of its component's output RecDate while the later sources are joined
    spec: JoinSpec
    renames: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class JoinedFeatures:
    """Checked feature sources ready to join the spine for any window (`join_features`): each source's join planned
    once against the rows it joins, in the order they are joined (the longest wait first)."""

    spine: DataFrame
    features: tuple[FeatureSource, ...]
    settings: IncJoinSettings
    steps: tuple[_Step, ...]
    carried: tuple[str, ...]  # each source's `_Step.carried`, in the order of `features`


def _plan_step(rows: DataFrame, source: FeatureSource, carried: str, settings: IncJoinSettings) -> _Step:
    """`source`'s join onto `rows` (the spine's rows with the sources joined before it): the engine's spec and the
    output's names, every column of `rows`, the source's own (`feature_columns`) and its output RecDate."""
    inc = settings.inc_col_name
    lb, mw = source.look_back_time, source.max_waiting_time
    a = rows.withColumnRenamed(spine_rec(settings), inc)  # the engine reads A's time from the incremental column
    try:
        spec = check_join(a.schema, source.schema, source.how, source.join_cols, source.join_cond, lb, mw, None, None,
                          _settings(source, settings, "inc_col"))  # fmt: skip
    except (ConfigError, SchemaError) as exc:
        raise type(exc)(f"features[{source.name}]: {str(exc).replace('source_b', 'the feature source')}") from None
    layout = spec.layout
    renames = {layout.a_name(c): (spine_rec(settings) if c == inc else c) for c in a.columns}
    p = source.out_prefix
    renames |= {layout.b_name(c): f"{p}{c}" for c in _contributed(source, inc)}
    renames |= {layout.b_name(inc): f"{p}{inc}", DIFF_ARRIVAL_TIME: f"{p}{DIFF_ARRIVAL_TIME}"}
    renames |= {JOIN_TYPE: f"{p}{JOIN_TYPE}", inc: carried}
    # Only the output's columns change: the checks above hold for them as they are.
    options = _settings(source, settings, ", ".join(renames))
    layout = plan_layout(a.columns, source.schema.fieldNames(), spec.join_cols, spec.how, options)
    return _Step(source, carried, replace(spec, settings=options, layout=layout), tuple(renames.items()))


def _join_step(
    rows: DataFrame,
    step: _Step,
    settings: IncJoinSettings,
    window: tuple[int | None, int],
    source_rows: DataFrame | None = None,
) -> DataFrame:
    """`rows` (the spine's rows with RecDate >= `window[0]`, with the sources joined so far) joined with the step's
    source (or `source_rows`, some of its rows with its columns) as of `window[1]`. Each row of `rows` is an A row
    of the single-source join (a fan-out row is one more A row), so joining the sources one after the other gives
    every combination of components and reads the spine once."""
    inc, uom = settings.inc_col_name, settings.time_uom
    first, end = window
    frame = step.source.rows if source_rows is None else source_rows
    a = rows.withColumnRenamed(spine_rec(settings), inc)
    b = frame.where(source_filter(frame, inc, uom, None if first is None else first - step.source.look_back_time, end))
    joined = join_prepared(a, b, replace(step.spec, start=first, end=end))
    return joined.select(*[F.col(f"`{out}`").alias(name) for out, name in step.renames])


def prepare_features(
    spine: DataFrame, features: Sequence[FeatureSource], settings: IncJoinSettings | None = None
) -> JoinedFeatures:
    """Each source's join planned once (analysis only, no Spark job), for checked sources (`check_features`): the
    pipeline prepares a feature job once, then joins each window with `join_features`."""
    settings = settings if settings is not None else IncJoinSettings()
    carried = _carried_names(spine.schema, features, settings)
    order = sorted(range(len(features)), key=lambda i: -features[i].max_waiting_time)  # the longest wait first
    rows = spine.withColumnRenamed(settings.inc_col_name, spine_rec(settings))
    steps = []
    for i in order:
        steps.append(_plan_step(rows, features[i], carried[i], settings))
        rows = _join_step(rows, steps[-1], settings, (None, 0))  # its columns, for the next source's plan
    return JoinedFeatures(spine, tuple(features), settings, tuple(steps), tuple(carried))


def feature_join(
    spine: DataFrame,
    features: Sequence[FeatureSource],
    spine_keys: Sequence[str],
    output_window_start: str | dt.date | dt.datetime | None,
    output_window_end: str | dt.date | dt.datetime,
    settings: IncJoinSettings | None = None,
) -> DataFrame:
    """The combined rows of the output window (module rules): one per spine row and component of every source.

    Each feature source is joined to the spine on its own, incrementally and point in time; a row is final when
    every one of its components is, and open (waiting or provisional) until then.

    Args:
        spine: the spine (A): one row per event, with the incremental column.
        features: the feature sources, each a `FeatureSource` with its own keys, times and columns.
        spine_keys: the spine's columns that (with its RecDate) identify a spine row.
        output_window_start: the window's first unit; None = from the spine's first rows.
        output_window_end: the window's last unit, inclusive.
        settings: the incremental column, the time unit, `alias_a` and whether open rows are output
            (`include_waiting`); default `IncJoinSettings()`.

    Returns:
        The spine's columns, then per source `<prefix>JoinType`, `<prefix>DiffArrivalTime`,
            `<prefix>RecDate` and its columns, then the combined `RecDate`, `WaitingTime` and `JoinType`.

    Raises:
        ConfigError: a source name used twice, colliding output columns, a bad time or window, naming it.
        SchemaError: a column a source names is missing, naming the source.

    Example:
        ```python
        from deltainc import FeatureSource, IncJoinSettings, feature_join

        risk = FeatureSource("risk", scores, "asof", ("CustomerId",), look_back_time=30, max_waiting_time=2,
                             columns=("Risk",), asof_col="TrxTime", asof_col_b="ValidFrom")
        rows = feature_join(trx, [risk], ["TrxId"], "2025-03-10", "2025-03-12", IncJoinSettings(include_waiting=True))
        ```
    """
    settings = settings if settings is not None else IncJoinSettings()
    check_features(spine, features, spine_keys, settings)
    uom = settings.time_uom
    end = parse_point(output_window_end, "output_window_end", uom)
    start = None if output_window_start is None else parse_point(output_window_start, "output_window_start", uom)
    if start is not None and start > end:
        raise ConfigError(f"output window: output_window_start {output_window_start} is after {output_window_end}")
    return join_features(prepare_features(spine, features, settings), start, end)


def join_features(
    joined: JoinedFeatures,
    start: int | None,
    end: int,
    spine: DataFrame | None = None,
    sources: Mapping[str, DataFrame] | None = None,
) -> DataFrame:
    """`feature_join` of sources checked (`check_features`) and planned (`prepare_features`) before, for the output
    window [start, end] in unit indexes (start None = from the spine's first rows): nothing is checked again.
    `spine` and `sources` (by source name) may give rows to read instead of the planned ones: the same columns,
    at least the rows of the window's read ranges (the pipeline's files of those units)."""
    sources = sources or {}
    features, settings = joined.features, joined.settings
    spine = joined.spine if spine is None else spine
    inc, uom = settings.inc_col_name, settings.time_uom
    reach = max(source.max_waiting_time for source in features)
    first = None if start is None else start - reach
    rec_type = spine.schema[inc].dataType
    combined = spine.where(source_filter(spine, inc, uom, first, end)).withColumnRenamed(inc, spine_rec(settings))
    steps = joined.steps
    for done, step in enumerate(steps, start=1):
        combined = _join_step(combined, step, settings, (first, end), sources.get(step.source.name))
        if start is not None and done < len(steps):
            later = max(s.source.max_waiting_time for s in steps[done:])
            combined = combined.where(_may_reach([s.carried for s in steps[:done]], later, start, rec_type, settings))
    codes = [F.col(f"`{source.out_prefix}{JOIN_TYPE}`") for source in features]
    outs = [F.col(f"`{name}`") for name in joined.carried]
    rec = F.greatest(*outs) if len(outs) > 1 else outs[0]
    final_code = F.greatest(*codes) if len(codes) > 1 else codes[0]
    row_type = (
        F.when(_any(codes, JoinType.A_WAITING), int(JoinType.A_WAITING))
        .when(_any(codes, JoinType.PROVISIONAL), int(JoinType.PROVISIONAL))
        .otherwise(final_code)
    )
    rows = combined.withColumn(inc, rec).withColumn(JOIN_TYPE, row_type.cast("int"))
    waited = unit_index(F.col(f"`{inc}`"), rec_type, uom) - unit_index(F.col(f"`{spine_rec(settings)}`"), rec_type, uom)
    rows = rows.withColumn(WAITING_TIME, waited.cast("int"))
    if start is not None:
        rows = rows.where(unit_index(F.col(f"`{inc}`"), rec_type, uom) >= F.lit(start))
    if not settings.include_waiting:
        rows = rows.where(~F.col(JOIN_TYPE).isin(int(JoinType.A_WAITING), int(JoinType.PROVISIONAL)))
    return rows.select(*[F.col(f"`{c}`") for c in _output_names(spine.schema, features, settings)])


def _may_reach(
    joined: Sequence[str], later: int, start: int, rec_type: T.DataType, settings: IncJoinSettings
) -> Column:
    """Whether a row can still give a combined row in the output window (RecDate >= `start`): a component already
    joined lands there, or a source still to join can (its component's RecDate is at most the spine row's plus its
    max_waiting_time, `later` the largest of those). The others' combined rows were output before: dropping them
    early keeps the joins of the sources with shorter waits to the spine rows those can still change."""
    uom = settings.time_uom
    reach = unit_index(F.col(f"`{spine_rec(settings)}`"), rec_type, uom) + F.lit(later) >= F.lit(start)
    landed = [unit_index(F.col(f"`{name}`"), rec_type, uom) >= F.lit(start) for name in joined]
    return reduce(lambda x, y: x | y, [reach, *landed])


def _any(codes: Sequence[Column], code: JoinType) -> Column:
    return reduce(lambda x, y: x | y, [c == int(code) for c in codes])
