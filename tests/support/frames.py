"""Small DataFrames from rows written inline in a test, held by the JVM (a SQL inline table, Spark's LocalRelation).

`spark.createDataFrame(rows, schema)` makes a Python RDD: every query that scans it sends tasks through Python
workers. The engine's property tests query their frames hundreds of times, and about half of each query went there
(24 daily-window joins: 5.8 s over createDataFrame frames, 3.0 s over inline tables; benchmarks/DECISIONS.md).
SQL parameters would avoid writing literals, but inside VALUES Spark 4.2 left named ones unbound in the suite's
session (Delta's extensions on) and bound positional ones in the wrong order, so each value is written as a SQL
literal here and cast to the schema's type.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType


def frame(spark: SparkSession, rows: Sequence[Sequence[Any]], schema: str | StructType) -> DataFrame:
    """The DataFrame of `rows` (tuples in the schema's column order) with `schema` (DDL or StructType), every
    column nullable as `createDataFrame` makes them."""
    struct = schema if isinstance(schema, StructType) else spark.createDataFrame([], schema).schema
    types = [field.dataType.simpleString() for field in struct.fields]
    lines = []
    # One all-NULL row, filtered out again, makes every column nullable whatever the rows hold.
    for i, row in enumerate([(None,) * len(types), *rows]):
        if len(row) != len(types):
            raise ValueError(f"row {i - 1} has {len(row)} values for {len(types)} columns: {struct.simpleString()}")
        cells = [f"CAST({literal(value)} AS {type_})" for value, type_ in zip(row, types, strict=True)]
        lines.append(f"({', '.join(cells)}, {'true' if i else 'false'})")
    names = ", ".join(f"`{name.replace('`', '``')}`" for name in struct.names)
    return spark.sql(f"SELECT {names} FROM VALUES {', '.join(lines)} AS rows({names}, `_kept`) WHERE `_kept`")


def literal(value: Any) -> str:
    """`value` as Spark SQL literal text. A naive datetime is local time, as `createDataFrame` reads it."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | Decimal):
        return str(value)
    if isinstance(value, float):
        return repr(value) if value == value and abs(value) != float("inf") else f"'{value}'"
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP '{value.astimezone(dt.timezone.utc).isoformat(' ')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, list | tuple):
        return f"array({', '.join(literal(item) for item in value)})"
    raise TypeError(f"no SQL literal for {type(value).__name__} {value!r}")
