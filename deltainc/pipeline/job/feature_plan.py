"""A feature job planned from its sources: the engine's FeatureSources, the target's identity, where each output
column comes from. A feature job (`[[features]]`) joins one spine (source_a) with several sources, each as a
single-source `left` or `asof` join (docs/concepts/features.md, `join.features`).

The sources may be given as DataFrames (`prepare_job`) or as their schemas (`from_delta_logs.checks`, from the
Delta logs before Spark starts): `check_feature_job` runs the same checks on both, and resolves the join conditions
only given DataFrames."""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from deltainc.errors import ConfigError, SchemaError
from deltainc.join.feature_source import (
    FeatureSource,
    check_features,
    feature_columns,
    resolve_feature_conds,
    spine_rec,
)
from deltainc.join.output_layout import IS_FINAL
from deltainc.pipeline.job.choices import FeatureHow
from deltainc.pipeline.job.feature_config import FeatureConfig
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.join_plan import Identity

__all__ = ["feature_sources", "feature_identity", "feature_origins", "check_feature_job"]


def _source(feature: FeatureConfig, frame: DataFrame | T.StructType) -> FeatureSource:
    return FeatureSource(
        name=feature.name,
        df=frame,
        how=str(feature.how),  # the engine takes the name
        join_cols=tuple(feature.join_cols),
        join_cond=feature.join_cond,
        look_back_time=feature.look_back_time,
        max_waiting_time=feature.max_waiting_time,
        columns=None if feature.columns is None else tuple(feature.columns),
        prefix=feature.out_prefix,
        asof_strategy=feature.asof_strategy,
        asof_col=feature.asof_col,
        asof_col_b=feature.asof_col_b,
        asof_tie_break=tuple(feature.keys),
    )


def feature_sources(job: JobConfig, frames: Mapping[str, DataFrame | T.StructType]) -> tuple[FeatureSource, ...]:
    """The job's feature sources for the engine, each with its rows or only its schema (`frames` by role,
    features[name])."""
    return tuple(_source(feature, frames[feature.role]) for feature in job.features)


def feature_identity(job: JobConfig) -> Identity:
    """What identifies a target row: the spine row (target.keys and its RecDate), and for the one source that
    may match several rows, its keys and its row's RecDate."""
    inc = job.join.inc_col
    fanning = [(i, f) for i, f in enumerate(job.features) if f.keys]
    lefts = [f.role for f in job.features if f.how == FeatureHow.LEFT and not f.keys]
    b_keys: tuple[str, ...] = ()
    b_rec = None
    b_setting = ("target.b_keys", "source_b")
    names: tuple[str, ...] = ()
    if fanning:
        index, feature = fanning[0]
        b_keys = tuple(f"{feature.out_prefix}{k}" for k in feature.keys)
        b_rec, b_setting, names = (
            f"{feature.out_prefix}{inc}",
            (f"features[{index}].keys", feature.role),
            tuple(feature.keys),
        )
    return Identity(
        a_keys=tuple(job.target.keys),
        a_rec=spine_rec(job.join.engine_settings()),
        b_keys=b_keys,
        b_rec=b_rec,
        key_names=(*job.target.keys, *names),
        b_setting=b_setting,
        fan_out=" or ".join(lefts) or None,
    )


def feature_origins(df_a: DataFrame, sources: tuple[FeatureSource, ...], job: JobConfig) -> dict[str, tuple[str, str]]:
    """Output column -> (the source's role, its column), for messages and the checks of new columns."""
    inc = job.join.inc_col
    origins = {(spine_rec(job.join.engine_settings()) if c == inc else c): ("source_a", c) for c in df_a.columns}
    for source in sources:
        for name in feature_columns(source, inc):
            column = name[len(source.out_prefix) :]
            if column in source.schema.fieldNames():
                origins[name] = (f"features[{source.name}]", column)
    return origins


def check_feature_job(job: JobConfig, spine: DataFrame | T.StructType, sources: tuple[FeatureSource, ...]) -> None:
    """Everything `feature_join` checks (names, collisions, columns, join conditions), and that the target's
    identity and partitioning are output columns; raises ConfigError or SchemaError naming the source.

    Every check on the schemas comes first, so that the Delta logs (given the schemas) and Spark (given the
    DataFrames) refuse a job with the same message; then, given DataFrames, the join conditions are resolved."""
    settings = job.join.engine_settings()
    schema = spine if isinstance(spine, T.StructType) else spine.schema
    try:
        output = check_features(schema, sources, job.target.keys, settings)
    except (ConfigError, SchemaError) as exc:
        text = str(exc).replace("inc_col_name:", "join.inc_col:")
        raise type(exc)(text) from None
    columns = set(output)
    for index, feature in enumerate(job.features):
        for key in feature.keys:
            if f"{feature.out_prefix}{key}" not in columns:
                raise ConfigError(
                    f"features[{index}].keys: {key!r} is not a column {feature.role} contributes "
                    f"(add it to its columns)"
                )
    for column in job.target.partition_by or ():
        if column not in columns and column != IS_FINAL:
            raise ConfigError(f"target.partition_by: {column!r} is not an output column (output: {', '.join(output)})")
    if not isinstance(spine, T.StructType):  # only Spark's analyzer resolves them (the logs leave them to it)
        resolve_feature_conds(spine, sources, settings)
