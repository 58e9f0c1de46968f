"""A feature job as a kind of job (`job_kind.JobKind`): one spine (source_a) joined with several feature sources,
each by its own `[[features]]` entry as a single-source `left` or `asof` join (docs/concepts/features.md).

What it says from the job file alone needs no pyspark. Its check against the sources (`check_feature_job`) runs the
same checks on their schemas from the Delta logs before Spark starts and from Spark's, and only given DataFrames
resolves the join conditions; the plan joined to the rows joins any window with `join_features`, with no check
again. The engine's modules that import pyspark are imported where used."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from deltainc.errors import ConfigError, SchemaError
from deltainc.join.output_layout import IS_FINAL
from deltainc.pipeline.job.field_types import FeatureHow
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds.job_kind import (
    Identity,
    LateSearch,
    SourceScan,
    SpineReach,
    WindowJoin,
    WindowRows,
    whole_tables,
    window_rows_of,
)
from deltainc.pipeline.job.sections import FeatureConfig

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql import types as T

    from deltainc.join.feature_source import FeatureSource
    from deltainc.join.features import JoinedFeatures
    from deltainc.join.options import How, IncJoinSettings

__all__ = [
    "FeatureJob",
    "FeaturePlan",
    "FeatureJoin",
    "check_feature_job",
    "feature_identity",
    "feature_settings",
    "feature_sources",
]

Ranges = Callable[[int, int], dict[str, tuple[int, int]]]  # a window's units -> each source's units read


@dataclass(frozen=True)
class FeatureJob:
    """A job with `[[features]]`: a spine row is final once it is final for every feature source."""

    job: JobConfig

    @property
    def reach(self) -> SpineReach:
        """A spine row can change until the longest max_waiting_time has passed; no source's rows wait for it."""
        return SpineReach(0, max(f.max_waiting_time for f in self.job.features), False)

    @property
    def others(self) -> str:
        return "the feature sources"

    @property
    def outcome_kind(self) -> How:
        """An asof job's: matched, waiting, timed out, provisional."""
        return "asof"

    def source_reads(self, reads: Mapping[str, tuple[int, int]]) -> str | None:
        """Each feature source's files and bytes, by role: files_read_b sums them."""
        return json.dumps({role: {"files": files, "bytes": size} for role, (files, size) in reads.items()
                           if role != "source_a"})  # fmt: skip

    def read_ranges(self, first: int, last: int) -> dict[str, tuple[int, int]]:
        """The spine in [s - max mw, e] and each source in that range widened by its own look_back_time."""
        spine_first = first - self.reach.wait
        ranges = {"source_a": (spine_first, last)}
        ranges.update({f.role: (spine_first - f.look_back_time, last) for f in self.job.features})
        return ranges

    def join_conds(self) -> tuple[str | None, ...]:
        return tuple(f.join_cond for f in self.job.features)

    def key_columns(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        joined = [(f.role, tuple(f.join_cols)) for f in self.job.features if f.join_cols]
        spine_keys = tuple(dict.fromkeys(key for _, keys in joined for key in keys))
        return (("source_a", spine_keys), *joined) if joined else ()

    def remembered(self) -> dict[str, object]:
        """The spine's settings, the sources by name, and each source's join."""
        job = self.job
        spine: dict[str, object] = {
            "start_date": job.start_date.isoformat(),
            "source_a.where": job.source_a.where,
            "join.how": None,  # as a two-source job records it: a job turned into a feature job is a change
            "join.inc_col": job.join.inc_col,
            **({"source_a.inc_col": job.source_a.inc_col} if job.source_a.inc_col else {}),  # only when set
            "join.time_uom": job.join.time_uom,
            "join.include_waiting": job.join.include_waiting,
            "target.keys": list(job.target.keys),
            "features": [f.name for f in job.features],
        }
        for feature in job.features:
            spine[feature.role] = feature.model_dump(
                mode="json", exclude={"path", "table", "name", *(() if feature.inc_col else ("inc_col",))},
                exclude_defaults=False,
            )  # fmt: skip
        return spine

    def summary(self) -> list[tuple[str, str]]:
        return [
            (
                f.role,
                f"{f.how} on {', '.join(f.join_cols) or str(f.join_cond)}; look back {f.look_back_time}, "
                f"wait {f.max_waiting_time}",
            )
            for f in self.job.features
        ]

    def described(self) -> list[tuple[str, str]]:
        job = self.job
        lines = [("spine", f"{job.source_a.label} (A): {job.inc_col_of('source_a')} present")]
        lines += [
            (f.role, f"{f.label}: {f.how} on {', '.join(f.join_cols) or f.join_cond}, columns {f.out_prefix}*"
             + (f", dated by {f.inc_col}" if f.inc_col else ""))
            for f in job.features
        ]  # fmt: skip
        return lines

    def plan(self, schemas: Mapping[str, T.StructType]) -> FeaturePlan:
        """`check_feature_job` on the spine's and the sources' schemas (by role), once."""
        check_feature_job(self.job, schemas["source_a"], feature_sources(self.job, schemas))
        return FeaturePlan(self.job, feature_identity(self.job), schemas, self.read_ranges)


@dataclass(frozen=True)
class FeatureJoin:
    """The spine joined with its feature sources for any window."""

    job: JobConfig
    joined: JoinedFeatures  # the sources' joins, planned once
    identity: Identity
    origins: Mapping[str, tuple[str, str]]
    frames: Mapping[str, DataFrame]
    read_ranges: Ranges  # FeatureJob.read_ranges: each source's units for a window
    rows: WindowRows = whole_tables  # each source's rows of a window's units, where read apart from the tables

    @property
    def late_search(self) -> LateSearch | None:
        """None: a feature job looks for no too-late rows (its sources have no single A row to be late for)."""
        return None

    def join(self, first: int, last: int) -> WindowJoin:
        """`join_features` for [first, last], as planned once; the scans are each source's rows in
        `FeatureJob.read_ranges` (the files of those units where `rows` reads them, else the whole tables)."""
        from deltainc.join.columns import source_filter
        from deltainc.join.features import join_features

        job, uom = self.job, self.job.join.time_uom
        ranges = self.read_ranges(first, last)
        frames = {role: window_rows_of(self.rows, self.frames, role, *ranges[role]) for role in self.frames}
        scans = tuple(
            SourceScan(role, frame.where(source_filter(frame, job.inc_col_of(role), uom, *ranges[role])), ranges[role])
            for role, frame in frames.items()
        )
        sources = {feature.name: frames[feature.role] for feature in self.job.features}
        output = join_features(self.joined, first, last, frames["source_a"], sources)
        return WindowJoin(output, scans)


@dataclass(frozen=True)
class FeaturePlan:
    """A feature job checked against its spine's and sources' schemas."""

    job: JobConfig
    identity: Identity
    schemas: Mapping[str, T.StructType]
    read_ranges: Ranges

    def prepare(self, frames: Mapping[str, DataFrame], rows: WindowRows = whole_tables) -> FeatureJoin:
        """Joined to the rows (a window's through `rows` where it reads them apart); the one check left, resolving
        the sources' join conditions, is Spark's analyzer's."""
        from deltainc.join.feature_source import resolve_feature_conds
        from deltainc.join.features import prepare_features

        spine = frames["source_a"]
        sources = feature_sources(self.job, frames)
        settings = feature_settings(self.job)
        resolve_feature_conds(spine, sources, settings)
        origins = feature_origins(spine, sources, self.job)
        ordered = {"source_a": spine} | {f.role: frames[f.role] for f in self.job.features}
        joined = prepare_features(spine, sources, settings)
        return FeatureJoin(self.job, joined, self.identity, origins, ordered, self.read_ranges, rows)


def _source(feature: FeatureConfig, frame: DataFrame | T.StructType) -> FeatureSource:
    from deltainc.join.feature_source import FeatureSource

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
        inc_col=feature.inc_col,
    )


