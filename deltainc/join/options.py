"""The options of a join, validated once: `JoinOptions`, shared by the engine's `IncJoinSettings` (the seed library's
`other_settings`) and the job file's `[join]` (`deltainc.pipeline.job.sections.JoinConfig`)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, field_validator, model_validator

from deltainc.join.time_units import TimeUnit

__all__ = [
    "JoinOptions",
    "IncJoinSettings",
    "DEFAULT_OUTPUT_SELECT",
    "ASOF_NEEDS_SLIDING_WINDOW",
    "AsofStrategy",
    "Text",
    "Identifier",
]

DEFAULT_OUTPUT_SELECT = "join_cols, inc_col, df_a_cols, df_b_cols, DiffArrivalTime, WaitingTime, JoinType"
# Why an as-of join (a job's or the engine's) needs the sliding join window.
ASOF_NEEDS_SLIDING_WINDOW = (
    "needs enforce_sliding_join_window = true: a match is final only once no nearer B row can still arrive, "
    "which the sliding join window bounds"
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _identifier(value: str) -> str:
    if not _IDENTIFIER.fullmatch(value):
        raise ValueError(f"expected an identifier (letters, digits, '_'), got {value!r}")
    return value


Text = Annotated[str, AfterValidator(_not_blank)]
Identifier = Annotated[str, AfterValidator(_identifier)]
AsofStrategy = Literal["backward", "forward", "nearest"]


class JoinOptions(BaseModel):
    """The options a join has wherever it is given (Python or a job file), with their checks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    alias_a: Identifier = "A"
    alias_b: Identifier = "B"
    include_waiting: bool = False
    time_uom: TimeUnit = TimeUnit.DAY
    enforce_sliding_join_window: bool = True
    asof_strategy: AsofStrategy = "backward"
    """asof: which B row is nearest: the latest at or before A's time, the first at or after it, or either side."""
    asof_col: Text | None = None
    """asof: A's date or timestamp column compared exactly; None = the incremental column's units."""
    asof_col_b: Text | None = None
    """asof: B's time column when it is named otherwise than `asof_col` (Polars' right_on)."""

    @model_validator(mode="after")
    def _check_options(self) -> JoinOptions:
        if self.alias_a.lower() == self.alias_b.lower():
            raise ValueError(f"alias_a and alias_b must differ, both are {self.alias_a!r}")
        if self.asof_col_b is not None and self.asof_col is None:
            raise ValueError("asof_col_b: needs asof_col (A's time column); asof_col alone names both")
        return self

    def asof_options_given(self) -> list[str]:
        """The as-of options given, which a join that is not as-of refuses (the first names the refusal)."""
        names = ("asof_col", "asof_col_b", "asof_strategy")
        return [name for name in names if name in self.model_fields_set and getattr(self, name) is not None]


class IncJoinSettings(JoinOptions):
    """Settings of one incremental join besides the keys, the times and the window.

    A frozen pydantic model: an unknown field is an error naming it. The fields a job file sets under `[join]`
    have the same names (`include_waiting`, `time_uom`, `asof_strategy`, ...).

    Example:
        ```python
        from deltainc import IncJoinSettings

        settings = IncJoinSettings(include_waiting=True, time_uom="hour", alias_a="Ledger", alias_b="Sepa")
        ```
    """

    inc_col_name: Text = "RecDate"
    b_waits_for_a: bool = False
    """full_outer: unmatched B rows wait lb units for an A row, like A rows wait mw (window-invariant); False = the
    seed library's rule, unmatched B rows at B.RecDate. Needs enforce_sliding_join_window; ignored by other hows."""
    asof_tie_break: tuple[str, ...] = ()
    """asof: B columns that order equally near B rows (ascending) before B's other columns; e.g. target.b_keys."""
    output_select: str = DEFAULT_OUTPUT_SELECT

    @field_validator("time_uom", mode="before")
    @classmethod
    def _known_unit(cls, value: Any) -> Any:
        """The engine's own message for an unknown unit (a job file gets the enum's, with the file's name)."""
        if value not in tuple(TimeUnit):
            raise ValueError(TimeUnit.unknown(value))
        return value
