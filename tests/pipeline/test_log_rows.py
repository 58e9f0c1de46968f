"""A few rows of a Delta table read with delta-rs (deltainc/pipeline/delta/log_rows.py): some days of a table, and
the rows of two reads whose join keys meet. Tables written with delta-rs; no JVM."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.log_rows import date_range_rows, existing_table, meeting_keys

pytestmark = pytest.mark.pure

D = [dt.date(2025, 3, 1) + dt.timedelta(days=i) for i in range(5)]


def _table(rows: list[tuple[int | None, dt.date]]) -> pa.Table:
    return pa.table({"k": pa.array([k for k, _ in rows], pa.int64()), "RecDate": pa.array([d for _, d in rows])})


@pytest.mark.parametrize("partitioned", [True, False])
def test_a_date_range_read_gives_the_rows_of_those_days_only(tmp_path: Path, partitioned: bool) -> None:
    write_deltalake(str(tmp_path), _table([(i, day) for i, day in enumerate(D)]),
                    partition_by=["RecDate"] if partitioned else None)  # fmt: skip
    rows = date_range_rows(existing_table(str(tmp_path)), str(tmp_path), ["k"], "RecDate", D[1], D[3])
    assert rows.column_names == ["k"]
    assert sorted(rows.column("k").to_pylist()) == [1, 2, 3]


def test_a_date_range_read_of_a_column_that_is_not_a_date_is_left_to_spark(tmp_path: Path) -> None:
    write_deltalake(str(tmp_path), pa.table({"k": [1], "RecDate": ["2025-03-01"]}))
    with pytest.raises(LogUnreadable, match="not a DATE column"):
        date_range_rows(existing_table(str(tmp_path)), str(tmp_path), ["k"], "RecDate", D[0], D[1])


def test_rows_meet_on_equal_keys_and_a_null_key_meets_nothing() -> None:
    left = _table([(1, D[0]), (2, D[0]), (None, D[0]), (1, D[1])])
    right = _table([(1, D[2]), (3, D[2]), (None, D[2])]).rename_columns(["key", "RecDate"])
    met_left, met_right = meeting_keys(left, right, [("k", "key")])
    assert sorted(met_left.column("RecDate").to_pylist()) == [D[0], D[1]]  # both A rows of key 1
    assert met_left.column("k").to_pylist() == [1, 1]
    assert met_right.column("key").to_pylist() == [1]


def test_keys_of_two_types_are_left_to_spark() -> None:
    left = _table([(1, D[0])])
    right = pa.table({"k": pa.array([1], pa.int32())})
    with pytest.raises(LogUnreadable, match="not matched outside Spark"):
        meeting_keys(left, right, [("k", "k")])
