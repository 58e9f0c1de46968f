"""Where a job writes: its Delta target (`[target]`: identity, layout, write options) and its state (`[state]`)."""

from __future__ import annotations

from pydantic import Field, field_validator

from deltainc.join.options import Text
from deltainc.pipeline.job.field_types import (
    Columns,
    Corrections,
    ForwardWrite,
    Location,
    SchemaEvolution,
    Section,
    StrictBool,
    absolute_location,
    looks_like_path,
)
from deltainc.pipeline.job.table_refs import TableRef

__all__ = ["TargetConfig", "StateConfig"]


class TargetConfig(TableRef):
    """The Delta target: where it lives, the identity of an A record and of a B record, its layout."""

    keys: Columns
    b_keys: Columns = Field(default_factory=list)
    # None = the default layout: partitioned by the output RecDate and IsFinal (the open rows apart) for day jobs,
    # by IsFinal alone with files sorted by RecDate for hour and minute jobs; [] = no partitioning (the open rows
    # are then found by JoinType). Applied when the target is created (or by `deltainc migrate`); an existing
    # table keeps its own, read from its log.
    partition_by: Columns | None = None
    deletion_vectors: StrictBool = True
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
