"""As-of joins (`how = "asof"`): each A row's nearest B row in its sliding join window, and when it is final.

The rules (docs/concepts/asof.md), with t the RecDate's unit index:
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

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from deltainc.join.columns import UNIT, Rows, unit_index
from deltainc.join.join_spec import JoinSpec
from deltainc.join.options import JoinType
from deltainc.join.output_layout import RESERVED_PREFIX
from deltainc.join.strategy import shuffled
from deltainc.time_units import TimeUnit

__all__ = [
    "STRATEGIES",
    "A_ROW_ID",
    "asof_rows",
    "asof_time",
    "time_scale",
    "is_candidate",
    "nearest_only",
    "final_delay",
    "wait_limit",
]

STRATEGIES = ("backward", "forward", "nearest")
A_ROW_ID = f"{RESERVED_PREFIX}id"  # the column the engine adds to A: one id per A row, to keep one match per A row
_MICROS = 1_000_000


def asof_time(column: Column, data_type: T.DataType, exact: bool, unit: Column) -> Column:
    """An A or B row's time: its unit index `unit`, or with `asof_col` (`exact`) that column in microseconds.

    A date counts as its midnight UTC: whole days, never shortened by a daylight-saving change.
    """
    if not exact:
        return unit
    if isinstance(data_type, T.DateType):
        return unit_index(column, data_type, TimeUnit.DAY).cast("long") * F.lit(TimeUnit.DAY.seconds * _MICROS)
    return F.unix_micros(column.cast("timestamp"))


def time_scale(exact: bool, uom: TimeUnit | str) -> int:
    """How many units of `asof_time` one `time_uom` unit is (the tolerances lb and mw are in time_uom units)."""
    return TimeUnit.parse(uom).seconds * _MICROS if exact else 1


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


def asof_rows(a: DataFrame, b: DataFrame, condition: Column, spec: JoinSpec, e: Column) -> Rows:
    """The as-of join's rows: each A row once, with its nearest candidate, final or provisional (module rules)."""
    settings, lb, mw = spec.settings, spec.look_back_time, spec.max_waiting_time
    alias_a, alias_b = settings.alias_a, settings.alias_b
    a_t, b_t = F.col(f"{alias_a}.{UNIT}"), F.col(f"{alias_b}.{UNIT}")
    exact, strategy = settings.asof_col is not None, settings.asof_strategy
    if exact:
        a_col = settings.asof_col or ""
        b_col = settings.asof_col_b or a_col
        a_time = asof_time(F.col(f"{alias_a}.`{a_col}`"), a.schema[a_col].dataType, True, a_t)
        b_time = asof_time(F.col(f"{alias_b}.`{b_col}`"), b.schema[b_col].dataType, True, b_t)
    else:
        a_time, b_time = a_t, b_t
    scale = time_scale(exact, settings.time_uom)
    candidate = condition & is_candidate(a_time, b_time, strategy, lb, mw, scale)
    joined = shuffled(a).join(b, candidate, "left_outer")
    named = list(settings.asof_tie_break)
    others = [
        f.name
        for f in b.schema.fields
        if f.name not in named and f.name != UNIT and not isinstance(f.dataType, T.MapType)  # maps do not order
    ]
    tie_break = [F.col(f"{alias_b}.`{name}`") for name in [*named, *others]]
    joined = nearest_only(joined, F.col(f"{alias_a}.{A_ROW_ID}"), a_time, b_time, b_t, tie_break)

    matched, a_only = b_t.isNotNull(), b_t.isNull()
    final_t = a_t + final_delay(strategy, exact, mw, a_t, b_t)
    provisional = matched & (final_t > e)
    limit = wait_limit(strategy, exact, mw)
    waited = F.least(F.lit(limit), F.greatest(F.lit(0), e - a_t))
    diff = F.when(matched, b_t - a_t)
    waiting = F.when(a_only, waited).when(provisional, e - a_t)
    out_t = F.when(provisional, e).when(matched, final_t).otherwise(a_t + waited)
    join_type = (
        F.when(provisional, int(JoinType.PROVISIONAL))
        .when(matched & (diff == 0), int(JoinType.SAME_TIME))
        .when(matched & (diff < 0), int(JoinType.A_LATE))
        .when(matched, int(JoinType.B_LATE))
        .when(waited == F.lit(limit), int(JoinType.A_TIMED_OUT))
        .otherwise(int(JoinType.A_WAITING))
    )
    return Rows(joined, diff, waiting, out_t, join_type)
