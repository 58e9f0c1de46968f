"""Which columns the join outputs and under which names: pure bookkeeping over column lists.

A source column keeps its name unless the other source has one of that name, or the join derives one (the output's
RecDate, `DiffArrivalTime`, `WaitingTime`, `JoinType`, and the target's `IsFinal`): then it takes its side's alias as a
suffix (`RecDate_A`). A source that is another job's target already holds such suffixed columns, so a suffix can
still land on a name a source has; the message then names a pair of aliases that leaves every name apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from deltainc.errors import ConfigError, SchemaError
from deltainc.join.options import IncJoinSettings

__all__ = [
    "OutputLayout",
    "plan_layout",
    "DIFF_ARRIVAL_TIME",
    "WAITING_TIME",
    "JOIN_TYPE",
    "IS_FINAL",
    "RESERVED_PREFIX",
    "DERIVED_NAMES",
    "SourceName",
    "source_names",
    "derived_columns",
    "output_candidates",
    "first_collision",
    "collision_message",
]

# The columns the join derives, next to those of the sources.
DIFF_ARRIVAL_TIME, WAITING_TIME, JOIN_TYPE = "DiffArrivalTime", "WaitingTime", "JoinType"
# The column a job's target adds to the join output where its layout holds the open rows apart (pipeline/target/
# layout.py): true for a row no later window can change.
IS_FINAL = "IsFinal"
# Names the output (or the target) derives: a source column so named is suffixed as a name both sources have is.
DERIVED_NAMES = (DIFF_ARRIVAL_TIME, WAITING_TIME, JOIN_TYPE, IS_FINAL)
_SUGGESTED = 9  # alias pairs A2/B2 .. A9/B9 are tried for the message


@dataclass(frozen=True)
class SourceName:
    """One source column's output name, and why it has it (for messages)."""

    column: str
    name: str
    origin: str  # e.g. "source_a column 'RecDate' (suffixed with alias_a 'A': source_b has a 'RecDate' too)"


def source_names(
    columns: Sequence[str], other: Sequence[str], keys: Sequence[str], settings: IncJoinSettings, side: str
) -> list[SourceName]:
    """The output names of one source's columns (`side` is "source_a" or "source_b"), join keys left out.

    Example: `source_names(["TrxId", "RecDate"], ["TrxId", "RecDate"], ["TrxId"], IncJoinSettings(), "source_a")`
    names A's RecDate `RecDate_A`."""
    setting, alias = ("alias_a", settings.alias_a) if side == "source_a" else ("alias_b", settings.alias_b)
    others = {c.lower() for c in other}
    # The output's RecDate is derived too: a source column of its name (both sources' when they share the
    # incremental column, else the one whose own column has that name) is suffixed.
    derived = {d.lower() for d in (*DERIVED_NAMES, settings.inc_col_name)}
    skipped = {k.lower() for k in keys}
    named = []
    for column in columns:
        if column.lower() in skipped:
            continue
        if column.lower() in others or column.lower() in derived:
            why = (
                f"{'source_b' if side == 'source_a' else 'source_a'} has a {column!r} too"
                if column.lower() in others
                else "the output derives a column of that name"
            )
            origin = f"{side} column {column!r} (suffixed with {setting} {alias!r}: {why})"
            named.append(SourceName(column, f"{column}_{alias}", origin))
        else:
            named.append(SourceName(column, column, f"{side} column {column!r}"))
    return named


def derived_columns(how: str, settings: IncJoinSettings) -> list[str]:
    """The columns the join computes for `how`, in output order."""
    derived = [JOIN_TYPE]
    if how != "left_anti":
        derived.insert(0, DIFF_ARRIVAL_TIME)
    if settings.include_waiting:
        derived.insert(len(derived) - 1, WAITING_TIME)
    return derived


def output_candidates(
    a_columns: Sequence[str], b_columns: Sequence[str], join_cols: Sequence[str], how: str, settings: IncJoinSettings
) -> list[tuple[str, str]]:
    """Every output column the join can name, as (name, where it comes from), in output order: the join keys, the
    output inc_col, A's and B's columns and the derived columns."""
    a_named = source_names(a_columns, b_columns, join_cols, settings, "source_a")
    b_named = [] if how == "left_anti" else source_names(b_columns, a_columns, join_cols, settings, "source_b")
    return (
        [(k, "join_cols") for k in join_cols]
        + [(settings.inc_col_name, "the output inc_col")]
        + [(n.name, n.origin) for n in (*a_named, *b_named)]
        + [(d, "a computed column") for d in derived_columns(how, settings)]
    )


def first_collision(candidates: Sequence[tuple[str, str]]) -> tuple[str, str, str] | None:
    """The first output name two candidates share, case-insensitive: (name, its later origin, its first origin)."""
    origins: dict[str, str] = {}
    for name, origin in candidates:
        if name.lower() in origins:
            return name, origin, origins[name.lower()]
        origins[name.lower()] = origin
    return None


def collision_message(
    collision: tuple[str, str, str],
    a_columns: Sequence[str],
    b_columns: Sequence[str],
    join_cols: Sequence[str],
    how: str,
    settings: IncJoinSettings,
) -> str:
    """What an output name collision is, and what to do: the aliases that leave every name apart when some do."""
    name, later, first = collision
    text = f"output column collision: {name!r} from {later} collides with {first}"
    for n in range(2, _SUGGESTED + 1):
        pair = {"alias_a": f"{settings.alias_a}{n}", "alias_b": f"{settings.alias_b}{n}"}
        candidate = settings.model_copy(update=pair)
        if first_collision(output_candidates(a_columns, b_columns, join_cols, how, candidate)) is None:
            return (
                f"{text}; a source that is another job's target has such suffixed columns already: give this job "
                f'other suffixes, alias_a = "{pair["alias_a"]}" and alias_b = "{pair["alias_b"]}" under [join] '
                "(join_cond then names the sources so), or rename one of the columns in a view of the source"
            )
    return f"{text}; rename one of them in a view of the source (given as `table`)"


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
    inc, inc_a, inc_b = settings.inc_col_name, settings.inc_col_of("source_a"), settings.inc_col_of("source_b")
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
        "inc_col_a": [a_map[inc_a]] if inc_a in a_map else [],
        "inc_col_b": [b_map[inc_b]] if inc_b in b_map else [],
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
