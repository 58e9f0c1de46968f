"""A few rows of a Delta table read with delta-rs (the `deltainc` log readers' engine), not with Spark: a read of
some days of a table that needs no Spark job, and the rows of two such reads whose join keys meet.

Used where a window needs a handful of rows from weeks of a table (docs/design.md#the-b-side-and-too-late-rows):
Spark would pay its per-table cost (snapshot, file listing, deletion-vector check, query stages) for them. Deletion
vectors are applied (delta-rs' scan). Whatever delta-rs or arrow cannot read is LogUnreadable, as for the other
log readers: the caller reads with Spark. No pyspark here; deltalake and pyarrow are imported on first use.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from deltainc.pipeline.delta.delta_log import LogUnreadable, reading
from deltainc.pipeline.delta.snapshot import look
from deltainc.time_units import TimeUnit, from_index

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake import DeltaTable

__all__ = ["existing_table", "unit_range_rows", "in_units", "meeting_keys"]

_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def existing_table(location: str) -> DeltaTable:
    """The Delta table at `location` (a local folder or S3), as the command's snapshot holds it; LogUnreadable when
    none has committed there."""
    return look(location).table


def unit_range_rows(
    table: DeltaTable, location: str, columns: Sequence[str], column: str, first: int, last: int, uom: TimeUnit
) -> pa.Table:
    """The rows of `table` (at `location`) whose incremental `column` is in units [first, last] of `uom`, with only
    `columns`: files whose partition value or statistics fall outside are not opened. A day's column is a DATE; an
    hour's or a minute's a TIMESTAMP, whose unit Spark counts from the epoch in UTC whatever the session's time
    zone (`unit_index`), so the bounds here are the same instants. Other types are LogUnreadable.

    E.g. `unit_range_rows(existing_table(path), path, ["TrxId", "RecDate_A", "JoinType"], "RecDate",
    to_index(dt.date(2025, 3, 1)), to_index(dt.date(2025, 3, 11)), TimeUnit.DAY)`.
    """
    if not _PLAIN_NAME.fullmatch(column) or not all(_PLAIN_NAME.fullmatch(c) for c in columns):
        raise LogUnreadable(f"a column name of {location} is not plain enough for a delta-rs predicate")
    import pyarrow as pa

    low, high, _ = _bounds(first, last, uom)
    with reading(location):
        wanted = list(dict.fromkeys([*columns, column]))
        below = "<=" if uom is TimeUnit.DAY else "<"  # a day's bound is the last day; an instant's the next unit's
        predicate = f"{column} >= '{_literal(low)}' AND {column} {below} '{_literal(high)}'"
        # Plain strings before the cut: pyarrow 26 cannot take rows out of delta-rs' string views.
        rows = _plain_strings(pa.table(table.scan(columns=wanted, predicate=predicate).read_all()))
        kept = in_units(rows.column(column), first, last, uom, f"{column} of {location}")
        return rows.filter(kept).select(list(columns))


def in_units(values: pa.ChunkedArray, first: int | None, last: int, uom: TimeUnit, what: str) -> pa.ChunkedArray:
    """Whether each of `values` (`what`: a DATE column for days, a TIMESTAMP one for hours and minutes) is in units
    [first, last] (None: no lower bound); LogUnreadable for a column of another type."""
    import pyarrow as pa
    import pyarrow.compute as pc

    low, high, name = _bounds(first if first is not None else last, last, uom)
    kind = values.type
    if not _of_kind(kind, uom):
        raise LogUnreadable(f"{what} is not a {name} column")
    below = pc.less_equal if uom is TimeUnit.DAY else pc.less
    upper = below(values, pa.scalar(high, kind))
    return upper if first is None else pc.and_(pc.greater_equal(values, pa.scalar(low, kind)), upper)


def _bounds(first: int, last: int, uom: TimeUnit) -> tuple[dt.date | dt.datetime, dt.date | dt.datetime, str]:
    """Units [first, last] as a DATE range (both ends in), or as UTC instants [first's start, the next unit's)."""
    if uom is TimeUnit.DAY:
        return from_index(first, uom), from_index(last, uom), "DATE"
    low, high = from_index(first, uom), from_index(last + 1, uom)
    assert isinstance(low, dt.datetime) and isinstance(high, dt.datetime)  # an hour's or a minute's first instant
    return low.replace(tzinfo=dt.timezone.utc), high.replace(tzinfo=dt.timezone.utc), "TIMESTAMP"


def _of_kind(kind: pa.DataType, uom: TimeUnit) -> bool:
    """Whether arrow type `kind` is what a column of `uom` units is read through the logs as."""
    import pyarrow as pa

    if uom is TimeUnit.DAY:
        return bool(pa.types.is_date32(kind))
    return bool(pa.types.is_timestamp(kind)) and kind.tz is not None  # Delta's TIMESTAMP, not TIMESTAMP_NTZ


def _literal(value: dt.date | dt.datetime) -> str:
    """A bound as a delta-rs predicate's literal: a date, or a UTC instant."""
    return value.isoformat() if not isinstance(value, dt.datetime) else value.strftime("%Y-%m-%dT%H:%M:%SZ")


def meeting_keys(left: pa.Table, right: pa.Table, keys: Sequence[tuple[str, str]]) -> tuple[pa.Table, pa.Table]:
    """The rows of `left` and of `right` whose join keys (pairs of column names: left's, right's) meet a row of the
    other side: equal and none NULL, as Spark's `==` joins them. Keys of different or floating-point types are
    LogUnreadable (Spark would cast them or compare NaN its own way).

    E.g. `meeting_keys(target_rows, b_rows, [("TrxId", "TrxId")])`.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    left_names, right_names = [k for k, _ in keys], [k for _, k in keys]
    for name_l, name_r in keys:
        kind_l, kind_r = left.schema.field(name_l).type, right.schema.field(name_r).type
        if kind_l != kind_r or pa.types.is_floating(kind_l) or pa.types.is_nested(kind_l):
            raise LogUnreadable(f"join keys {name_l} ({kind_l}) and {name_r} ({kind_r}) are not matched outside Spark")

    def keyed(rows: pa.Table, names: list[str]) -> pa.Table:
        valid = (
            pc.and_(*[pc.is_valid(rows.column(n)) for n in names])
            if len(names) > 1
            else pc.is_valid(rows.column(names[0]))
        )
        return rows.filter(valid)

    left, right = keyed(left, left_names), keyed(right, right_names)
    right_keys = right.select(right_names).rename_columns(left_names).group_by(left_names).aggregate([])
    left = left.join(right_keys, keys=left_names, join_type="left semi")
    left_keys = left.select(left_names).rename_columns(right_names).group_by(right_names).aggregate([])
    right = right.join(left_keys, keys=right_names, join_type="left semi")
    return left, right


def _plain_strings(rows: pa.Table) -> pa.Table:
    """String columns as plain utf8 (delta-rs may hand back string views or large strings, which Spark's arrow
    conversion and pyarrow's joins do not all take)."""
    import pyarrow as pa

    fields = [
        field.with_type(pa.string())
        if pa.types.is_large_string(field.type) or pa.types.is_string_view(field.type)
        else field
        for field in rows.schema
    ]
    return rows.cast(pa.schema(fields))
