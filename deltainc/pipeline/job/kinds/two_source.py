"""A two-source job as a kind of job (`job_kind.JobKind`): A joined with one B by `[join]`; and `kind_of`, the one
place that asks which kind a job file describes (a feature job when it lists `[[features]]`, else this kind).

What it says from the job file alone needs no pyspark; its check against A's and B's schemas (`plan_join`: the
join's checks, the target's identity and the output columns the writers need) runs once, from the Delta logs
before Spark starts or from Spark's, and the plan joined to their rows joins any window with the engine's prepared
path (`join_prepared`), with no check again. The engine's modules that import pyspark are imported where used."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from deltainc.errors import ConfigError, SchemaError, did_you_mean
from deltainc.join.options import DEFAULT_OUTPUT_SELECT, IncJoinSettings
from deltainc.join.output_layout import IS_FINAL, JOIN_TYPE, WAITING_TIME, plan_layout
from deltainc.join.windows import open_read_bounds
from deltainc.pipeline.job.chain_suffixes import chain_suffixes
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds.feature_job import FeatureJob
from deltainc.pipeline.job.kinds.job_kind import (
    Identity,
    JobKind,
    LateSearch,
    SourceScan,
    SpineReach,
    WindowJoin,
    WindowRows,
    whole_tables,
    window_rows_of,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql import types as T

    from deltainc.join.join_spec import JoinSpec
    from deltainc.join.options import How

__all__ = ["TwoSourceJob", "TwoSourcePlan", "TwoSourceJoin", "kind_of", "output_select", "plan_join"]


@dataclass(frozen=True)
class TwoSourceJob:
    """A job with `[source_b]`: A waits for its B within the sliding join window of `[join]`."""

    job: JobConfig

    @property
    def reach(self) -> SpineReach:
        join = self.job.join
        return SpineReach(join.look_back_time, join.max_waiting_time, join.how == "full_outer")  # B waits for A

    @property
    def others(self) -> str:
        return "source_b"

    @property
    def outcome_kind(self) -> How:
        return self.job.outcome_kind  # its join.how

    def source_reads(self, reads: Mapping[str, tuple[int, int]]) -> str | None:
        """None: files_read_a and files_read_b are A's and B's own."""
        return None

    def read_ranges(self, first: int, last: int) -> dict[str, tuple[int, int]]:
        """A in [s - mw, e] and B in [s - lb - mw, e] (A from further back when B waits: `open_read_bounds`)."""
        bounds = open_read_bounds(first, last, *self.reach)
        return {"source_a": (bounds.a_start, bounds.a_end), "source_b": (bounds.b_start, bounds.b_end)}

    def join_conds(self) -> tuple[str | None, ...]:
        return (self.job.join.join_cond,)

    def key_columns(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        keys = tuple(self.job.join.join_cols)
        return (("source_a", keys), ("source_b", keys)) if keys else ()

    def remembered(self) -> dict[str, object]:
        job, join, target = self.job, self.job.join, self.job.target
        asof = {f"join.{name}": getattr(join, name) for name in ("asof_strategy", "asof_col", "asof_col_b")}
        return {
            "start_date": job.start_date.isoformat(),
            "source_a.where": job.source_a.where,
            "source_b.where": dict(job.sources)["source_b"].where,
            "join.how": join.how,
            "join.join_cols": list(join.join_cols),
            "join.join_cond": join.join_cond,
            "join.inc_col": join.inc_col,
            **{f"{role}.inc_col": ref.inc_col for role, ref in job.sources if ref.inc_col},  # only when set
            "join.time_uom": join.time_uom,
            "join.look_back_time": join.look_back_time,
            "join.max_waiting_time": join.max_waiting_time,
            "join.include_waiting": join.include_waiting,
            "join.enforce_sliding_join_window": join.enforce_sliding_join_window,
            "target.keys": list(target.keys),
            "target.b_keys": list(target.b_keys),
            **(asof if join.how == "asof" else {}),
        }

    def _inc_cols(self) -> str:
        """The incremental column, or each source's when they differ: "RecDate", "RecTs (A), RecDate (B)"."""
        a, b = self.job.inc_col_of("source_a"), self.job.inc_col_of("source_b")
        return a if a == b else f"{a} (A), {b} (B)"

    def _on(self) -> str:
        join = self.job.join
        return ", ".join(join.join_cols) or str(join.join_cond)

    def summary(self) -> list[tuple[str, str]]:
        join = self.job.join
        return [
            ("join", f"{join.how} on {self._on()}"),
            ("look back / wait", f"{join.look_back_time} / {join.max_waiting_time} {join.time_uom}(s)"),
        ]

    def described(self) -> list[tuple[str, str]]:
        join, sources = self.job.join, dict(self.job.sources)
        return [
            (
                "sources",
                f"{sources['source_a'].label} (A), {sources['source_b'].label} (B): join {join.how} on {self._on()}, "
                f"{self._inc_cols()} present, types compatible",
            )
        ]

    def plan(self, schemas: Mapping[str, T.StructType]) -> TwoSourcePlan:
        """`plan_join`'s checks on A's and B's schemas (by role), once."""
        spec, identity = plan_join(self.job, schemas["source_a"], schemas["source_b"])
        return TwoSourcePlan(self.job, spec, identity, schemas)


