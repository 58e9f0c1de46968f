"""One handle per table per command (issue 77 item 2): `open_handle` decides once whether the Delta log or Spark
answers, and every question a command asks of one table is asked of the handle. Tiny real Delta tables; those
written with delta-rs need no Spark."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from pyspark.sql import SparkSession

from deltainc.errors import ConfigError
from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.snapshot import counting_opens, one_look
from deltainc.pipeline.delta.table import LogTable, SparkTable, open_handle
from deltainc.pipeline.job.sections import SourceRef, TableRef
from deltainc.time_units import to_index

PACKAGE = Path(__file__).resolve().parents[3] / "deltainc"
DAYS = [dt.date(2025, 3, 1), dt.date(2025, 3, 2), dt.date(2025, 3, 4)]


def _days(path: Path) -> str:
    """A table of three rows on three days, partitioned by RecDate, written by delta-rs."""
    data = pa.table({"TrxId": pa.array([1, 2, 3], pa.int64()), "RecDate": pa.array(DAYS, pa.date32())})
    write_deltalake(str(path), data, partition_by=["RecDate"])
    return str(path)


@pytest.mark.pure
def test_a_local_path_is_answered_from_its_log_once_per_command_without_spark(tmp_path: Path) -> None:
    location = _days(tmp_path / "a")
    table = open_handle(TableRef(path=location), "source_a")
    assert isinstance(table, LogTable)
    with counting_opens() as opened, one_look():
        assert table.exists()
        shape = table.shape()  # no session: a Spark answer would fail here
        commit = table.latest_commit()
        assert table.latest_unit("RecDate", "day", lambda _ref: None) == to_index(DAYS[-1], "day")
    assert shape.schema.fieldNames() == ["TrxId", "RecDate"]
    assert shape.partition_by == ("RecDate",)
    assert commit is not None and commit["version"] == 0
    assert sum(opened.values()) == 2  # the one look, and again after `latest_commit`'s retake


@pytest.mark.pure
def test_a_path_delta_rs_cannot_read_is_left_to_spark_and_the_log_is_never_asked(tmp_path: Path) -> None:
    table = open_handle(TableRef(path="hdfs://cluster/data/a"), "source_a")
    assert isinstance(table, SparkTable)

    def from_log(_location: str) -> str:
        raise AssertionError("the log was asked")

    assert table.answer("source_a's columns", from_log, lambda why: f"spark: {why}") == (
        "spark: source_a is not a local path or in S3 (hdfs://cluster/data/a)"
    )
    with pytest.raises(LogUnreadable):
        table.latest_unit("RecDate", "day", lambda _ref: None)


@pytest.mark.spark
def test_a_catalog_table_is_answered_by_spark(spark: SparkSession) -> None:
    frame = spark.createDataFrame([(1, DAYS[0]), (2, DAYS[2])], "TrxId long, RecDate date")
    frame.write.format("delta").partitionBy("RecDate").mode("overwrite").saveAsTable("handle_catalog")
    table = open_handle(TableRef(table="handle_catalog"), "source_b", spark)
    assert isinstance(table, SparkTable)
    assert table.exists()
    assert table.shape().partition_by == ("RecDate",)
    assert table.shape().schema.fieldNames() == ["TrxId", "RecDate"]
    commit = table.latest_commit()
    assert commit is not None and commit["version"] == 0
    latest = table.latest_unit("RecDate", "day", lambda _ref: None, with_spark=True)
    assert latest == to_index(DAYS[2], "day")
    assert not open_handle(TableRef(table="handle_nowhere"), "source_b", spark).exists()


@pytest.mark.pure
def test_a_missing_table_does_not_exist_and_a_read_of_it_names_the_role(tmp_path: Path) -> None:
    missing = open_handle(SourceRef(path=str(tmp_path / "none")), "source_b")
    assert not missing.exists()
    with pytest.raises(ConfigError, match=re.escape(f"source_b: no Delta table at path {tmp_path / 'none'}")):
        missing.present_rows()
    with pytest.raises(ConfigError, match="source_b: no Delta table"):
        missing.shape()
    upstream = open_handle(SourceRef(path=str(tmp_path / "none"), job="scans"), "source_a")
    with pytest.raises(ConfigError, match="the target of job scans, which has not run yet"):
        upstream.present_rows()


@pytest.mark.pure
def test_a_question_of_the_files_on_disk_is_given_the_local_folder_or_told_the_table_is_missing(
    tmp_path: Path,
) -> None:
    location = _days(tmp_path / "a")
    table = open_handle(TableRef(path=f"file://{location}"), "target")
    assert table.answer("the target's files", lambda folder: folder, lambda why: str(why), on_disk=True) == location
    missing = open_handle(TableRef(path=str(tmp_path / "none")), "target")
    told = missing.answer("the target's files", lambda folder: folder, lambda why: repr(why), on_disk=True)
    assert told == repr(FileNotFoundError(f"target: no Delta table at path {tmp_path / 'none'}"))
    in_s3 = open_handle(TableRef(path="s3a://lake/t"), "target")
    assert (
        in_s3.answer("", lambda folder: folder, str, on_disk=True)
        == "the target is in S3: its files are not read without Spark"
    )


@pytest.mark.pure
def test_the_latest_unit_is_an_upstreams_watermark_and_a_where_does_not_narrow_it(tmp_path: Path) -> None:
    location = _days(tmp_path / "a")
    chained = open_handle(SourceRef(path=location, job="scans"), "source_a")
    assert chained.latest_unit("RecDate", "day", lambda ref: 7 if ref.job == "scans" else None) == 7
    narrowed = open_handle(SourceRef(path=location, where="RecDate < DATE'2025-03-02'"), "source_a")
    assert narrowed.latest_unit("RecDate", "day", lambda _ref: 7) == to_index(DAYS[-1], "day")


@pytest.mark.spark
def test_the_latest_unit_from_spark_is_the_logs_for_a_source_with_a_where(spark: SparkSession, tmp_path: Path) -> None:
    location = _days(tmp_path / "a")
    ref = SourceRef(path=location, where="RecDate < DATE'2025-03-02'")
    table = open_handle(ref, "source_a", spark)
    from_log = table.latest_unit("RecDate", "day", lambda _ref: None)
    assert table.latest_unit("RecDate", "day", lambda _ref: None, with_spark=True) == from_log


# Whether a table qualifies for its log (is it local, is a Delta table there, may the log answer): asked only in the
# handle's module and the low-level helpers it uses; the session's kind is defined in spark_compat.
_DECIDERS = ("log_else(", "sees_its_files", "local_file_path(", "is_delta_path(", "has_commit(", "local_folder(")
_DECIDERS += ("source_location(", "_SCHEME")
_ALLOWED = {"pipeline/delta/table.py", "pipeline/delta/delta_log.py", "spark_compat.py"}


@pytest.mark.pure
def test_only_the_table_handle_decides_whether_the_log_answers() -> None:
    askers = {
        str(path.relative_to(PACKAGE)): [word for word in _DECIDERS if word in path.read_text()]
        for path in PACKAGE.rglob("*.py")
    }
    assert {name: words for name, words in askers.items() if words and name not in _ALLOWED} == {}
    assert sum(path.read_text().count("_SCHEME = ") for path in PACKAGE.rglob("*.py")) == 1
