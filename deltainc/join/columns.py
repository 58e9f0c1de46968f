"""The join's Spark expressions: a RecDate's unit index and back, a source's pruning filter, the match condition
and the rows the equi-joins (inner, left, left_anti, full_outer) match.

Unit indexes are `deltainc.join.windows`' arithmetic as Spark expressions (session time zone). The match condition
is built here for the engine's join and the pipeline's too-late rows (`deltainc.pipeline.target.too_late`) alike,
so that the two can never drift apart: every join key equal (`==`, so a null key matches nothing), the `join_cond`
(SQL text or a Column), and, when asked for, the sliding join window B.t in [A.t - lb, A.t + mw]. `matched_rows`
then gives every pair in the sliding join window and the rows of one side without a match, with their columns,
before the output window keeps its own.
"""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from deltainc.join.join_spec import JoinSpec, column_type, condition_column
from deltainc.join.options import JoinType
from deltainc.join.output_layout import RESERVED_PREFIX
from deltainc.join.strategy import shuffled
from deltainc.time_units import EPOCH_DAY, TimeUnit, from_index

__all__ = ["UNIT", "unit_index", "unit_time", "source_filter", "side_column", "match_condition", "Rows", "matched_rows"]

UNIT = f"{RESERVED_PREFIX}t"  # the column the engine adds to each source: the unit index of its incremental column


def unit_index(column: Column, data_type: T.DataType, uom: TimeUnit | str) -> Column:
    """Integer units since the epoch (1970-01-01 UTC, session time zone), truncated to the unit."""
    unit = TimeUnit.parse(uom)
    if unit is TimeUnit.DAY:
        day = column if isinstance(data_type, T.DateType) else F.to_date(column)
        return F.datediff(day, F.lit(EPOCH_DAY))
    seconds = F.unix_timestamp(column.cast("timestamp"))
    return F.floor(seconds / F.lit(unit.seconds)).cast("int")


def unit_time(index: Column, uom: TimeUnit | str) -> Column:
    """The date (day) or timestamp (hour, minute) of a unit index: the inverse of `unit_index`, for output RecDates."""
    unit = TimeUnit.parse(uom)
    if unit is TimeUnit.DAY:
        return F.date_add(F.lit(EPOCH_DAY), index)
    return F.timestamp_seconds(index.cast("long") * F.lit(unit.seconds))


def source_filter(df: DataFrame, inc: str, uom: TimeUnit | str, first: int | None, last: int | None) -> Column:
    """Literal bounds on the raw incremental column for units [first, last] (None = open), so that Delta prunes
    partitions and files."""
    unit = TimeUnit.parse(uom)
    data_type = column_type(df.schema, inc, "source", "inc_col_name")
    column = F.col(f"`{inc}`")
    condition = column.isNotNull()
    if first is not None:
        condition = condition & (column >= F.lit(from_index(first, unit)))
    if last is not None:
        if isinstance(data_type, T.DateType) and unit is TimeUnit.DAY:
            condition = condition & (column <= F.lit(from_index(last, unit)))
        else:
            upper = from_index(last + 1, unit)
            bound = dt.datetime(upper.year, upper.month, upper.day) if not isinstance(upper, dt.datetime) else upper
            condition = condition & (column < F.lit(bound))
    return condition


def side_column(alias: str, name: str) -> Column:
    """Column `name` of the join side aliased `alias` (the settings' alias_a or alias_b), the name in backticks."""
    return F.col(f"{alias}.`{name}`")


def match_condition(spec: JoinSpec, unit_column: str | None) -> Column:
    """The condition a B row (aliased alias_b) meets to match an A row (alias_a): the keys equal and the join_cond;
    with `unit_column` (both sides' unit index) also the sliding join window B.t in [A.t - lb, A.t + mw]."""
    alias_a, alias_b = spec.settings.alias_a, spec.settings.alias_b
    condition = F.lit(True)
    for key in spec.join_cols:
        condition = condition & (side_column(alias_a, key) == side_column(alias_b, key))
    if spec.join_cond is not None:
        condition = condition & condition_column(spec.join_cond)
    if unit_column is not None:
        a_t, b_t = side_column(alias_a, unit_column), side_column(alias_b, unit_column)
        condition = condition & b_t.between(a_t - F.lit(spec.look_back_time), a_t + F.lit(spec.max_waiting_time))
    return condition


_SPARK_HOW = {"inner": "inner", "left": "left_outer", "full_outer": "full_outer"}


class Rows(NamedTuple):
    """Joined rows and, per row, the columns the output derives (in unit indexes; e = the window's end)."""

    joined: DataFrame
    diff: Column  # DiffArrivalTime: b.t - a.t of a match
    waiting: Column  # WaitingTime
    out_t: Column  # the output RecDate's unit index
    join_type: Column  # JoinType


def matched_rows(a: DataFrame, b: DataFrame, condition: Column, spec: JoinSpec, e: Column) -> Rows:
    """The equi-joins: a match at max(a.t, b.t); a row without a match when it waits or timed out (engine rules)."""
    lb, mw = spec.look_back_time, spec.max_waiting_time
    a_t, b_t = F.col(f"{spec.settings.alias_a}.{UNIT}"), F.col(f"{spec.settings.alias_b}.{UNIT}")
    if spec.how == "left_anti":
        joined = shuffled(a).join(b, condition, "left_anti")
        b_t = F.lit(None).cast("int")  # B's columns are gone after an anti join
        matched = F.lit(False)
        a_only = F.lit(True)
    else:
        joined = shuffled(a).join(b, condition, _SPARK_HOW[spec.how])
        matched = a_t.isNotNull() & b_t.isNotNull()
        a_only = a_t.isNotNull() & b_t.isNull()
    b_only = a_t.isNull() & b_t.isNotNull()  # full_outer only

    diff = F.when(matched, b_t - a_t)
    waiting = F.when(a_only, F.least(F.lit(mw), F.greatest(F.lit(0), e - a_t)))
    if spec.b_waits:
        waiting = waiting.when(b_only, F.least(F.lit(lb), F.greatest(F.lit(0), e - b_t)))
    out_t = F.when(matched, F.greatest(a_t, b_t)).when(a_only, a_t + waiting)
    if spec.how == "full_outer":
        out_t = out_t.otherwise(b_t + waiting) if spec.b_waits else out_t.otherwise(b_t)
    join_type = (
        F.when(matched & (diff == 0), int(JoinType.SAME_TIME))
        .when(matched & (diff < 0), int(JoinType.A_LATE))
        .when(matched, int(JoinType.B_LATE))
        .when(a_only & (waiting == F.lit(mw)), int(JoinType.A_TIMED_OUT))
        .when(a_only, int(JoinType.A_WAITING))
    )
    if spec.b_waits:
        join_type = join_type.when(b_only & (waiting < F.lit(lb)), int(JoinType.B_WAITING))
    return Rows(joined, diff, waiting, out_t, join_type.otherwise(int(JoinType.NOT_MATCHED)))
