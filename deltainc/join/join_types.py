"""The JoinType codes of output rows and the supported join kinds (`how`)."""

from __future__ import annotations

from enum import IntEnum
from typing import Literal

from deltainc.errors import ConfigError

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