def feature_settings(job: JobConfig) -> IncJoinSettings:
    """The engine's settings of a feature job: `[join]`'s, and the spine's own incremental column when it names one
    (each feature source's is its `FeatureSource.inc_col`)."""
    return job.join.engine_settings().model_copy(update={"inc_col_name_a": job.source_a.inc_col})


def feature_sources(job: JobConfig, frames: Mapping[str, DataFrame | T.StructType]) -> tuple[FeatureSource, ...]:
    """The job's feature sources for the engine, each with its rows or only its schema (`frames` by role,
    features[name])."""
    return tuple(_source(feature, frames[feature.role]) for feature in job.features)


def feature_identity(job: JobConfig) -> Identity:
    """What identifies a target row: the spine row (target.keys and its RecDate), and for the one source that
    may match several rows, its keys and its row's RecDate."""
    from deltainc.join.feature_source import spine_rec

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
        a_rec=spine_rec(feature_settings(job)),
        b_keys=b_keys,
        b_rec=b_rec,
        key_names=(*job.target.keys, *names),
        b_setting=b_setting,
        fan_out=" or ".join(lefts) or None,
    )


def feature_origins(df_a: DataFrame, sources: tuple[FeatureSource, ...], job: JobConfig) -> dict[str, tuple[str, str]]:
    """Output column -> (the source's role, its column), for messages and the checks of new columns."""
    from deltainc.join.feature_source import feature_columns, spine_rec

    inc, inc_a = job.join.inc_col, job.inc_col_of("source_a")
    origins = {(spine_rec(feature_settings(job)) if c == inc_a else c): ("source_a", c) for c in df_a.columns}
    for source in sources:
        for name in feature_columns(source, inc):
            column = name[len(source.out_prefix) :]
            column = source.inc_of(inc) if column == inc else column  # its row's RecDate is its own column's
            if column in source.schema.fieldNames():
                origins[name] = (f"features[{source.name}]", column)
    return origins


def check_feature_job(job: JobConfig, spine: DataFrame | T.StructType, sources: tuple[FeatureSource, ...]) -> None:
    """Everything `feature_join` checks (names, collisions, columns, join conditions), and that the target's
    identity and partitioning are output columns; raises ConfigError or SchemaError naming the source.

    Every check on the schemas comes first, so that the Delta logs (given the schemas) and Spark (given the
    DataFrames) refuse a job with the same message; then, given DataFrames, the join conditions are resolved."""
    from pyspark.sql import types as T

    from deltainc.join.feature_source import check_features, resolve_feature_conds

    settings = feature_settings(job)
    schema = spine if isinstance(spine, T.StructType) else spine.schema
    try:
        output = check_features(schema, sources, job.target.keys, settings)
    except (ConfigError, SchemaError) as exc:
        text = str(exc).replace("inc_col_name_a:", "source_a.inc_col:").replace("inc_col_name:", "join.inc_col:")
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
