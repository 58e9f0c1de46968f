"""What `feature_join` checks before it plans anything: the sources' names and output columns, each source's
single-source join on the schemas, and its join condition resolved by Spark's analyzer (`check_features`)."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from deltainc.errors import ConfigError, SchemaError
from deltainc.join.feature_source import FeatureSource, feature_columns, spine_rec
from deltainc.join.join_spec import JoinSpec, check_join, column_type, resolve_join_cond
from deltainc.join.options import IncJoinSettings
from deltainc.join.output_layout import JOIN_TYPE, RESERVED_PREFIX, WAITING_TIME

__all__ = ["check_features", "check_source", "combined_columns", "resolve_feature_conds", "source_settings"]


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


def source_settings(source: FeatureSource, settings: IncJoinSettings, select: str) -> IncJoinSettings:
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


def check_source(spine: T.StructType, source: FeatureSource, settings: IncJoinSettings) -> JoinSpec:
    """The single-source join's checks on the schemas (all but resolving its join condition), with the messages
    naming the source; `spine` may be the rows the sources before it were joined onto."""
    options = source_settings(source, settings, "inc_col")
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
            resolve_join_cond(spine, source.df, source.join_cond, source_settings(source, settings, "inc_col"))
        except ConfigError as exc:
            raise ConfigError(f"features[{source.name}].{exc}") from None


def combined_columns(spine: T.StructType, features: Sequence[FeatureSource], settings: IncJoinSettings) -> list[str]:
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
        check_source(schema, source, settings)
    if not isinstance(spine, T.StructType):
        resolve_feature_conds(spine, features, settings)
    return combined_columns(schema, features, settings)
