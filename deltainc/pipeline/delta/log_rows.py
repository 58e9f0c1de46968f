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

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake import DeltaTable

__all__ = ["existing_table", "date_range_rows", "meeting_keys"]

_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def existing_table(location: str) -> DeltaTable:
    """The Delta table at `location` (a local folder or S3), as the command's snapshot holds it; LogUnreadable when
    none has committed there."""
    return look(location).table


def date_range_rows(
    table: DeltaTable, location: str, columns: Sequence[str], date: str, first: dt.date, last: dt.date
) -> pa.Table:
    """The rows of `table` (at `location`) whose DATE column `date` is in [first, last], with only `columns`: files
    whose partition value or statistics fall outside are not opened.

    E.g. `date_range_rows(existing_table(path), path, ["TrxId", "RecDate_A", "JoinType"], "RecDate",
    dt.date(2025, 3, 1), dt.date(2025, 3, 11))`.
    """
    if not _PLAIN_NAME.fullmatch(date) or not all(_PLAIN_NAME.fullmatch(c) for c in columns):
        raise LogUnreadable(f"a column name of {location} is not plain enough for a delta-rs predicate")
    import pyarrow as pa
    import pyarrow.compute as pc

    with reading(location):
        wanted = list(dict.fromkeys([*columns, date]))
        predicate = f"{date} >= '{first.isoformat()}' AND {date} <= '{last.isoformat()}'"
        rows = pa.table(table.scan(columns=wanted, predicate=predicate).read_all())
        dates = rows.column(date)
        if not pa.types.is_date32(dates.type):
            raise LogUnreadable(f"{date} of {location} is not a DATE column")
        kept = pc.and_(pc.greater_equal(dates, pa.scalar(first, pa.date32())),
                       pc.less_equal(dates, pa.scalar(last, pa.date32())))  # fmt: skip
        return _plain_strings(rows.filter(kept).select(list(columns)))


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
