"""A job's join planned from its sources' schemas alone: the checks of the join, the target's identity columns
and the output columns the writers need. Pure (no Spark session, no data), so that a job can be checked from
its sources' Delta logs before Spark starts (`from_delta_logs/checks.py`) and by `prepare_job` alike."""

from __future__ import annotations

from dataclasses import dataclass, replace

from pyspark.sql import types as T

from deltainc.errors import ConfigError, SchemaError
from deltainc.join.join_spec import JoinSpec, check_join
from deltainc.join.options import DEFAULT_OUTPUT_SELECT, IncJoinSettings
from deltainc.join.output_layout import IS_FINAL, JOIN_TYPE, WAITING_TIME, plan_layout
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.suggestions import did_you_mean

__all__ = ["Identity", "output_select", "plan_join"]


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
        a_rec=layout.a_name(join.inc_col),
        b_keys=tuple(layout.b_name(k) for k in job.target.b_keys),
        b_rec=None if join.how == "left_anti" else layout.b_name(join.inc_col),
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
    join = job.join
    base = join.engine_settings(job.target.b_keys).model_copy(update={"output_select": DEFAULT_OUTPUT_SELECT})

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
    if text.startswith("inc_col_name:"):
        return type(error)("join.inc_col:" + text.removeprefix("inc_col_name:"))
    return error