@dataclass(frozen=True)
class TwoSourceJoin:
    """The join of A and B for any window: the checked spec, the rows, the target's identity."""

    spec: JoinSpec
    identity: Identity
    origins: Mapping[str, tuple[str, str]]
    frames: Mapping[str, DataFrame]  # read by Spark when first asked (`SourceFrames`)
    schemas: Mapping[str, T.StructType]  # their columns, known without a read
    horizon: int  # how far after its A row a too-late B row is looked for; 0 = not at all
    rows: WindowRows = whole_tables  # A's and B's rows of a window's units, where read apart from the tables

    @property
    def late_search(self) -> LateSearch | None:
        return None if self.horizon == 0 else LateSearch(self.frames, self.spec, self.horizon, self.schemas["source_b"])

    def join(self, first: int, last: int) -> WindowJoin:
        """The engine's output for [first, last]: A read in [s - mw, e], B in [s - lb - mw, e] (the files of
        those units where `rows` reads them, else the whole tables, pruned by Spark)."""
        from deltainc.join.engine import join_prepared, read_sources

        spec = replace(self.spec, start=first, end=last)
        bounds = open_read_bounds(first, last, spec.look_back_time, spec.max_waiting_time, spec.b_waits)
        df_a = window_rows_of(self.rows, self.frames, "source_a", bounds.a_start, bounds.a_end)
        df_b = window_rows_of(self.rows, self.frames, "source_b", bounds.b_start, bounds.b_end)
        scan_a, scan_b = read_sources(df_a, df_b, spec)
        scans = (
            SourceScan("source_a", scan_a, (bounds.a_start, bounds.a_end)),
            SourceScan("source_b", scan_b, (bounds.b_start, bounds.b_end)),
        )
        return WindowJoin(join_prepared(df_a, df_b, spec), scans)


@dataclass(frozen=True)
class TwoSourcePlan:
    """A two-source job checked against A's and B's schemas."""

    job: JobConfig
    spec: JoinSpec
    identity: Identity
    schemas: Mapping[str, T.StructType]

    def prepare(self, frames: Mapping[str, DataFrame], rows: WindowRows = whole_tables) -> TwoSourceJoin:
        """Joined to A's and B's rows (a window's through `rows` where it reads them apart); the one check left,
        resolving `join_cond`, is Spark's analyzer's."""
        from deltainc.join.join_spec import resolve_join_cond

        if self.spec.join_cond is not None:  # Spark's analyzer resolves it on the tables' rows
            resolve_join_cond(frames["source_a"], frames["source_b"], self.spec.join_cond, self.spec.settings)
        layout = self.spec.layout
        origins = {out: ("source_a", col) for col, out in layout.a_names} | {
            out: ("source_b", col) for col, out in layout.b_names
        }
        return TwoSourceJoin(self.spec, self.identity, origins, frames, self.schemas, self.job.join.horizon, rows)


