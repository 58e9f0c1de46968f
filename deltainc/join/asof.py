"""As-of joins (`how = "asof"`): each A row's nearest B row in its sliding join window, and when it is final.

The rules (README "As-of joins"), with t the RecDate's unit index:
- time: the incremental column's unit index t, or with `asof_col` that column of both sources, compared
  exactly (in microseconds);
- candidates of an A row a: B rows with its keys (and `join_cond`), b.t in SJW(a) = [a.t - lb, a.t + mw], and
  backward: a.time - lb <= b.time <= a.time; forward: a.time <= b.time <= a.time + mw; nearest: either;
- the match: the candidate nearest in time; ties go to the later time (as Polars' nearest does), then to the
  later B RecDate (a re-delivered value), then to `asof_tie_break` ascending, then to B's other columns;
- final: once no nearer B row can still arrive. A B row arrives by b.t <= a.t + mw at the latest, so:
  with `asof_col` at a.t + mw (an arriving row may carry any time); without it a backward match at a.t (no
  candidate comes after A), a forward match at b.t (later arrivals are farther), a nearest match at
  a.t + min(mw, |b.t - a.t|) (a row arriving after that is farther, or later when as near and so would win);
- until then it is provisional (JoinType 7, output at the window's end like a waiting row); an unmatched A row
  waits as long as a candidate can arrive (a.t + mw; backward without `asof_col`: not at all) and times out.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from deltainc.join.windows import unit_seconds

__all__ = ["STRATEGIES", "asof_time", "time_scale", "is_candidate", "nearest_only", "final_delay", "wait_limit"]

STRATEGIES = ("backward", "forward", "nearest")


def asof_time(column: Column, data_type: T.DataType, exact: bool, unit: Column) -> Column:
    """An A or B row's time: its unit index `unit`, or with `asof_col` (`exact`) that column in microseconds.

    A date counts as its midnight UTC: whole days, never shortened by a daylight-saving change.
    """
    if not exact:
        return unit
    if isinstance(data_type, T.DateType):
        return F.datediff(column, F.lit(dt.date(1970, 1, 1))).cast("long") * F.lit(unit_seconds("day") * 1_000_000)
    return F.unix_micros(column.cast("timestamp"))


def time_scale(exact: bool, uom: str) -> int:
    """How many units of `asof_time` one `time_uom` unit is (the tolerances lb and mw are in time_uom units)."""
    return unit_seconds(uom) * 1_000_000 if exact else 1


def is_candidate(a_time: Column, b_time: Column, strategy: str, lb: int, mw: int, scale: int) -> Column:
    """The strategy's side and tolerance: lb backward, mw forward (on top of the sliding join window)."""
    back = b_time >= a_time - F.lit(lb * scale)
    ahead = b_time <= a_time + F.lit(mw * scale)
    if strategy == "backward":
        return back & (b_time <= a_time)
    if strategy == "forward":
        return (b_time >= a_time) & ahead
    return back & ahead


def nearest_only(
    joined: DataFrame, a_id: Column, a_time: Column, b_time: Column, b_unit: Column, tie_break: Sequence[Column]
) -> DataFrame:
    """Each A row (`a_id`) once, with its best candidate (or none, as the left join gave it)."""
    order = [
        F.abs(b_time - a_time).asc_nulls_last(),
        b_time.desc_nulls_last(),
        b_unit.desc_nulls_last(),
        *[column.asc_nulls_first() for column in tie_break],
    ]
    rank = F.row_number().over(Window.partitionBy(a_id).orderBy(*order))
    rank_col = "__di_asof_rank"
    return joined.withColumn(rank_col, rank).where(F.col(rank_col) == 1).drop(rank_col)


def final_delay(strategy: str, exact: bool, mw: int, a_unit: Column, b_unit: Column) -> Column:
    """Units after a.t at which a match with B row b is final (no nearer B row can still arrive)."""
    if exact:
        return F.lit(mw)
    if strategy == "backward":
        return F.lit(0)
    if strategy == "forward":
        return b_unit - a_unit
    return F.least(F.lit(mw), F.abs(b_unit - a_unit))


def wait_limit(strategy: str, exact: bool, mw: int) -> int:
    """How long an unmatched A row waits: until no candidate can arrive (backward by units: none after A)."""
    return 0 if strategy == "backward" and not exact else mw
