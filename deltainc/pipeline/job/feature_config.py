"""One `[[features]]` source of a feature job: its table, how it joins the spine, and the columns it adds."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from deltainc.join.options import AsofStrategy, Text, canonical_how
from deltainc.pipeline.job.choices import FeatureHow
from deltainc.pipeline.job.field_types import Columns, Name, NonNegativeInt
from deltainc.pipeline.job.table_refs import SourceRef

__all__ = ["FeatureConfig"]


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
