"""A window's source rows read as the Parquet files its Delta log names (deltainc/pipeline/delta/sources.py):
the rows the Delta read gives for those units, and the Delta read wherever the log cannot answer exactly."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from frames import frame
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deltainc.pipeline.controller.prepared_job import prepare_job
from deltainc.pipeline.delta.sources import window_rows
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.sections import SourceRef
from deltainc.settings import load_settings
from deltainc.time_units import from_index, to_index
from jobs import feature_job_config, job_config

pytestmark = pytest.mark.spark

D = [dt.date(2025, 3, 1) + dt.timedelta(days=i) for i in range(4)]
FIRST, LAST = to_index(D[1], "day"), to_index(D[3], "day")


def _job(root: Path, **changes: Any) -> JobConfig:
    join = {"how": "left", "join_cols": ["TrxId"], "look_back_time": 1, "max_waiting_time": 1}
    return job_config(root, "j", D[0], join, keys=["TrxId"], b_keys=["SepaId"], **changes)


def _write(spark: SparkSession, root: Path, b_options: dict[str, str] | None = None) -> None:
    a = [(i, 10 * i, D[i]) for i in range(3)]
    frame(spark, a, "TrxId long, Amount long, RecDate date").write.format("delta").partitionBy("RecDate").save(
        str(root / "a")
    )
    # A column added on the last day: the files before it lack it, and read NULL there, as Delta reads them.
    later = frame(spark, [(3, 30, "late", D[3])], "TrxId long, Amount long, Note string, RecDate date")
    later.write.format("delta").mode("append").option("mergeSchema", "true").save(str(root / "a"))
    b = frame(spark, [(i, 100 + i, D[i]) for i in range(4)], "TrxId long, SepaId long, RecDate date")
    b.write.format("delta").partitionBy("RecDate").options(**(b_options or {})).save(str(root / "b"))


def _delta_rows(spark: SparkSession, path: Path) -> DataFrame:
    return spark.read.format("delta").load(str(path)).where(F.col("RecDate").between(D[1], D[3]))


def _file_indexes(frame: DataFrame) -> list[str]:
    """The kind of file index each relation of the frame's plan reads: Delta's own, or a listing of given files."""
    leaves = frame._jdf.queryExecution().analyzed().collectLeaves()
    return [leaves.apply(i).relation().location().getClass().getSimpleName() for i in range(leaves.size())]


def _rows(spark: SparkSession, job: JobConfig, role: str) -> DataFrame | None:
    return prepare_job(job, spark, load_settings()).join.rows(role, FIRST, LAST)  # type: ignore[attr-defined]


def test_a_window_reads_from_the_files_of_its_units_the_rows_delta_reads(spark: SparkSession, tmp_path: Path) -> None:
    _write(spark, tmp_path)
    read = _rows(spark, _job(tmp_path), "source_a")
    assert read is not None
    delta = _delta_rows(spark, tmp_path / "a")
    assert _file_indexes(read) == ["InMemoryFileIndex"] and _file_indexes(delta) != ["InMemoryFileIndex"]
    assert read.schema == delta.schema
    assert sorted(Path(f).name for f in read.inputFiles()) == sorted(Path(f).name for f in delta.inputFiles())
    assert sorted(read.collect()) == sorted(delta.collect())
    assert sorted((r.TrxId, r.Note) for r in read.collect()) == [(1, None), (2, None), (3, "late")]


def test_a_source_s_where_applies_to_the_files_read(spark: SparkSession, tmp_path: Path) -> None:
    _write(spark, tmp_path)
    job = _job(tmp_path, source_b={"path": str(tmp_path / "b"), "where": "SepaId <> 102"})
    read = _rows(spark, job, "source_b")
    assert read is not None
    assert sorted(r.SepaId for r in read.collect()) == [101, 103]


def test_a_source_with_deletion_vectors_is_read_through_delta(spark: SparkSession, tmp_path: Path) -> None:
    _write(spark, tmp_path, {"delta.enableDeletionVectors": "true"})
    other = frame(spark, [(9, 109, D[2])], "TrxId long, SepaId long, RecDate date")
    other.coalesce(1).union(spark.read.format("delta").load(str(tmp_path / "b")).where("SepaId = 102")).coalesce(
        1
    ).write.format("delta").mode("overwrite").option("replaceWhere", f"RecDate = '{D[2]}'").save(str(tmp_path / "b"))
    spark.sql(f"DELETE FROM delta.`{tmp_path / 'b'}` WHERE SepaId = 102")  # one of the file's two rows: a DV
    assert (
        spark.sql(f"DESCRIBE HISTORY delta.`{tmp_path / 'b'}` LIMIT 1").first()["operationMetrics"][
            "numDeletionVectorsAdded"
        ]
        == "1"
    )
    assert _rows(spark, _job(tmp_path), "source_b") is None


def test_a_source_with_a_not_null_column_is_read_through_delta(spark: SparkSession, tmp_path: Path) -> None:
    _write(spark, tmp_path)
    spark.sql(
        f"CREATE TABLE delta.`{tmp_path / 'c'}` (TrxId BIGINT NOT NULL, SepaId BIGINT, RecDate DATE) "
        "USING delta PARTITIONED BY (RecDate)"
    )
    spark.read.format("delta").load(str(tmp_path / "b")).write.format("delta").mode("append").save(str(tmp_path / "c"))
    assert _rows(spark, _job(tmp_path, source_b={"path": str(tmp_path / "c")}), "source_b") is None


def test_a_feature_job_s_window_reads_its_spine_and_sources_from_their_files(
    spark: SparkSession, tmp_path: Path
) -> None:
    _write(spark, tmp_path)
    pay = {"name": "pay", "path": str(tmp_path / "b"), "how": "left", "join_cols": ["TrxId"], "keys": ["SepaId"],
           "look_back_time": 1, "max_waiting_time": 1}  # fmt: skip
    job = feature_job_config(tmp_path, "f", D[0], [pay])
    (tmp_path / "trx").symlink_to(tmp_path / "a")  # the spine: feature_job_config reads root/trx
    window = prepare_job(job, spark, load_settings()).join.join(LAST, LAST)
    for scan in window.scans:
        first, last = (from_index(unit, "day") for unit in scan.units)
        table = tmp_path / ("a" if scan.role == "source_a" else "b")
        delta = spark.read.format("delta").load(str(table)).where(F.col("RecDate").between(first, last))
        assert _file_indexes(scan.scan) == ["InMemoryFileIndex"]  # the files listed, not Delta's index
        assert sorted(scan.scan.collect()) == sorted(delta.collect())


def test_an_hour_job_s_source_not_partitioned_by_its_timestamp_is_read_from_the_files_its_hours_span(
    spark: SparkSession, tmp_path: Path
) -> None:
    start = dt.datetime(2025, 3, 1, 5)
    for n in range(4):  # one append, one file, an hour
        rows = [(n, start + dt.timedelta(hours=n, minutes=m)) for m in (0, 59)]
        frame(spark, rows, "TrxId long, RecDate timestamp").coalesce(1).write.format("delta").mode("append").save(
            str(tmp_path / "a")
        )
    table = spark.read.format("delta").load(str(tmp_path / "a"))
    first, last = to_index(start, "hour") + 1, to_index(start, "hour") + 2
    rows = window_rows(
        spark, {"source_a": SourceRef(path=str(tmp_path / "a"))}, {"source_a": table}, lambda _role: "RecDate", "hour"
    )
    read = rows("source_a", first, last)
    assert read is not None and _file_indexes(read) == ["InMemoryFileIndex"]
    assert len(read.inputFiles()) == 2
    delta = table.where(F.col("RecDate").between(from_index(first, "hour"), from_index(last + 1, "hour")))
    assert sorted(read.collect()) == sorted(delta.where(F.col("RecDate") < from_index(last + 1, "hour")).collect())
