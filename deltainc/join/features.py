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
wait goes first (`prepare_features`), and after each join the rows that can no longer reach [s, e] are dropped
(`_may_reach`), so a source with a short wait joins the spine rows of its own wait and those another source keeps
open. A source, its output columns and the checks are `feature_source`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from deltainc.errors import ConfigError
from deltainc.join.columns import source_filter, unit_index
from deltainc.join.engine import join_prepared
from deltainc.join.feature_source import (
    FeatureSource,
    check_features,
    check_source,
    combined_columns,
    contributed,
    source_settings,
    spine_rec,
    spine_renamed,
)
from deltainc.join.join_spec import JoinSpec
from deltainc.join.options import IncJoinSettings, JoinType
from deltainc.join.output_layout import DIFF_ARRIVAL_TIME, JOIN_TYPE, WAITING_TIME, plan_layout
from deltainc.time_units import parse_point

__all__ = ["feature_join", "join_features", "FeatureStep", "JoinedFeatures", "join_step", "prepare_features"]


def _carried_names(spine: T.StructType, features: Sequence[FeatureSource], settings: IncJoinSettings) -> list[str]:
    """Per source, a name for its component's output RecDate while the later sources are joined: unlike any column
    of the spine, of a source or of the output (the engine takes no reserved name on its A side)."""
    taken = {c.lower() for c in combined_columns(spine, features, settings)}
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
class FeatureStep:
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
    steps: tuple[FeatureStep, ...]


def _plan_step(rows: DataFrame, source: FeatureSource, carried: str, settings: IncJoinSettings) -> FeatureStep:
    """`source`'s join onto `rows` (the spine's rows with the sources joined before it): the engine's spec and the
    output's names, every column of `rows`, the source's own (`feature_columns`) and its output RecDate."""
    inc = settings.inc_col_name
    a = rows.withColumnRenamed(spine_rec(settings), inc)  # the engine reads A's time from the incremental column
    settings = settings.model_copy(update={"inc_col_name_a": None})  # so named in `a`, whatever dates the spine
    spec = check_source(a.schema, source, settings)
    layout = spec.layout
    renames = {layout.a_name(c): (spine_rec(settings) if c == inc else c) for c in a.columns}
    p = source.out_prefix
    renames |= {layout.b_name(c): f"{p}{c}" for c in contributed(source, inc)}
    renames |= {layout.b_name(source.inc_of(inc)): f"{p}{inc}", DIFF_ARRIVAL_TIME: f"{p}{DIFF_ARRIVAL_TIME}"}
    renames |= {JOIN_TYPE: f"{p}{JOIN_TYPE}", inc: carried}
    # Only the output's columns change: the checks above hold for them as they are.
    options = source_settings(source, settings, ", ".join(renames), a.columns)
    layout = plan_layout(a.columns, source.schema.fieldNames(), spec.join_cols, spec.how, options)
    return FeatureStep(source, carried, replace(spec, settings=options, layout=layout), tuple(renames.items()))


def join_step(
    rows: DataFrame,
    step: FeatureStep,
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
    lb = step.source.look_back_time
    b = frame.where(source_filter(frame, step.source.inc_of(inc), uom, None if first is None else first - lb, end))
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
    rows = spine_renamed(spine, settings)
    steps = []
    for i in order:
        steps.append(_plan_step(rows, features[i], carried[i], settings))
        rows = join_step(rows, steps[-1], settings, (None, 0))  # its columns, for the next source's plan
    return JoinedFeatures(spine, tuple(features), settings, tuple(steps))


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
    inc, inc_a, uom = settings.inc_col_name, settings.inc_col_of("source_a"), settings.time_uom
    reach = max(source.max_waiting_time for source in features)
    first = None if start is None else start - reach
    rec_type = spine.schema[inc_a].dataType
    combined = spine_renamed(spine.where(source_filter(spine, inc_a, uom, first, end)), settings)
    steps = joined.steps
    for done, step in enumerate(steps, start=1):
        combined = join_step(combined, step, settings, (first, end), sources.get(step.source.name))
        if start is not None and done < len(steps):
            later = max(s.source.max_waiting_time for s in steps[done:])
            combined = combined.where(_may_reach([s.carried for s in steps[:done]], later, start, rec_type, settings))
    codes = [F.col(f"`{source.out_prefix}{JOIN_TYPE}`") for source in features]
    outs = [F.col(f"`{step.carried}`") for step in steps]
    rec = F.greatest(*outs) if len(outs) > 1 else outs[0]
    final_code = F.greatest(*codes) if len(codes) > 1 else codes[0]
    row_type = (
        F.when(F.lit(int(JoinType.A_WAITING)).isin(*codes), int(JoinType.A_WAITING))  # a component waits
        .when(F.lit(int(JoinType.PROVISIONAL)).isin(*codes), int(JoinType.PROVISIONAL))
        .otherwise(final_code)
    )
    rows = combined.withColumn(inc, rec).withColumn(JOIN_TYPE, row_type.cast("int"))
    waited = unit_index(F.col(f"`{inc}`"), rec_type, uom) - unit_index(F.col(f"`{spine_rec(settings)}`"), rec_type, uom)
    rows = rows.withColumn(WAITING_TIME, waited.cast("int"))
    if start is not None:
        rows = rows.where(unit_index(F.col(f"`{inc}`"), rec_type, uom) >= F.lit(start))
    if not settings.include_waiting:
        rows = rows.where(~F.col(JOIN_TYPE).isin(int(JoinType.A_WAITING), int(JoinType.PROVISIONAL)))
    return rows.select(*[F.col(f"`{c}`") for c in combined_columns(spine.schema, features, settings)])


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
