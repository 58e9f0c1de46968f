"""Time units as Spark columns: a RecDate's unit index and back, and the pruning filter of a source's read.

The same arithmetic as `deltainc.join.windows`, as Spark expressions (session time zone).
"""

from __future__ import annotations

import datetime as dt

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from deltainc.errors import SchemaError
from deltainc.join.output_layout import RESERVED_PREFIX
from deltainc.join.windows import EPOCH_DAY, TimeUnit, from_index
from deltainc.suggestions import did_you_mean

__all__ = ["UNIT", "TIME_TYPES", "column_type", "did_you_mean", "unit_index", "unit_time", "source_filter"]

UNIT = f"{RESERVED_PREFIX}t"  # the column the engine adds to each source: the unit index of its incremental column
TIME_TYPES = (T.DateType, T.TimestampType, T.TimestampNTZType)


def column_type(schema: T.StructType, column: str, side: str, role: str) -> T.DataType:
    """The type of `column` of a source's schema; a SchemaError naming the setting (`role`) when it is missing."""
    for field in schema.fields:
        if field.name == column:
            return field.dataType
    names = schema.fieldNames()
    raise SchemaError(
        f"{role}: column {column!r} missing from {side} (columns: {', '.join(names)}){did_you_mean(column, names)}"
    )


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
