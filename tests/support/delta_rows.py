"""Small Delta tables written from rows inline in a test, and tables read back as rows, with delta-rs: no JVM.

A one-window pipeline test spent about a quarter of its time writing its sources with Spark (1.0-1.2 s) and reading
its target back (1.2-1.4 s); delta-rs does either in about 0.01 s (tests/SUITE_JVM.md). The tables are the same
Delta tables for the job: the schema is the tests' DDL string ("Id long, EventTime timestamp, RecDate date"), every
column nullable as `frames.frame` makes them, partitioned where the test says. A naive datetime is a UTC instant,
which is what it means to the suite's Spark session (UTC). Keep Spark where the test is about what Spark writes.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

_TYPES: dict[str, pa.DataType] = {
    "tinyint": pa.int8(),
    "byte": pa.int8(),
    "smallint": pa.int16(),
    "short": pa.int16(),
    "int": pa.int32(),
    "integer": pa.int32(),
    "bigint": pa.int64(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "boolean": pa.bool_(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us", tz="UTC"),
}
_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")


def arrow_schema(ddl: str) -> pa.Schema:
    """The Arrow schema of a DDL string of Spark's simple types ("Id long, Amount decimal(10,2), RecDate date"),
    every field nullable; a type this helper does not know is refused, naming it."""
    fields = []
    for column in re.split(r",(?![^(]*\))", ddl):
        name, _, spelled = column.strip().partition(" ")
        type_ = spelled.strip().lower()
        decimal = _DECIMAL.fullmatch(type_)
        if decimal:
            fields.append(pa.field(name, pa.decimal128(int(decimal[1]), int(decimal[2]))))
        elif type_ in _TYPES:
            fields.append(pa.field(name, _TYPES[type_]))
        else:
            raise ValueError(f"delta_rows knows no type {spelled.strip()!r} (column {name!r} of {ddl!r})")
    return pa.schema(fields)


def _utc(value: Any) -> Any:
    """A naive datetime as the UTC instant it means to the suite's session; anything else as it is."""
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=dt.timezone.utc)
    return value


def write_rows(
    path: str | Path,
    rows: Sequence[Sequence[Any]],
    schema: str,
    *,
    partition_by: Sequence[str] = (),
    mode: Literal["error", "append", "overwrite"] = "error",
) -> str:
    """Write `rows` (tuples in the schema's column order) to the Delta table at `path` as one commit, partitioned
    by `partition_by`; "error" (the default) refuses a table already there, as Spark's `save` does. Returns the
    path as a string, as a job file wants it."""
    target = arrow_schema(schema)
    for i, row in enumerate(rows):
        if len(row) != len(target):
            raise ValueError(f"row {i} has {len(row)} values for {len(target)} columns: {schema}")
    columns = [pa.array([_utc(row[i]) for row in rows], field.type) for i, field in enumerate(target)]
    table = pa.Table.from_arrays(columns, schema=target)
    write_deltalake(str(path), table, partition_by=list(partition_by) or None, mode=mode)
    return str(path)


def _naive(value: Any) -> Any:
    """A timestamp read back as the naive UTC datetime the tests write (and Spark's collect gives in UTC)."""
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return value


def _order(row: tuple[Any, ...]) -> tuple[tuple[bool, Any], ...]:
    return tuple((value is None, value) for value in row)


def read_rows(path: str | Path, columns: Sequence[str] | None = None) -> list[tuple[Any, ...]]:
    """The rows of the Delta table at `path` (its latest version) as tuples of `columns` (all, in the table's
    order, when None), sorted with NULLs last; timestamps as naive UTC datetimes."""
    # `scan` applies deletion vectors (a target's DELETE or MERGE leaves them); `to_pyarrow_table` refuses them.
    scanned = DeltaTable(str(path)).scan(columns=list(columns) if columns is not None else None)
    table = pa.RecordBatchReader.from_stream(scanned).read_all()
    values = table.to_pydict()
    names = list(columns) if columns is not None else table.column_names
    rows = [tuple(_naive(v) for v in row) for row in zip(*(values[name] for name in names), strict=True)]
    return sorted(rows, key=_order)


def column_names(path: str | Path) -> list[str]:
    """The columns of the Delta table at `path`, in its schema's order."""
    return [field.name for field in DeltaTable(str(path)).schema().fields]
