"""A few rows of a Delta table read with delta-rs (deltainc/pipeline/delta/log_rows.py): some days of a table, and
the rows of two reads whose join keys meet. Tables written with delta-rs; no JVM."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.log_rows import existing_table, in_units, meeting_keys, unit_range_rows
from deltainc.time_units import TimeUnit, to_index

pytestmark = pytest.mark.pure

D = [dt.date(2025, 3, 1) + dt.timedelta(days=i) for i in range(5)]
H0 = dt.datetime(2025, 3, 1, 22, tzinfo=dt.timezone.utc)  # hours across midnight UTC


def _days(first: dt.date, last: dt.date) -> tuple[int, int, TimeUnit]:
    return to_index(first), to_index(last), TimeUnit.DAY


def _table(rows: list[tuple[int | None, dt.date]]) -> pa.Table:
    return pa.table({"k": pa.array([k for k, _ in rows], pa.int64()), "RecDate": pa.array([d for _, d in rows])})


@pytest.mark.parametrize("partitioned", [True, False])
def test_a_date_range_read_gives_the_rows_of_those_days_only(tmp_path: Path, partitioned: bool) -> None:
    write_deltalake(str(tmp_path), _table([(i, day) for i, day in enumerate(D)]),
                    partition_by=["RecDate"] if partitioned else None)  # fmt: skip
    rows = unit_range_rows(existing_table(str(tmp_path)), str(tmp_path), ["k"], "RecDate", *_days(D[1], D[3]))
    assert rows.column_names == ["k"]
    assert sorted(rows.column("k").to_pylist()) == [1, 2, 3]


@pytest.mark.parametrize("partitioned", [True, False])
def test_an_hour_range_read_gives_the_rows_of_those_hours_only(tmp_path: Path, partitioned: bool) -> None:
    # Two rows an hour (its first and last microsecond) over six hours, the day's DATE beside them.
    instants = [H0 + dt.timedelta(hours=h) + offset for h in range(6)
                for offset in (dt.timedelta(0), dt.timedelta(hours=1, microseconds=-1))]  # fmt: skip
    table = pa.table({"k": list(range(len(instants))), "RecDate": pa.array(instants, pa.timestamp("us", tz="UTC")),
                      "Day": [t.date() for t in instants]})  # fmt: skip
    write_deltalake(str(tmp_path), table, partition_by=["Day"] if partitioned else None)
    first = to_index(H0 + dt.timedelta(hours=1), TimeUnit.HOUR)
    rows = unit_range_rows(existing_table(str(tmp_path)), str(tmp_path), ["k"], "RecDate", first, first + 2,
                           TimeUnit.HOUR)  # fmt: skip
    assert sorted(rows.column("k").to_pylist()) == [2, 3, 4, 5, 6, 7]  # hours 23:00, 00:00 and 01:00, both rows each


def test_an_hour_range_read_of_a_timestamp_without_time_zone_is_left_to_spark(tmp_path: Path) -> None:
    write_deltalake(
        str(tmp_path), pa.table({"k": [1], "RecDate": pa.array([dt.datetime(2025, 3, 1)], pa.timestamp("us"))})
    )
    with pytest.raises(LogUnreadable, match="not a TIMESTAMP column"):
        unit_range_rows(existing_table(str(tmp_path)), str(tmp_path), ["k"], "RecDate", 0, 10**6, TimeUnit.HOUR)


def test_a_day_bound_on_a_timestamp_column_is_left_to_spark() -> None:
    # A day job's A RecDate kept in the target as a TIMESTAMP (its inc_col): the day's bound is not compared to it.
    values = pa.chunked_array([pa.array([H0], pa.timestamp("us", tz="UTC"))])
    with pytest.raises(LogUnreadable, match="RecDate_A is not a DATE column"):
        in_units(values, None, to_index(D[0]), TimeUnit.DAY, "RecDate_A")


def test_a_date_range_read_of_a_column_that_is_not_a_date_is_left_to_spark(tmp_path: Path) -> None:
    write_deltalake(str(tmp_path), pa.table({"k": [1], "RecDate": ["2025-03-01"]}))
    with pytest.raises(LogUnreadable, match="not a DATE column"):
        unit_range_rows(existing_table(str(tmp_path)), str(tmp_path), ["k"], "RecDate", *_days(D[0], D[1]))


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


def test_a_range_read_that_keeps_part_of_a_file_gives_its_string_columns_as_plain_strings(tmp_path: Path) -> None:
    # One file of string keys over five days, of which the read keeps three: the rows are cut out of the file.
    keys = [f"S{i:03d}" for i in range(len(D))]
    write_deltalake(str(tmp_path), pa.table({"k": keys, "RecDate": pa.array(D)}))
    rows = unit_range_rows(existing_table(str(tmp_path)), str(tmp_path), ["k"], "RecDate", *_days(D[1], D[3]))
    assert rows.schema.field("k").type == pa.string()
    assert sorted(rows.column("k").to_pylist()) == keys[1:4]
