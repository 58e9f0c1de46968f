"""The data files of some units of a source, from its Delta log (deltainc/pipeline/delta/delta_log_stats.py): the
files of those partitions, and LogUnreadable wherever a read of them as Parquet files may differ from Delta's.
Tables written with delta-rs; no JVM."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.delta_log_stats import window_files
from deltainc.time_units import to_index

pytestmark = pytest.mark.pure

D = [dt.date(2025, 3, 1) + dt.timedelta(days=i) for i in range(4)]


def _units(first: dt.date, last: dt.date) -> tuple[int, int]:
    return to_index(first, "day"), to_index(last, "day")


def test_the_files_of_a_window_are_those_of_its_days_partitions(tmp_path: Path) -> None:
    rows = pa.table({"k": [0, 1, 2, 3], "RecDate": D})
    write_deltalake(str(tmp_path), rows, partition_by=["RecDate"])
    found = window_files(str(tmp_path), "RecDate", "day", *_units(D[1], D[2]))
    assert found.root == str(tmp_path)
    folders = sorted(Path(path).parent.name for path in found.paths)
    assert folders == ["RecDate=2025-03-02", "RecDate=2025-03-03"]
    assert all(Path(path).is_file() for path in found.paths)


def test_a_window_with_no_file_reads_none(tmp_path: Path) -> None:
    write_deltalake(str(tmp_path), pa.table({"k": [0], "RecDate": [D[0]]}), partition_by=["RecDate"])
    assert window_files(str(tmp_path), "recdate", "day", *_units(D[2], D[3])).paths == ()


def test_a_table_not_partitioned_by_its_date_column_reads_the_files_whose_statistics_reach_the_window(
    tmp_path: Path,
) -> None:
    for days in ([D[0]], [D[1], D[2]], [D[3]]):  # one file per append
        write_deltalake(str(tmp_path), pa.table({"k": [0] * len(days), "RecDate": days}), mode="append")
    files = [window_files(str(tmp_path), "RecDate", "day", *_units(day, day)).paths for day in D]
    assert [len(paths) for paths in files] == [1, 1, 1, 1]
    assert files[1] == files[2] != files[0]  # the file of D[1] and D[2] is read for either


def test_an_hour_job_reads_the_files_whose_timestamp_statistics_reach_its_hours(tmp_path: Path) -> None:
    hour = dt.datetime(2025, 3, 1, 5, tzinfo=dt.timezone.utc)
    for n in range(3):  # one file an hour, its last row in the hour's last millisecond
        stamps = [hour + dt.timedelta(hours=n), hour + dt.timedelta(hours=n + 1, microseconds=-1)]
        write_deltalake(str(tmp_path), pa.table({"k": [n, n], "RecDate": stamps}), mode="append")
    first = to_index(hour.astimezone().replace(tzinfo=None), "hour")  # pyspark's naive local time
    assert len(window_files(str(tmp_path), "RecDate", "hour", first, first).paths) == 1
    assert len(window_files(str(tmp_path), "RecDate", "hour", first + 1, first + 2).paths) == 2
    assert window_files(str(tmp_path), "RecDate", "hour", first + 3, first + 9).paths == ()


def test_a_file_without_statistics_of_the_column_is_read_for_every_window(tmp_path: Path) -> None:
    rows = pa.table({"k": [0], "RecDate": [D[0]]})
    write_deltalake(str(tmp_path), rows, configuration={"delta.dataSkippingNumIndexedCols": "1"})
    assert len(window_files(str(tmp_path), "RecDate", "day", *_units(D[3], D[3])).paths) == 1


def test_a_table_partitioned_by_a_timestamp_is_left_to_delta(tmp_path: Path) -> None:
    stamp = dt.datetime(2025, 3, 1, 5, tzinfo=dt.timezone.utc)
    write_deltalake(str(tmp_path), pa.table({"k": [0], "RecDate": [stamp]}), partition_by=["RecDate"])
    with pytest.raises(LogUnreadable, match="not a DATE partition column"):
        window_files(str(tmp_path), "RecDate", "hour", 0, 10**7)


def test_a_file_whose_folder_name_is_escaped_is_left_to_delta(tmp_path: Path) -> None:
    # Spark would unescape "x%20y" to another value than the log's, or read '%' and ':' as URI syntax.
    rows = pa.table({"k": [0, 1, 2], "Code": ["plain", "x y", "p:q"], "RecDate": [D[0], D[1], D[2]]})
    write_deltalake(str(tmp_path), rows, partition_by=["RecDate", "Code"])
    assert len(window_files(str(tmp_path), "RecDate", "day", *_units(D[0], D[0])).paths) == 1
    for day in (D[1], D[2]):
        with pytest.raises(LogUnreadable, match="folder of its partition values"):
            window_files(str(tmp_path), "RecDate", "day", *_units(day, day))


def test_a_null_partition_value_is_read_from_spark_s_null_folder(tmp_path: Path) -> None:
    rows = pa.table({"k": [0, 1], "Code": ["a", None], "RecDate": [D[0], D[0]]})
    write_deltalake(str(tmp_path), rows, partition_by=["RecDate", "Code"])
    folders = sorted(
        Path(p).parent.name for p in window_files(str(tmp_path), "RecDate", "day", *_units(D[0], D[0])).paths
    )
    assert folders == ["Code=__HIVE_DEFAULT_PARTITION__", "Code=a"]
