"""The feature sources' joins planned once (`prepare_features`), and one source's join onto the spine's rows so far
(`join_step`): each row so far is an A row of the next single-source join, the longest wait first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from deltainc.join.columns import source_filter
from deltainc.join.engine import join_prepared
from deltainc.join.feature_source import (
    FeatureSource,
    check_source,
    combined_columns,
    contributed,
    source_settings,
    spine_rec,
)
from deltainc.join.join_spec import JoinSpec
from deltainc.join.options import IncJoinSettings
from deltainc.join.output_layout import DIFF_ARRIVAL_TIME, JOIN_TYPE, plan_layout

__all__ = ["FeatureStep", "JoinedFeatures", "join_step", "prepare_features"]


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
    spec = check_source(a.schema, source, settings)
    layout = spec.layout
    renames = {layout.a_name(c): (spine_rec(settings) if c == inc else c) for c in a.columns}
    p = source.out_prefix
    renames |= {layout.b_name(c): f"{p}{c}" for c in contributed(source, inc)}
    renames |= {layout.b_name(inc): f"{p}{inc}", DIFF_ARRIVAL_TIME: f"{p}{DIFF_ARRIVAL_TIME}"}
    renames |= {JOIN_TYPE: f"{p}{JOIN_TYPE}", inc: carried}
    # Only the output's columns change: the checks above hold for them as they are.
    options = source_settings(source, settings, ", ".join(renames))
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
        rows = join_step(rows, steps[-1], settings, (None, 0))  # its columns, for the next source's plan
    return JoinedFeatures(spine, tuple(features), settings, tuple(steps))
