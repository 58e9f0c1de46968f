"""The job file's sections: a Delta table by path or name (a source adds which rows are joined), `[join]` (how A
joins B, and its one conversion to the engine's settings), a `[[features]]` source, `[target]` and `[state]`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field, field_validator, model_validator

from deltainc.join.options import (
    ASOF_NEEDS_SLIDING_WINDOW,
    DEFAULT_OUTPUT_SELECT,
    HOW_CHOICES,
    AsofStrategy,
    How,
    IncJoinSettings,
    JoinOptions,
    Text,
    canonical_how,
)
from deltainc.pipeline.job.field_types import (
    Columns,
    Corrections,
    FeatureHow,
    ForwardWrite,
    Location,
    Name,
    NonNegativeInt,
    SchemaEvolution,
    Section,
    StrictBool,
    absolute_location,
    looks_like_path,
)

__all__ = ["TableRef", "SourceRef", "JoinConfig", "FeatureConfig", "TargetConfig", "StateConfig"]


class TableRef(Section):
    """A Delta table given by exactly one of `path` (a Delta path) or `table` (a catalog name)."""

    path: Location | None = None
    table: Text | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> TableRef:
        if (self.path is None) == (self.table is None):
            found = "both" if self.path is not None else "neither"
            raise ValueError(f"give exactly one of 'path' or 'table' (got {found})")
        return self

    @property
    def label(self) -> str:
        """A human label for messages and logs: 'path data/x' or 'table db.x'."""
        return f"path {self.path}" if self.path is not None else f"table {self.table}"


class SourceRef(TableRef):
    """A source table, and optionally which of its rows the job joins."""

    # A Spark SQL condition on the source's columns: only rows where it holds are joined, in every window alike
    # (e.g. "OrderId IS NOT NULL" leaves out rows whose key is NULL). A change is a change of the target's rows.
    where: Text | None = None
    # The source's own incremental column (a DATE, or a TIMESTAMP read by its day in a day job) when it is named
    # otherwise than [join] inc_col, which stays the output's RecDate and the default of every source.
    inc_col: Text | None = None
    # Another job of the job directory whose target's final rows this source is (`job = "shipments_scans"` in the
    # job file, which `load_job` turns into that target's path or table, `where = "IsFinal"` and the upstream's
    # state folder): the source then reaches no further than that job's watermark.
    job: Name | None = None
    job_state: Location | None = None  # the upstream's state folder; None = the settings' state_dir
    # That job as load_job read its file (a JobConfig): its settings decide this source's rows, so this job
    # remembers them as its own (`source_a.job.join.max_waiting_time`, ... in state/window_row.built_with).
    upstream: Any = Field(default=None, exclude=True, repr=False)

    @model_validator(mode="after")
    def _job_state_with_job(self) -> SourceRef:
        for name in ("job_state", "upstream"):
            if getattr(self, name) is not None and self.job is None:
                raise ValueError(f"{name}: only with job (load_job sets it from the upstream's job file)")
        return self


class JoinConfig(JoinOptions):
    """How A joins B: join type, keys or condition, incremental column and the late-arrival tolerances; the
    options it shares with the engine's IncJoinSettings (aliases, time_uom, asof_*) are `JoinOptions`'."""

    how: How | None = None  # None only in a job with [[features]], where each source has its own
    join_cols: Columns = Field(default_factory=list)
    join_cond: Text | None = None
    inc_col: Text = "RecDate"
    look_back_time: NonNegativeInt = 0
    max_waiting_time: NonNegativeInt = 0
    # Unlike the engine's default (False), a job keeps its waiting rows in the target, where the next window
    # replaces them. The job file's flags are strict: "yes" is no boolean.
    include_waiting: StrictBool = True
    enforce_sliding_join_window: StrictBool = True
    # B rows arriving after the A row they match timed out are counted (and kept with target.late_rows) up to
    # this many units after that A row; None = 2 x max_waiting_time, 0 = not looked for (reads stay smaller).
    late_horizon: NonNegativeInt | None = None
    output_select: Text | None = None

    @field_validator("how", mode="before")
    @classmethod
    def _normalise_how(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        how = canonical_how(value)
        if how is None:
            raise ValueError(f"expected one of {HOW_CHOICES}, got {value!r}")
        return how

    def engine_settings(self, tie_break: Sequence[str] = ()) -> IncJoinSettings:
        """The engine's settings for this job's join: the one conversion from the job file to `inc_join`.

        The shared options are copied (the asof ones for an asof job only); a job's B side waits for its A
        (docs/design.md#the-b-side-and-too-late-rows) so that full_outer output is window-invariant; an asof
        job orders equally near B rows by `tie_break` (the target's b_keys).
        """
        shared = {name for name in JoinOptions.model_fields if self.how == "asof" or not name.startswith("asof_")}
        options: dict[str, Any] = self.model_dump(include=shared)
        if self.how == "asof":
            options["asof_tie_break"] = tuple(tie_break)
        return IncJoinSettings(
            **options,
            inc_col_name=self.inc_col,
            b_waits_for_a=self.how == "full_outer",
            output_select=self.output_select or DEFAULT_OUTPUT_SELECT,
        )

    @property
    def horizon(self) -> int:
        """How far after its A row a too-late B row is still looked for (0 = not at all; asof jobs: not at all)."""
        if self.how in ("asof", None):  # a feature job does not look for them either
            return 0
        return 2 * self.max_waiting_time if self.late_horizon is None else self.late_horizon

    @model_validator(mode="after")
    def _check_join(self) -> JoinConfig:
        if self.how is None:  # a feature job's [join] holds the spine's options; JobConfig checks the rest
            return self
        if not self.join_cols and self.join_cond is None:
            raise ValueError("give join_cols or join_cond (or both)")
        if self.how == "full_outer" and not self.enforce_sliding_join_window:
            raise ValueError(
                "a full_outer job needs enforce_sliding_join_window = true: without it unmatched B rows depend "
                "on the window's size"
            )
        if self.how == "asof" and not self.enforce_sliding_join_window:
            raise ValueError(f"an asof job {ASOF_NEEDS_SLIDING_WINDOW}")
        if self.how != "asof" and self.asof_options_given():
            raise ValueError(f'{self.asof_options_given()[0]}: only for how = "asof" (how is {self.how!r})')
        if self.how == "asof" and self.late_horizon:
            raise ValueError(
                "late_horizon: an asof job does not look for too-late B rows (a later B row is a candidate of "
                "later A rows, not a late match); remove it"
            )
        if self.late_horizon is not None and 0 < self.late_horizon <= self.max_waiting_time:
            raise ValueError(
                f"late_horizon: must be 0 (off) or more than max_waiting_time ({self.max_waiting_time}), "
                f"got {self.late_horizon}"
            )
        return self


class FeatureConfig(SourceRef):
    """One `[[features]]` source of a feature job: its table, how it joins the spine (source_a), the columns it
    adds (named `prefix` + column) and, for a `left` source that can match several rows, what identifies one."""

    name: Name
    how: FeatureHow
    join_cols: Columns = Field(default_factory=list)
    join_cond: Text | None = None
    look_back_time: NonNegativeInt = 0
    max_waiting_time: NonNegativeInt = 0
    asof_strategy: AsofStrategy = "backward"
    asof_col: Text | None = None
    asof_col_b: Text | None = None
    columns: Columns | None = None  # None = every column but the join keys and the incremental column
    prefix: str | None = None  # None = name + "_"; "" = the source's own column names
    keys: Columns = Field(default_factory=list)  # a left source's columns that tell its matches of one row apart

    @field_validator("how", mode="before")
    @classmethod
    def _normalise_how(cls, value: Any) -> Any:
        how = canonical_how(value) if isinstance(value, str) else None
        if how not in tuple(FeatureHow):
            raise ValueError(f"a feature source joins as 'left' or 'asof', got {value!r}")
        return how

    @model_validator(mode="after")
    def _check_source(self) -> FeatureConfig:
        if not self.join_cols and self.join_cond is None:
            raise ValueError("give join_cols or join_cond (or both)")
        given = [n for n in ("asof_col", "asof_col_b", "asof_strategy") if n in self.model_fields_set]
        if self.how != FeatureHow.ASOF and given:
            raise ValueError(f'{given[0]}: only for how = "asof" (how is {str(self.how)!r})')
        if self.how == FeatureHow.ASOF and self.keys:
            raise ValueError("keys: an asof source gives each spine row one match; keys are for a left source")
        if self.asof_col_b is not None and self.asof_col is None:
            raise ValueError("asof_col_b: needs asof_col (the spine's time column); asof_col alone names both")
        return self

    @property
    def out_prefix(self) -> str:
        """What the source's output columns start with."""
        return f"{self.name}_" if self.prefix is None else self.prefix

    @property
    def role(self) -> str:
        """How messages and the run log name the source: features[name]."""
        return f"features[{self.name}]"


class TargetConfig(TableRef):
    """The Delta target: where it lives, the identity of an A record and of a B record, its layout."""

    keys: Columns
    b_keys: Columns = Field(default_factory=list)
    # None = the default layout: partitioned by the output RecDate and IsFinal (the open rows apart) for day jobs,
    # by IsFinal alone with files sorted by RecDate for hour and minute jobs; [] = no partitioning (the open rows
    # are then found by JoinType). Applied when the target is created (or by `deltainc migrate`); an existing
    # table keeps its own, read from its log.
    partition_by: Columns | None = None
    # None = on only where the layout's forward writes delete rows from files that keep other rows (a partition_by
    # without IsFinal: the earlier layout); the default layout replaces whole files and gets no deletion vectors, so
    # delta-rs' pyarrow readers (pandas, polars, DuckDB) can read the target. true / false: as asked. Applied when
    # the target is created; `deltainc migrate` drops the feature from a target whose writes never need it.
    deletion_vectors: StrictBool | None = None
    forward_write: ForwardWrite = ForwardWrite.REPLACE_WHERE
    # A Delta table for too-late B rows: a path ('/data/late', './late', 's3://...') or a catalog table name.
    late_rows: Text | None = None
    # What a rerun does with rows the sources corrected in the past (a backdated B row for a timed-out A row):
    # "apply" recomputes through the watermark, so the target equals a reload; "keep" keeps what the target has
    # and only counts such rows as too late.
    corrections: Corrections = Corrections.APPLY
    # A column added to a source: "none" refuses the run naming it; "add_columns" adds it to the target through
    # Delta's schema evolution (rows already there read NULL). A dropped or retyped column is always refused.
    schema_evolution: SchemaEvolution = SchemaEvolution.NONE
    # Create the target with Delta's Change Data Feed, so consumers read each run's changes (table_changes).
    change_data_feed: StrictBool = False

    @field_validator("late_rows")
    @classmethod
    def _late_rows_location(cls, value: str | None) -> str | None:
        return absolute_location(value) if value is not None and looks_like_path(value) else value

    @property
    def late_rows_ref(self) -> TableRef | None:
        """`late_rows` as a table reference: a path if it looks like one, else a catalog table name."""
        if self.late_rows is None:
            return None
        if looks_like_path(self.late_rows):
            return TableRef(path=self.late_rows)
        return TableRef(table=self.late_rows)

    @field_validator("keys")
    @classmethod
    def _keys_not_empty(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("must list at least one column")
        return value


class StateConfig(Section):
    """Where the watermark table and the run log live; None = the settings' state_dir."""

    path: Location | None = None
