"""A one-day window's too-late search fed through the Delta logs (deltainc/pipeline/controller/too_late_from_logs.py):
it finds the rows the search over the whole tables with Spark finds, and where the logs cannot answer Spark reads.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from frames import frame
from pyspark.sql import SparkSession

from deltainc.join.windows import Window
from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.controller.prepared_job import prepare_job
from deltainc.pipeline.controller.too_late_from_logs import late_inputs_from_logs
from deltainc.pipeline.delta.log_rows import existing_table, unit_range_rows
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.settings import load_settings
from deltainc.time_units import TimeUnit, to_index
from jobs import job_config

pytestmark = pytest.mark.spark

START = dt.date(2025, 3, 1)
D = [START + dt.timedelta(days=i) for i in range(6)]
# mw = 1, horizon 4: a B row 2 to 4 days after its A row is too late.
A = [(1, 10, D[0]), (1, 11, D[2]), (2, 20, D[0]), (3, 30, D[1]), (None, 40, D[1]), (5, 50, D[0]), (8, 80, D[5])]
B = [(1, 100, D[3]), (1, 101, D[4]), (2, 200, D[1]), (2, 201, D[4]), (3, 300, D[5]), (None, 400, D[4]),
     (5, 500, D[5])]  # fmt: skip


def _job(root: Path, name: str, **changes: Any) -> JobConfig:
    join = {"how": "left", "join_cols": ["TrxId"], "look_back_time": 1, "max_waiting_time": 1, "late_horizon": 4}
    return job_config(root, name, START, join, keys=["TrxId", "Amount"], b_keys=["SepaId"], **changes)


def _write(spark: SparkSession, root: Path) -> None:
    for name, rows, schema in (("a", A, "TrxId long, Amount long, RecDate date"),
                               ("b", B, "TrxId long, SepaId long, RecDate date")):  # fmt: skip
        frame(spark, rows, schema).write.format("delta").partitionBy("RecDate").save(str(root / name))


def _too_late(spark: SparkSession, job: JobConfig) -> list[int | None]:
    return [window.record.rows_too_late for window in run(job, until=D[5], spark=spark).windows]


@pytest.mark.windows
def test_the_search_through_the_logs_finds_the_too_late_rows_spark_finds(spark: SparkSession, tmp_path: Path) -> None:
    _write(spark, tmp_path)
    # A `where` on B is a Spark condition: that job's search reads both tables with Spark.
    through_spark = _job(tmp_path, "spark", source_b={"path": str(tmp_path / "b"), "where": "SepaId > 0"})
    found = _too_late(spark, _job(tmp_path, "logs"))
    assert found == _too_late(spark, through_spark)
    # Day 3: B 100 for A 10 (3 days after it; A 11 it matches); day 4: B 101 for A 10 and A 11, B 201 for A 20;
    # day 5: B 300 for A 30 and none for A 50 (5 days before, past the horizon). NULL keys never match.
    assert found == [0, 0, 0, 1, 3, 1]


@pytest.mark.windows
def test_the_logs_feed_the_search_of_a_day_job_on_tables_in_local_folders(spark: SparkSession, tmp_path: Path) -> None:
    _write(spark, tmp_path)
    job = _job(tmp_path, "logs")
    run(job, until=D[4], spark=spark)
    prepared = prepare_job(job, spark, load_settings())
    search = prepared.join.late_search
    assert search is not None
    day = to_index(D[4], prepared.uom)
    read = late_inputs_from_logs(prepared, search, Window(day, day, prepared.uom))
    assert read is not None and not read.empty
    assert sorted(r.SepaId for r in read.b_rows.collect()) == [101, 201]
    assert sorted(r.Amount for r in read.target_rows.collect()) == [10, 11, 20]  # the rows of keys 1 and 2
    where = _job(tmp_path, "where", source_b={"path": str(tmp_path / "b"), "where": "SepaId > 0"})
    prepared = prepare_job(where, spark, load_settings())
    search = prepared.join.late_search
    assert search is not None
    assert late_inputs_from_logs(prepared, search, Window(day, day, prepared.uom)) is None


def test_the_rows_a_deletion_vector_deletes_are_not_read(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    frame(spark, [(1, D[0]), (2, D[0]), (3, D[1])], "k long, RecDate date").write.format("delta").option(
        "delta.enableDeletionVectors", "true"
    ).save(path)
    spark.sql(f"DELETE FROM delta.`{path}` WHERE k = 2")
    rows = unit_range_rows(existing_table(path), path, ["k"], "RecDate", to_index(D[0]), to_index(D[1]), TimeUnit.DAY)
    assert sorted(rows.column("k").to_pylist()) == [1, 3]


@pytest.mark.windows
@pytest.mark.parametrize("key_type", ["long", "string"])
def test_an_hour_jobs_search_goes_through_the_logs_and_finds_what_spark_finds(
    spark: SparkSession, tmp_path: Path, key_type: str
) -> None:
    # The day test's rows an hour apart instead of a day, from the job's first hour (00:00 UTC of its start_date),
    # in one file per table: the search's reads cut rows out of a file (string keys come back as string views).
    t0 = dt.datetime(2025, 3, 1)
    hours = {day: t0 + dt.timedelta(hours=i) for i, day in enumerate(D)}

    def keyed(key: int | None) -> int | str | None:
        return key if key is None or key_type == "long" else f"T{key}"

    for name, rows, schema in (("a", A, f"TrxId {key_type}, Amount long, RecDate timestamp"),
                               ("b", B, f"TrxId {key_type}, SepaId long, RecDate timestamp")):  # fmt: skip
        frame(spark, [(keyed(row[0]), row[1], hours[row[2]]) for row in rows], schema).coalesce(1).write.format(
            "delta"
        ).save(str(tmp_path / name))
    hourly = {"join": {"how": "left", "join_cols": ["TrxId"], "look_back_time": 1, "max_waiting_time": 1,
                       "late_horizon": 4, "time_uom": "hour"}}  # fmt: skip
    job = _job(tmp_path, "logs", **hourly)
    through_spark = _job(tmp_path, "spark", source_b={"path": str(tmp_path / "b"), "where": "SepaId > 0"}, **hourly)
    found = [w.record.rows_too_late for w in run(job, until=hours[D[5]].isoformat(), spark=spark).windows]
    assert found == [0, 0, 0, 1, 3, 1]  # the day test's too-late rows, hour for day
    assert found == [
        w.record.rows_too_late for w in run(through_spark, until=hours[D[5]].isoformat(), spark=spark).windows
    ]
    prepared = prepare_job(job, spark, load_settings())
    assert prepared.join.late_search is not None
    hour = to_index(hours[D[4]], prepared.uom)
    read = late_inputs_from_logs(prepared, prepared.join.late_search, Window(hour, hour, prepared.uom))
    assert read is not None and sorted(r.SepaId for r in read.b_rows.collect()) == [101, 201]
    assert sorted(r.Amount for r in read.target_rows.collect()) == [10, 11, 20]
