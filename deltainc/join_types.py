"""The JoinType codes of output rows and the supported join kinds (`how`)."""

from __future__ import annotations

from enum import IntEnum

from deltainc.errors import ConfigError

__all__ = ["JoinType", "JOIN_TYPE_NAMES", "HOWS", "normalize_how"]


class JoinType(IntEnum):
    """How an output row came about; codes 0-5 are the seed library's, 6 is deltainc's own (B_WAITING)."""

    NOT_MATCHED = 0  # full_outer only: a B row that matched no A row, final (with b_waits_for_a: waited lb)
    SAME_TIME = 1  # matched, A and B arrived in the same unit
    A_LATE = 2  # matched, A arrived after B
    B_LATE = 3  # matched, B arrived after A
    A_TIMED_OUT = 4  # unmatched, waited max_waiting_time
    A_WAITING = 5  # unmatched, still waiting (only with include_waiting)
    B_WAITING = 6  # full_outer with b_waits_for_a: a B row unmatched so far, waiting lb for an A (include_waiting)


# The name of each code where rows are counted (run log rows_<name>, a run's line, the demo's table), in order.
JOIN_TYPE_NAMES: dict[JoinType, str] = {
    JoinType.SAME_TIME: "same_time",
    JoinType.A_LATE: "a_late",
    JoinType.B_LATE: "b_late",
    JoinType.A_TIMED_OUT: "a_timed_out",
    JoinType.A_WAITING: "a_waiting",
    JoinType.NOT_MATCHED: "not_matched",  # full_outer jobs only, like b_waiting
    JoinType.B_WAITING: "b_waiting",
}

HOWS: dict[str, str] = {
    "inner": "inner",
    "left": "left",
    "leftouter": "left",
    "leftanti": "left_anti",
    "anti": "left_anti",
    "full": "full_outer",
    "fullouter": "full_outer",
    "outer": "full_outer",
}


def normalize_how(how: str) -> str:
    """Canonical join kind for `how`: case-insensitive, underscores optional."""
    key = str(how).lower().replace("_", "")
    if key not in HOWS:
        raise ConfigError(
            f"how: unknown join type {how!r}; expected one of inner, left (left_outer), left_anti, full_outer (full)"
        )
    return HOWS[key]
