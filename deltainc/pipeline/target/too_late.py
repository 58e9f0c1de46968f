"""B rows that came too late (docs/design.md#the-b-side-and-too-late-rows): they match an A row whose sliding join
window had closed when they arrived, whether that A row timed out or was matched by other B rows.

Such a row changes nothing in the target (its A row's rows are final), so without this it would vanish without
a trace. For a window [s, e] the too-late rows are the B rows with RecDate in [s, e] whose keys (and join_cond)
match an A row `a` with `mw < B.RecDate - a.RecDate <= horizon`. Each B row belongs to the window of its own
RecDate, so counts are window-invariant and a re-run rewrites the same rows.

The A rows are those the job published: the target's final rows of A (matched or timed out, by JoinType), one
per A row, with A's columns renamed back to the source's names (`published_a_rows`), so that the search reads
the days of the target it needs and B's window alone, not weeks of both sources. Where the target cannot
answer (`a_side`), the A source is read instead: on data without corrections both give the same rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from deltainc.join.columns import UNIT, match_condition, side_column, source_filter, unit_time
from deltainc.join.engine import read_units
from deltainc.join.join_spec import JoinSpec
from deltainc.join.options import JoinType
from deltainc.join.output_layout import JOIN_TYPE, OutputLayout
from deltainc.join.strategy import shuffled
from deltainc.pipeline.job.kinds.job_kind import Identity
from deltainc.time_units import TimeUnit

__all__ = ["TOO_LATE_BY", "FINAL_A_TYPES", "ASide", "a_side", "published_a_rows", "window_a_rows", "too_late_rows"]

TOO_LATE_BY = "TooLateBy"  # units between the A row's timeout (A.RecDate + mw) and the B row's arrival

# The target's rows that carry a final A row: its pairs, or its timed-out row. (Waiting rows cannot have a
# too-late B row: a B row that arrived more than mw units after its A row finds that A row final.)
FINAL_A_TYPES: tuple[JoinType, ...] = (JoinType.SAME_TIME, JoinType.A_LATE, JoinType.B_LATE, JoinType.A_TIMED_OUT)

# The joins whose target holds every final A row: a left join keeps the A rows that matched nothing (timed out);
# an inner join does not, and a left_anti join keeps no matched one.
_PUBLISHES_EVERY_A_ROW = ("left", "full_outer")


@dataclass(frozen=True)
class ASide:
    """Where a job's too-late search takes its A rows: from the target (`columns`: each A column the search
    needs, source name -> target name), or from the source A, `why` saying why the target cannot answer."""

    columns: Mapping[str, str]
    why: str | None = None

    @property
    def from_target(self) -> bool:
        return self.why is None


def a_side(how: str, layout: OutputLayout, target_columns: Sequence[str], needed: Sequence[str]) -> ASide:
    """Whether the target can give the too-late search its A rows, and under which names.

    `needed` are A's columns the search must have (join_cols, target.keys, inc_col); every other A column the
    target holds is offered too, for `join_cond`. Pure bookkeeping over column names, e.g.
    `a_side("left", layout, ["TrxId", "RecDate_A", "RecDate", "JoinType"], ["TrxId", "RecDate"])` is
    `ASide({"TrxId": "TrxId", "RecDate": "RecDate_A"})`.
    """
    if how not in _PUBLISHES_EVERY_A_ROW:
        kept = "matched A rows only" if how == "inner" else "the A rows that matched nothing only"
        return ASide({}, f"a {how} target holds {kept}")
    present = set(target_columns)
    names = [(key, key) for key in layout.join_cols] + list(layout.a_names)
    columns = {source: out for source, out in names if out in present}
    missing = [column for column in needed if column not in columns]
    if missing or JOIN_TYPE not in present or layout.inc_col not in present:
        lacking = [*missing, *(c for c in (JOIN_TYPE, layout.inc_col) if c not in present)]
        return ASide({}, f"the target lacks A's column(s) {', '.join(lacking)}")
    return ASide(columns)


def published_a_rows(
    published: DataFrame, columns: Mapping[str, str], rec: str, uom: TimeUnit, first: int | None, last: int | None
) -> DataFrame:
    """The final A rows among `published` (target rows, or a window's output, with the target's columns) whose
    output RecDate `rec` is in units [first, last] (None = open; literal bounds, so Delta prunes): one row per
    pair or timed-out row, with A's `columns` named as in the source (duplicates are the caller's to drop)."""
    final = F.col(JOIN_TYPE).isin([int(code) for code in FINAL_A_TYPES])
    rows = published.where(source_filter(published, rec, uom, first, last) & final)
    return rows.select(*[F.col(f"`{out}`").alias(source) for source, out in columns.items()])


def window_a_rows(
    earlier: DataFrame | None,
    output: DataFrame | None,
    columns: Mapping[str, str],
    identity: Sequence[str],
    rec: str,
    uom: TimeUnit,
    first: int,
    start: int,
) -> DataFrame:
    """The A rows published as of a window starting at unit `start`, one per A row (`identity`: A's key columns
    and RecDate, as in the source): the final rows of `earlier` (the target before the window's write; None
    when there is none) dated in [first, start - 1], and the window's own `output`'s final rows (None: left out).

    Rows of `earlier` dated `start` or later are left out: they can only be a crashed attempt's at this window,
    which the window's output replaces. So the result does not depend on whether the target's commit of this
    window already happened, e.g. `window_a_rows(target, output, {"TrxId": "TrxId", "RecDate": "RecDate_A"},
    ["TrxId", "RecDate"], "RecDate", TimeUnit.DAY, s - horizon, s)`.
    """
    parts = [] if output is None else [published_a_rows(output, columns, rec, uom, None, None)]
    if earlier is not None:
        parts.insert(0, published_a_rows(earlier, columns, rec, uom, first, start - 1))
    if not parts:
        raise ValueError("window_a_rows needs the target before the window, the window's output, or both")
    rows = parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
    return rows.dropDuplicates(list(identity))


def too_late_rows(
    df_a: DataFrame,
    df_b: DataFrame,
    spec: JoinSpec,
    identity: Identity,
    a_keys: Sequence[str],
    b_keys: Sequence[str],
    horizon: int,
) -> DataFrame:
    """The too-late B rows of the spec's window, one row per (A row, B row): both identities (named as in the
    target; `a_keys` / `b_keys` are their source columns), the B row's RecDate as the output RecDate, and
    TooLateBy. `df_a` holds A's rows (the source's, or `published_a_rows`' without duplicates), `df_b` B's;
    `horizon` (> max_waiting_time) bounds how far back A is read. Reads A in [s - horizon, e - mw - 1] and B in
    [s, e], both pruned."""
    if spec.start is None or spec.end is None:
        raise ValueError("too_late_rows needs a window with a start and an end")
    s, e, mw = spec.start, spec.end, spec.max_waiting_time
    alias_a, alias_b = spec.settings.alias_a, spec.settings.alias_b
    a = read_units(df_a, spec, s - horizon, e - mw - 1, "source_a").alias(alias_a)
    arrived = read_units(df_b, spec, s, e, "source_b").alias(alias_b)

    def col_a(name: str) -> Column:
        return side_column(alias_a, name)

    def col_b(name: str) -> Column:
        return side_column(alias_b, name)

    delay = col_b(UNIT) - col_a(UNIT)
    pairs = shuffled(a).join(arrived, match_condition(spec, None) & (delay > F.lit(mw)) & (delay <= F.lit(horizon)))
    columns: dict[str, Column] = {}
    for source, name in zip(a_keys, identity.a_keys, strict=True):
        columns[name] = col_a(source)
    columns[identity.a_rec] = col_a(spec.settings.inc_col_of("source_a"))
    for source, name in zip(b_keys, identity.b_keys, strict=True):
        columns.setdefault(name, col_b(source))
    if identity.b_rec is not None:
        columns.setdefault(identity.b_rec, col_b(spec.settings.inc_col_of("source_b")))
    columns[spec.layout.inc_col] = unit_time(col_b(UNIT), spec.settings.time_uom)
    columns[TOO_LATE_BY] = (delay - F.lit(mw)).cast("int")
    return pairs.select(*[column.alias(name) for name, column in columns.items()])
