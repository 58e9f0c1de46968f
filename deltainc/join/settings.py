"""IncJoinSettings: the seed library's `other_settings`, validated and frozen."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from deltainc.join.windows import TIME_UOMS

__all__ = ["IncJoinSettings", "DEFAULT_OUTPUT_SELECT"]

DEFAULT_OUTPUT_SELECT = "join_cols, inc_col, df_a_cols, df_b_cols, DiffArrivalTime, WaitingTime, JoinType"
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class IncJoinSettings(BaseModel):
    """Settings of one incremental join besides the keys, the times and the window."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    alias_a: str = "A"
    alias_b: str = "B"
    include_waiting: bool = False
    inc_col_name: str = "RecDate"
    time_uom: str = "day"
    enforce_sliding_join_window: bool = True
    b_waits_for_a: bool = False
    """full_outer: unmatched B rows wait lb units for an A row, like A rows wait mw (window-invariant); False = the
    seed library's rule, unmatched B rows at B.RecDate. Needs enforce_sliding_join_window; ignored by other hows."""
    asof_strategy: Literal["backward", "forward", "nearest"] = "backward"
    """asof: which B row is nearest: the latest at or before A's time, the first at or after it, or either side."""
    asof_col: str | None = None
    """asof: A's date or timestamp column compared exactly; None = the incremental column's units."""
    asof_col_b: str | None = None
    """asof: B's time column when it is named otherwise than `asof_col` (Polars' right_on)."""
    asof_tie_break: tuple[str, ...] = ()
    """asof: B columns that order equally near B rows (ascending) before B's other columns; e.g. target.b_keys."""
    output_select: str = DEFAULT_OUTPUT_SELECT

    @field_validator("alias_a", "alias_b")
    @classmethod
    def _alias_is_identifier(cls, value: str) -> str:
        if not _IDENTIFIER.match(value):
            raise ValueError(f"expected a plain identifier (letters, digits, _), got {value!r}")
        return value

    @field_validator("asof_col", "asof_col_b")
    @classmethod
    def _asof_col_not_empty(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("inc_col_name")
    @classmethod
    def _inc_col_not_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("time_uom")
    @classmethod
    def _known_uom(cls, value: str) -> str:
        if value not in TIME_UOMS:
            raise ValueError(f"expected one of {', '.join(TIME_UOMS)}, got {value!r}")
        return value

    @model_validator(mode="after")
    def _asof_col_b_needs_asof_col(self) -> IncJoinSettings:
        if self.asof_col_b is not None and self.asof_col is None:
            raise ValueError("asof_col_b needs asof_col (A's time column)")
        return self

    @model_validator(mode="after")
    def _aliases_differ(self) -> IncJoinSettings:
        if self.alias_a.lower() == self.alias_b.lower():
            raise ValueError(f"alias_a and alias_b must differ, both are {self.alias_a!r}")
        return self
