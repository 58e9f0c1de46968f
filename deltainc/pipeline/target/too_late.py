"""B rows that came too late: they match an A row that had already timed out when they arrived.

Such a row changes nothing in the target (timed out is final), so without this it would vanish without a
trace. For a window [s, e] the too-late rows are the B rows with RecDate in [s, e] whose keys (and join_cond)
match an A row `a` with `mw < B.RecDate - a.RecDate <= horizon` that matched no B row in its sliding join
window. Each B row belongs to the window of its own RecDate, so counts are window-invariant and a re-run
rewrites the same rows. Reads: A in [s - horizon, e - mw - 1], B in [s - horizon - lb, e], both pruned.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from deltainc.join.engine import JoinSpec, read_units, unit_time
from deltainc.join.match_condition import match_condition, side_column
from deltainc.join.unit_columns import UNIT
from deltainc.pipeline.job.join_plan import Identity

__all__ = ["TOO_LATE_BY", "too_late_rows"]

TOO_LATE_BY = "TooLateBy"  # units between the A row's timeout (A.RecDate + mw) and the B row's arrival


def too_late_rows(
    df_a: DataFrame,
    df_b: DataFrame,
    spec: JoinSpec,
    identity: Identity,
    a_keys: Sequence[str],
    b_keys: Sequence[str],
    horizon: int,
) -> DataFrame:
    """The too-late B rows of the spec's window, one row per (A row missed, B row): both identities (named as
    in the target; `a_keys` / `b_keys` are their source columns), the B row's RecDate as the output RecDate,
    and TooLateBy. `horizon` (> max_waiting_time) bounds how far back A is read."""
    if spec.start is None or spec.end is None:
        raise ValueError("too_late_rows needs a window with a start and an end")
    s, e, lb, mw = spec.start, spec.end, spec.look_back_time, spec.max_waiting_time
    alias_a, alias_b = spec.settings.alias_a, spec.settings.alias_b
    a = read_units(df_a, spec, s - horizon, e - mw - 1).alias(alias_a)
    b_all = read_units(df_b, spec, s - horizon - lb, e)

    def col_a(name: str) -> Column:
        return side_column(alias_a, name)

    def col_b(name: str) -> Column:
        return side_column(alias_b, name)

    # The engine's condition, with the sliding join window whatever enforce_sliding_join_window says: the A rows
    # that matched no B row in it timed out.
    a_t, b_t = col_a(UNIT), col_b(UNIT)
    timed_out = a.join(b_all.alias(alias_b), match_condition(spec, UNIT), "left_anti").alias(alias_a)
    arrived = b_all.where(F.col(UNIT) >= F.lit(s)).alias(alias_b)
    delay = b_t - a_t
    pairs = timed_out.join(arrived, match_condition(spec, None) & (delay > F.lit(mw)) & (delay <= F.lit(horizon)))
    columns: dict[str, Column] = {}
    for source, name in zip(a_keys, identity.a_keys, strict=True):
        columns[name] = col_a(source)
    columns[identity.a_rec] = col_a(spec.settings.inc_col_name)
    for source, name in zip(b_keys, identity.b_keys, strict=True):
        columns.setdefault(name, col_b(source))
    if identity.b_rec is not None:
        columns.setdefault(identity.b_rec, col_b(spec.settings.inc_col_name))
    columns[spec.layout.inc_col] = unit_time(b_t, spec.settings.time_uom)
    columns[TOO_LATE_BY] = (delay - F.lit(mw)).cast("int")
    return pairs.select(*[column.alias(name) for name, column in columns.items()])
