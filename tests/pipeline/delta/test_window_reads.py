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
from pyspark.sql.readwriter import DataFrameReader

from deltainc.errors import ConfigError
from deltainc.pipeline.controller.planned_target import source_frames
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
    refs = {"source_a": SourceRef(path=str(tmp_path / "a"))}
    rows = window_rows(spark, refs, {"source_a": table.schema}, lambda _role: "RecDate", "hour")
    read = rows("source_a", first, last)
    assert read is not None and _file_indexes(read) == ["InMemoryFileIndex"]
    assert len(read.inputFiles()) == 2
    delta = table.where(F.col("RecDate").between(from_index(first, "hour"), from_index(last + 1, "hour")))
    assert sorted(read.collect()) == sorted(delta.where(F.col("RecDate") < from_index(last + 1, "hour")).collect())


def test_a_window_read_from_its_files_has_spark_read_no_source_table(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(spark, tmp_path)
    loaded: list[str] = []
    load = DataFrameReader.load

    def counted(self: DataFrameReader, path: Any = None, *args: Any, **options: Any) -> DataFrame:
        loaded.append(str(path))
        return load(self, path, *args, **options)

    monkeypatch.setattr(DataFrameReader, "load", counted)
    window = prepare_job(_job(tmp_path), spark, load_settings()).join.join(FIRST, LAST)
    assert window.output.count() > 0
    assert [path for path in loaded if path.startswith(str(tmp_path))] == []


def test_a_source_s_columns_are_those_spark_reads_from_its_table(spark: SparkSession, tmp_path: Path) -> None:
    _write(spark, tmp_path)
    spark.sql(f"ALTER TABLE delta.`{tmp_path / 'b'}` ALTER COLUMN SepaId COMMENT 'the SEPA transfer'")  # metadata
    schemas = source_frames(spark, _job(tmp_path)).schemas
    for role, table in (("source_a", "a"), ("source_b", "b")):
        assert schemas[role] == spark.read.format("delta").load(str(tmp_path / table)).schema


def test_a_source_s_where_is_refused_before_its_table_is_read(spark: SparkSession, tmp_path: Path) -> None:
    _write(spark, tmp_path)
    job = _job(tmp_path)
    job = job.model_copy(update={"source_b": job.source_b.model_copy(update={"where": "NoSuchColumn > 1"})})
    with pytest.raises(ConfigError, match=r"source_b\.where: 'NoSuchColumn > 1' is not a condition.*SepaId"):
        source_frames(spark, job)
