"""A join's kinds and options: the supported join kinds (`how`), the JoinType codes of its output rows, and
`JoinOptions`, validated once and shared by the engine's `IncJoinSettings` (the seed library's `other_settings`) and
the job file's `[join]` (`deltainc.pipeline.job.sections.JoinConfig`)."""

from __future__ import annotations

import re
from enum import IntEnum
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, field_validator, model_validator

from deltainc.errors import ConfigError
from deltainc.time_units import TimeUnit

__all__ = [
    "JoinType",
    "COUNTED_ORDER",
    "WAITING_TYPES",
    "How",
    "HOWS",
    "HOW_CHOICES",
    "canonical_how",
    "counted_types",
    "normalize_how",
    "JoinOptions",
    "IncJoinSettings",
    "DEFAULT_OUTPUT_SELECT",
    "ASOF_NEEDS_SLIDING_WINDOW",
    "AsofStrategy",
    "Text",
    "Identifier",
]


class JoinType(IntEnum):
    """How an output row came about; codes 0-5 are the seed library's, 6 and 7 are deltainc's own.

    The output's `JoinType` column holds the code; each member also has its name as the run log and `status`
    show it (`outcome`).

    Example:
        ```python
        from deltainc import JoinType

        assert JoinType.A_LATE == 2 and JoinType(5) is JoinType.A_WAITING
        assert JoinType.A_LATE.outcome == "a_late"
        ```
    """

    NOT_MATCHED = 0  # full_outer only: a B row that matched no A row, final (with b_waits_for_a: waited lb)
    SAME_TIME = 1  # matched, A and B arrived in the same unit
    A_LATE = 2  # matched, A arrived after B
    B_LATE = 3  # matched, B arrived after A
    A_TIMED_OUT = 4  # unmatched, waited max_waiting_time
    A_WAITING = 5  # unmatched, still waiting (only with include_waiting)
    B_WAITING = 6  # full_outer with b_waits_for_a: a B row unmatched so far, waiting lb for an A (include_waiting)
    PROVISIONAL = 7  # asof: matched so far, but a nearer B row can still arrive (include_waiting)

    @property
    def outcome(self) -> str:
        """The name rows of this code are counted under (run log rows_<outcome>, a run's line): "same_time"."""
        return self.name.lower()


# The order in which codes are counted (run log, a run's line, the demo's table).
COUNTED_ORDER: tuple[JoinType, ...] = (
    JoinType.SAME_TIME,
    JoinType.A_LATE,
    JoinType.B_LATE,
    JoinType.A_TIMED_OUT,
    JoinType.A_WAITING,
    JoinType.NOT_MATCHED,  # full_outer jobs only, like b_waiting
    JoinType.B_WAITING,
    JoinType.PROVISIONAL,  # asof jobs only
)

# Rows that are not final: they wait at the end of the processed range and are replaced by the next window.
WAITING_TYPES: tuple[JoinType, ...] = (JoinType.A_WAITING, JoinType.B_WAITING, JoinType.PROVISIONAL)
_ONLY_FOR: dict[JoinType, str] = {
    JoinType.NOT_MATCHED: "full_outer",
    JoinType.B_WAITING: "full_outer",
    JoinType.PROVISIONAL: "asof",
}


def counted_types(how: str) -> tuple[JoinType, ...]:
    """The JoinTypes a job of kind `how` counts (run log, a run's line): the B side's only for full_outer,
    provisional only for asof."""
    return tuple(code for code in COUNTED_ORDER if _ONLY_FOR.get(code, how) == how)


How = Literal["inner", "left", "left_anti", "full_outer", "asof"]
HOWS: dict[str, How] = {
    "inner": "inner",
    "left": "left",
    "leftouter": "left",
    "leftanti": "left_anti",
    "anti": "left_anti",
    "full": "full_outer",
    "fullouter": "full_outer",
    "outer": "full_outer",
    "asof": "asof",
}
HOW_CHOICES = "inner, left (left_outer), left_anti, full_outer, asof"


def canonical_how(how: object) -> How | None:
    """The canonical join kind `how` names (case-insensitive, underscores optional), None if it names none."""
    return HOWS.get(str(how).strip().lower().replace("_", ""))


def normalize_how(how: str) -> How:
    """Canonical join kind for `how`; a ConfigError naming the choices when it names none."""
    canonical = canonical_how(how)
    if canonical is None:
        raise ConfigError(f"how: unknown join type {how!r}; expected one of {HOW_CHOICES}")
    return canonical


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
    """The incremental column of both sources, and the output's RecDate column of that name."""
    inc_col_name_a: Text | None = None
    """A's own incremental column (DATE or TIMESTAMP) when it is named otherwise; None = inc_col_name."""
    inc_col_name_b: Text | None = None
    """B's own incremental column (DATE or TIMESTAMP) when it is named otherwise; None = inc_col_name."""
    b_waits_for_a: bool = False
    """full_outer: unmatched B rows wait lb units for an A row, like A rows wait mw (window-invariant); False = the
    seed library's rule, unmatched B rows at B.RecDate. Needs enforce_sliding_join_window; ignored by other hows."""
    asof_tie_break: tuple[str, ...] = ()
    """asof: B columns that order equally near B rows (ascending) before B's other columns; e.g. target.b_keys."""
    output_select: str = DEFAULT_OUTPUT_SELECT

    def inc_col_of(self, side: str) -> str:
        """The incremental column of `side` ("source_a" or "source_b"): its own name, else `inc_col_name`."""
        own = self.inc_col_name_a if side == "source_a" else self.inc_col_name_b
        return own or self.inc_col_name

    def inc_setting(self, side: str) -> str:
        """The setting that names `side`'s incremental column, for messages: `inc_col_name_a`, or `inc_col_name`."""
        own = self.inc_col_name_a if side == "source_a" else self.inc_col_name_b
        return "inc_col_name" if own is None else f"inc_col_name_{side[-1]}"

    @field_validator("time_uom", mode="before")
    @classmethod
    def _known_unit(cls, value: Any) -> Any:
        """The engine's own message for an unknown unit (a job file gets the enum's, with the file's name)."""
        if value not in tuple(TimeUnit):
            raise ValueError(TimeUnit.unknown(value))
        return value