def output_select(job: JobConfig, a_cols: list[str], b_cols: list[str], base: IncJoinSettings) -> tuple[str, Identity]:
    """The engine's output_select for the target: the job's choice plus every column the MERGE needs."""
    join, how = job.join, job.outcome_kind  # a two-source job: its join.how
    layout = plan_layout(a_cols, b_cols, join.join_cols, how, base)
    for field_name, columns, source, side in (
        ("target.keys", job.target.keys, a_cols, "source_a"),
        ("target.b_keys", job.target.b_keys, b_cols, "source_b"),
    ):
        for column in columns:
            if column not in source:
                raise SchemaError(
                    f"{field_name}: column {column!r} missing from {side} (columns: {', '.join(source)})"
                    + did_you_mean(column, source)
                )
    if join.how == "left_anti" and job.target.b_keys:
        raise ConfigError("target.b_keys: a left_anti job outputs no B columns; remove target.b_keys")
    identity = Identity(
        a_keys=tuple(layout.a_name(k) for k in job.target.keys),
        a_rec=layout.a_name(job.inc_col_of("source_a")),
        b_keys=tuple(layout.b_name(k) for k in job.target.b_keys),
        b_rec=None if join.how == "left_anti" else layout.b_name(job.inc_col_of("source_b")),
        key_names=(*job.target.keys, *job.target.b_keys),
    )
    # The output RecDate places every row in time: the forward write replaces slices of it.
    required = [*identity.columns, layout.inc_col, *([WAITING_TIME] if join.include_waiting else []), JOIN_TYPE]
    chosen = join.output_select or DEFAULT_OUTPUT_SELECT
    select = ", ".join([chosen, *required])
    selected = plan_layout(a_cols, b_cols, join.join_cols, how, base.model_copy(update={"output_select": select}))
    for column in job.target.partition_by or ():
        if column not in selected.selected and column != IS_FINAL:
            raise ConfigError(
                f"target.partition_by: {column!r} is not an output column (output: {', '.join(selected.selected)})"
            )
    return select, identity


def plan_join(job: JobConfig, schema_a: T.StructType, schema_b: T.StructType) -> tuple[JoinSpec, Identity]:
    """The job's join and its target identity checked against the sources' schemas: everything but resolving
    `join_cond`, which needs Spark's analyzer. Raises ConfigError or SchemaError naming the setting."""
    from deltainc.join.join_spec import check_join

    join = job.join
    base = join.engine_settings(job.target.b_keys).model_copy(
        update={
            "output_select": DEFAULT_OUTPUT_SELECT,
            "inc_col_name_a": job.source_a.inc_col,
            "inc_col_name_b": dict(job.sources)["source_b"].inc_col,
        }
    )
    base = chain_suffixes(job, schema_a.fieldNames(), schema_b.fieldNames(), base)  # a job on another's target

    try:  # the sources and the join first, so that their errors come before the target's
        spec = check_join(schema_a, schema_b, job.outcome_kind, join.join_cols, join.join_cond, join.look_back_time,
                          join.max_waiting_time, None, None, base)  # fmt: skip
    except (ConfigError, SchemaError) as exc:
        raise _in_job_terms(exc) from None
    select, identity = output_select(job, schema_a.fieldNames(), schema_b.fieldNames(), base)
    # The output's columns are the one thing the target changes: the checks above hold for them as they are.
    options = base.model_copy(update={"output_select": select})
    layout = plan_layout(schema_a.fieldNames(), schema_b.fieldNames(), spec.join_cols, spec.how, options)
    return replace(spec, settings=options, layout=layout), identity


def _in_job_terms(error: ConfigError | SchemaError) -> ConfigError | SchemaError:
    """The engine's error with its setting named as a job file names it (`inc_col_name` is `join.inc_col`)."""
    text = str(error)
    for side in ("a", "b"):  # a source's own inc_col
        if text.startswith(f"inc_col_name_{side}:"):
            return type(error)(f"source_{side}.inc_col:" + text.removeprefix(f"inc_col_name_{side}:"))
    if text.startswith("inc_col_name:"):
        return type(error)("join.inc_col:" + text.removeprefix("inc_col_name:"))
    return error


def kind_of(job: JobConfig) -> JobKind:
    """The job's kind: a feature job when it lists `[[features]]`, else a two-source job (`JobConfig` accepts one
    form or the other).

    Example:
        ```python
        kind = kind_of(load_job("conf/jobs/bank_trx.toml"))
        kind.read_ranges(first, last)  # {'source_a': (...), 'source_b': (...)}
        ```
    """
    return FeatureJob(job) if job.features else TwoSourceJob(job)
