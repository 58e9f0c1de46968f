"""Which columns the join outputs and under which names: pure bookkeeping over column lists."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from deltainc.errors import ConfigError, SchemaError
from deltainc.join.options import IncJoinSettings
from deltainc.join.output_names import (
    DIFF_ARRIVAL_TIME,
    IS_FINAL,
    JOIN_TYPE,
    WAITING_TIME,
    collision_message,
    derived_columns,
    first_collision,
    output_candidates,
    source_names,
)

__all__ = [
    "OutputLayout",
    "plan_layout",
    "DIFF_ARRIVAL_TIME",
    "WAITING_TIME",
    "JOIN_TYPE",
    "IS_FINAL",
    "RESERVED_PREFIX",
]

RESERVED_PREFIX = "__di_"  # the engine's working columns (unit index, A row id); no source column may start with it


@dataclass(frozen=True)
class OutputLayout:
    """Output names of every column and the selected output, in order."""

    join_cols: tuple[str, ...]
    inc_col: str
    a_names: tuple[tuple[str, str], ...]  # (source column of A, output name), keys excluded
    b_names: tuple[tuple[str, str], ...]  # (source column of B, output name); empty for left_anti
    derived: tuple[str, ...]
    selected: tuple[str, ...]

    def a_name(self, column: str) -> str:
        """Output name of A's `column` (a join key keeps its name)."""
        return column if column in self.join_cols else dict(self.a_names)[column]

    def b_name(self, column: str) -> str:
        """Output name of B's `column` (a join key keeps its name)."""
        return column if column in self.join_cols else dict(self.b_names)[column]


def plan_layout(
    a_columns: Sequence[str],
    b_columns: Sequence[str],
    join_cols: Sequence[str],
    how: str,
    settings: IncJoinSettings,
) -> OutputLayout:
    """Name every output column, reject collisions, and resolve `output_select` into an ordered list."""
    for side, columns in (("source_a", a_columns), ("source_b", b_columns)):
        reserved = [c for c in columns if c.lower().startswith(RESERVED_PREFIX)]
        if reserved:
            raise SchemaError(f"{side}: column names starting with {RESERVED_PREFIX!r} are reserved: {reserved}")
    inc = settings.inc_col_name
    a_names = [(n.column, n.name) for n in source_names(a_columns, b_columns, join_cols, settings, "source_a")]
    b_names = (
        []
        if how == "left_anti"
        else [(n.column, n.name) for n in source_names(b_columns, a_columns, join_cols, settings, "source_b")]
    )
    derived = derived_columns(how, settings)
    candidates = output_candidates(a_columns, b_columns, join_cols, how, settings)
    collision = first_collision(candidates)
    if collision is not None:
        raise SchemaError(collision_message(collision, a_columns, b_columns, join_cols, how, settings))

    a_map, b_map = dict(a_names), dict(b_names)
    tokens: dict[str, list[str]] = {
        "join_cols": list(join_cols),
        "inc_col": [inc],
        "df_a_cols": [out for _, out in a_names],
        "df_b_cols": [out for _, out in b_names],
        "inc_col_a": [a_map[inc]] if inc in a_map else [],
        "inc_col_b": [b_map[inc]] if inc in b_map else [],
        "diffarrivaltime": [DIFF_ARRIVAL_TIME] if DIFF_ARRIVAL_TIME in derived else [],
        "waitingtime": [WAITING_TIME] if WAITING_TIME in derived else [],
        "jointype": [JOIN_TYPE],
    }
    by_lower = {name.lower(): name for name, _ in candidates}
    selected: list[str] = []
    for raw in settings.output_select.split(","):
        token = raw.strip()
        if not token:
            continue
        key = token if token in tokens else token.lower()
        if key in tokens:
            names = tokens[key]
        elif token.lower() in by_lower:
            names = [by_lower[token.lower()]]
        else:
            raise ConfigError(
                f"output_select: unknown token or column {token!r}; expected one of "
                f"{', '.join(k for k in tokens if k.islower() and '_' in k)}, DiffArrivalTime, WaitingTime, "
                f"JoinType or an output column ({', '.join(by_lower.values())})"
            )
        selected.extend(n for n in names if n not in selected)
    if not selected:
        raise ConfigError("output_select: selects no column")
    return OutputLayout(
        join_cols=tuple(join_cols),
        inc_col=inc,
        a_names=tuple(a_names),
        b_names=tuple(b_names),
        derived=tuple(derived),
        selected=tuple(selected),
    )
