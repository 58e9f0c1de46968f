"""The suite's delta-rs tables (tests/support/delta_rows.py) are the Delta tables Spark would write from the same rows:
the same schema, values and partitions, read back the same by Spark and by delta-rs."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest
from delta_rows import arrow_schema, column_names, read_rows, write_rows
from frames import frame
from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

SCHEMA = "Id long, OrderId long, Amount double, Name string, EventTime timestamp, RecDate date"
D1, D2 = dt.date(2025, 4, 1), dt.date(2025, 4, 2)
ROWS = [
    (2, None, 6.5, "b", dt.datetime(2025, 4, 1, 23, 30), D1),
    (1, 10, 5.0, "it's", dt.datetime(2025, 4, 1, 9, 0, 0, 123), D1),
    (3, 11, None, None, None, D2),
]


@pytest.mark.pure
def test_rows_written_are_read_back_sorted_with_their_types_and_naive_utc_timestamps(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "t", ROWS, SCHEMA)
    assert read_rows(path) == sorted(ROWS, key=lambda row: row[0])
    assert read_rows(path, ["OrderId", "Id"]) == [(10, 1), (11, 3), (None, 2)]  # NULLs last
    assert column_names(path) == ["Id", "OrderId", "Amount", "Name", "EventTime", "RecDate"]
    types = {field.name: str(field.type) for field in arrow_schema(SCHEMA)}
    assert types == {"Id": "int64", "OrderId": "int64", "Amount": "double", "Name": "string",
                     "EventTime": "timestamp[us, tz=UTC]", "RecDate": "date32[day]"}  # fmt: skip


@pytest.mark.pure
def test_partitions_are_those_named_and_append_and_overwrite_commit_once_each(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "t", ROWS, SCHEMA, partition_by=["RecDate"])
    write_rows(path, [(4, 12, 1.0, "d", None, D2)], SCHEMA, partition_by=["RecDate"], mode="append")
    log = tmp_path / "t" / "_delta_log"
    lines = [json.loads(line) for line in (log / f"{0:020}.json").read_text().splitlines()]
    metadata = next(line["metaData"] for line in lines if "metaData" in line)
    assert metadata["partitionColumns"] == ["RecDate"]
    added = [line["add"]["partitionValues"] for line in lines if "add" in line]
    assert sorted(v["RecDate"] for v in added) == [D1.isoformat(), D2.isoformat()]
    assert [row[0] for row in read_rows(path)] == [1, 2, 3, 4]
    write_rows(path, ROWS[:1], SCHEMA, partition_by=["RecDate"], mode="overwrite")
    assert read_rows(path, ["Id"]) == [(2,)]
    assert sorted(p.name for p in log.glob("*.json")) == [f"{v:020}.json" for v in range(3)]
    with pytest.raises(Exception, match="already exists"):
        write_rows(path, ROWS, SCHEMA, partition_by=["RecDate"])  # "error", as Spark's save


@pytest.mark.pure
def test_a_type_it_does_not_know_and_a_row_of_the_wrong_width_are_refused(tmp_path: Path) -> None:
    assert str(arrow_schema("Amount decimal(10, 2), k int").field("Amount").type) == "decimal128(10, 2)"
    with pytest.raises(ValueError, match=r"no type 'array<int>' \(column 'tags'"):
        arrow_schema("k int, tags array<int>")
    with pytest.raises(ValueError, match="row 1 has 2 values for 6 columns"):
        write_rows(tmp_path / "t", [ROWS[0], (1, D1)], SCHEMA)


def test_spark_reads_the_table_as_the_frame_of_the_same_rows_and_its_partitions(
    spark: SparkSession, tmp_path: Path
) -> None:
    schema = f"{SCHEMA}, Price decimal(10,2), Ok boolean, Small int"
    rows = [(*row, Decimal("1.25"), True, 7) for row in ROWS]
    path = write_rows(tmp_path / "t", rows, schema, partition_by=["RecDate"])
    read = spark.read.format("delta").load(path)
    expected = frame(spark, rows, schema)
    assert read.schema == expected.schema
    assert sorted(read.collect(), key=lambda r: r.Id) == sorted(expected.collect(), key=lambda r: r.Id)
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{path}`").collect()[0]
    assert detail["partitionColumns"] == ["RecDate"]
    assert read.where("RecDate = DATE'2025-04-02'").select("Id").collect()[0].Id == 3  # pruned by partition


def test_a_table_spark_wrote_is_read_back_as_spark_reads_it_deletion_vectors_applied(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    written = frame(spark, ROWS, SCHEMA).coalesce(1).write.format("delta").partitionBy("RecDate")  # Ids 1, 2: one file
    written.option("delta.enableDeletionVectors", "true").save(path)
    spark.sql(f"DELETE FROM delta.`{path}` WHERE Id = 2")  # a deletion vector, not a rewritten file
    history = spark.sql(f"DESCRIBE HISTORY delta.`{path}`").collect()[0]
    assert history["operationMetrics"]["numDeletionVectorsAdded"] == "1"
    by_spark = sorted(tuple(row) for row in spark.read.format("delta").load(path).collect())
    assert read_rows(path) == by_spark == [ROWS[1], ROWS[2]]
