"""The Delta-log reader (delta-rs, no JVM) answers exactly what the Spark readers answer, or says it cannot."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from frames import frame
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from deltainc.join.columns import source_filter
from deltainc.pipeline.delta.delta_log import LogUnreadable, reading
from deltainc.pipeline.delta.delta_log_stats import (
    files_in_units,
    latest_unit_from_log,
    null_count_from_log,
    null_keys_in_units,
)
from deltainc.pipeline.delta.spark_counts import count_null_inc, latest_unit, scan_stats
from deltainc.pipeline.state.from_delta_log import read_runs_from_log, read_state_from_log
from deltainc.pipeline.state.lock import acquire, release_lock
from deltainc.pipeline.state.store import RunRecord, StatePaths, append_run, ensure_state_tables, state_paths

pytestmark = pytest.mark.spark

LEASE = 120
LEGACY_WATERMARK_SCHEMA = (  # the watermark table of deltainc 0.1, still read
    "job STRING, time_uom STRING, watermark STRING, watermark_unit BIGINT, updated_at TIMESTAMP, run_id STRING"
)
OLD_RUN_SCHEMA = (  # the run log of deltainc 0.1: no watermark_unit, releases_lock, took_over, job_settings
    "job STRING, run_id STRING, command STRING, window_start STRING, window_end STRING, status STRING, "
    "error STRING, started_at TIMESTAMP, duration_s DOUBLE"
)


def run(
    paths: StatePaths,
    job: str,
    run_id: str,
    hour: int,
    unit: int | None = None,
    last: bool = True,
    status: str = "succeeded",
    settings: dict[str, object] | None = None,
) -> None:
    started = dt.datetime(2025, 3, 1, hour, 30, 15, 123456)
    append_run(
        paths,
        RunRecord(
            job,
            run_id,
            "run",
            "2025-03-01",
            None,
            status,
            None if status == "succeeded" else "boom",
            started,
            1.5,
            rows_inserted=hour,
            watermark_unit=unit,
            releases_lock=last,
            job_settings=None if settings is None else json.dumps(settings),
        ),
    )


def assert_same_state(spark: SparkSession, paths: StatePaths, *jobs: str) -> None:
    """What the log reader gives equals what Spark reads from the same tables, for each job (and one that never
    ran): the watermark, the lock's holder, and the run log's rows with their column order and Python types. Spark
    reads each table once, all jobs' rows, in the order the run log is read (newest first)."""
    runs, legacy, locks = (
        spark_rows(spark, paths.runs, F.col("started_at").desc()),
        spark_rows(spark, paths.legacy_watermarks),
        spark_rows(spark, paths.locks),
    )
    for job in (*jobs, "never-ran"):
        state = read_state_from_log(paths, job)
        spark_runs = [row for row in runs if row["job"] == job]
        units = [row.get("watermark_unit") for row in spark_runs if row.get("watermark_unit") is not None]
        units += [row["watermark_unit"] for row in legacy if row["job"] == job]
        assert state.watermark == (max(units) if units else None)
        held = [row for row in locks if row["job"] == job]
        assert (state.holder.run_id if state.holder else None) == (held[0]["run_id"] if held else None)
        for limit in (0, 2, 100):
            log_runs = read_runs_from_log(paths, job, limit)
            assert log_runs == spark_runs[:limit]
            assert [list(row) for row in log_runs] == [list(row) for row in spark_runs[:limit]]  # same column order
            assert [[type(v) for v in row.values()] for row in log_runs] == [
                [type(v) for v in row.values()] for row in spark_runs[:limit]
            ]  # same Python types (1 == 1.0 == True would hide a difference)


def spark_rows(spark: SparkSession, location: str, *order: Column) -> list[dict[str, object]]:
    """Every row of the Delta table at `location` as Spark reads it (in `order`), none if there is no table."""
    if not (Path(location) / "_delta_log").is_dir():
        return []
    table = spark.read.format("delta").load(location)
    return [row.asDict() for row in (table.orderBy(*order) if order else table).collect()]


def assert_same_latest(spark: SparkSession, location: str, inc_col: str = "RecDate") -> None:
    frame = spark.read.format("delta").load(location)
    for uom in ("day", "hour", "minute"):
        assert latest_unit_from_log(location, inc_col, uom) == latest_unit(frame, inc_col, uom)


def test_fresh_state_without_any_table(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path / "state"))
    assert read_state_from_log(paths, "j").watermark is None
    assert read_runs_from_log(paths, "j", 5) == []
    assert_same_state(spark, paths, "j")
    ensure_state_tables(paths)
    assert_same_state(spark, paths, "j")


def test_runs_give_the_same_watermark_runs_and_settings(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(paths)
    spark.sql(f"ALTER TABLE delta.`{paths.runs}` SET TBLPROPERTIES ('delta.checkpointInterval' = '3')")
    run(paths, "j", "r1", 1, 20150, settings={"chunk": "day"})
    run(paths, "j", "r2", 2, 20152, settings={"chunk": "month", "max_window": 3})
    run(paths, "j", "r3", 3, 20151)  # an older unit: the watermark never moves back
    run(paths, "j", "r4", 4, None, settings={"chunk": "year"})  # a re-run: moves nothing, built nothing
    run(paths, "j", "r5", 5, 20153, status="failed", settings={"chunk": "all"})
    run(paths, "other", "r6", 6, 20200, settings={"chunk": "all"})
    run(paths, "it's \\odd", "r7", 7, 20100)  # a name the pushed-down predicate does not carry
    state = read_state_from_log(paths, "j")
    assert (state.watermark, state.settings) == (20153, {"chunk": "month", "max_window": 3})
    assert [row["run_id"] for row in read_runs_from_log(paths, "j", 3)] == ["r5", "r4", "r3"]
    assert list((tmp_path / "runs" / "_delta_log").glob("*.checkpoint.parquet"))  # read from a checkpoint too
    assert read_runs_from_log(paths, "j", 1)[0]["started_at"] == dt.datetime(2025, 3, 1, 5, 30, 15, 123456)
    assert_same_state(spark, paths, "j", "other", "it's \\odd")


def test_a_held_lock_and_its_release(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(paths)
    acquire(paths, "j", "first", LEASE)
    held = read_state_from_log(paths, "j").holder
    assert held is not None and held.run_id == "first" and not held.finished
    assert abs((dt.datetime.now() - held.acquired_at).total_seconds()) < 60  # naive local time, as pyspark's
    assert_same_state(spark, paths, "j")
    run(paths, "j", "first", 1, 20150, last=False)  # a window, more to come: still held
    assert_same_state(spark, paths, "j")
    run(paths, "j", "first", 2, 20151, last=True)  # the last row releases it
    finished = read_state_from_log(paths, "j").holder
    assert finished is not None and finished.finished
    assert_same_state(spark, paths, "j")
    acquire(paths, "j", "second", LEASE)
    assert_same_state(spark, paths, "j")
    release_lock(paths.locks, "j", "second")  # a run that ends without a run-log row
    assert read_state_from_log(paths, "j").holder is None
    assert_same_state(spark, paths, "j")


def test_a_legacy_watermark_table_is_merged_in(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(paths)
    spark.sql(f"CREATE TABLE delta.`{paths.legacy_watermarks}` ({LEGACY_WATERMARK_SCHEMA}) USING delta")
    spark.sql(f"INSERT INTO delta.`{paths.legacy_watermarks}` VALUES ('j', 'day', '2025-03-03', 20150, now(), 'r')")
    assert read_state_from_log(paths, "j").watermark == 20150
    assert_same_state(spark, paths, "j")
    run(paths, "j", "r1", 1, 20149)
    assert read_state_from_log(paths, "j").watermark == 20150
    run(paths, "j", "r2", 2, 20151)
    assert read_state_from_log(paths, "j").watermark == 20151
    assert_same_state(spark, paths, "j")


def test_a_run_log_and_lock_table_of_deltainc_0_1(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    spark.sql(f"CREATE TABLE delta.`{paths.runs}` ({OLD_RUN_SCHEMA}) USING delta")
    old_lock_schema = "job STRING, run_id STRING, acquired_at TIMESTAMP, owner STRING"  # no heartbeat_at
    spark.sql(f"CREATE TABLE delta.`{paths.locks}` ({old_lock_schema}) USING delta")
    spark.sql(f"INSERT INTO delta.`{paths.runs}` VALUES ('j', 'old', 'run', NULL, NULL, 'succeeded', NULL, now(), 1.0)")
    spark.sql(f"INSERT INTO delta.`{paths.locks}` VALUES ('j', 'old', now(), 'x@another-host:1')")
    state = read_state_from_log(paths, "j")
    assert state.watermark is None and state.holder is not None
    assert state.holder.heartbeat_at is None and not state.holder.finished
    assert_same_state(spark, paths, "j")


def test_a_date_partitioned_source(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    frame = spark.sql(
        "SELECT CAST(d AS DATE) AS RecDate, id FROM VALUES ('2025-02-01', 1), ('2025-02-03', 2), (NULL, 3) t(d, id)"
    )
    frame.write.format("delta").partitionBy("RecDate").save(location)
    assert latest_unit_from_log(location, "recdate", "day") == 20122  # matched ignoring case, as Spark does
    assert_same_latest(spark, location)


def test_a_timestamp_partitioned_source(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    rows = "('2025-02-01 00:00:00', 1), ('2025-02-03 05:00:00', 2), ('2025-02-02 23:00:00', 3)"
    spark.sql(f"SELECT CAST(d AS TIMESTAMP) AS RecDate, id FROM VALUES {rows} t(d, id)").write.format(
        "delta"
    ).partitionBy("RecDate").save(location)
    assert (tmp_path / "a" / "RecDate=2025-02-03 05%3A00%3A00").is_dir()
    assert latest_unit_from_log(location, "RecDate", "hour") == 20122 * 24 + 5
    assert_same_latest(spark, location)


def test_an_unpartitioned_source_answers_from_file_statistics(spark: SparkSession, tmp_path: Path) -> None:
    dates, stamps = str(tmp_path / "dates"), str(tmp_path / "stamps")
    spark.sql("SELECT CAST(NULL AS DATE) AS RecDate, 1 AS id").write.format("delta").save(dates)  # an all-NULL file
    assert latest_unit_from_log(dates, "RecDate", "day") is None
    assert_same_latest(spark, dates)
    spark.sql(
        "SELECT CAST(d AS DATE) AS RecDate, id FROM VALUES ('2025-02-01', 1), ('2025-02-03', 2) t(d, id)"
    ).write.format("delta").mode("append").save(dates)
    assert_same_latest(spark, dates)
    rows = "('2025-02-01 00:00:00', 1), ('2025-02-03 05:59:59.999999', 2), (NULL, 3)"  # stats keep milliseconds only
    spark.sql(f"SELECT CAST(d AS TIMESTAMP) AS RecDate, id FROM VALUES {rows} t(d, id)").coalesce(1).write.format(
        "delta"
    ).save(stamps)
    assert latest_unit_from_log(stamps, "RecDate", "hour") == 20122 * 24 + 5
    assert_same_latest(spark, stamps)
    spark.sql(f"ALTER TABLE delta.`{stamps}` SET TBLPROPERTIES ('delta.checkpointInterval' = '2')")
    spark.sql(f"INSERT INTO delta.`{stamps}` VALUES (TIMESTAMP'2025-01-01 10:00:00', 4)")
    assert list((tmp_path / "stamps" / "_delta_log").glob("*.checkpoint.parquet"))  # statistics from a checkpoint
    assert latest_unit_from_log(stamps, "RecDate", "hour") == 20122 * 24 + 5
    assert_same_latest(spark, stamps)


def test_an_empty_source_has_no_latest_unit(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    frame(spark, [], "RecDate DATE, id INT").write.format("delta").save(location)
    assert latest_unit_from_log(location, "RecDate", "day") is None
    assert_same_latest(spark, location)


def test_deletion_vectors_make_the_log_unreadable(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    frame = spark.sql("SELECT CAST(d AS DATE) AS RecDate, id FROM VALUES ('2025-02-01', 1), ('2025-02-03', 2) t(d, id)")
    frame.coalesce(1).write.format("delta").save(location)
    spark.sql(f"ALTER TABLE delta.`{location}` SET TBLPROPERTIES ('delta.enableDeletionVectors'='true')")
    assert_same_latest(spark, location)  # enabled but unused: the statistics still hold
    spark.sql(f"DELETE FROM delta.`{location}` WHERE id = 2")
    assert latest_unit(spark.read.format("delta").load(location), "RecDate", "day") == 20120  # the stats say 20122
    with pytest.raises(LogUnreadable, match="deletion vectors"):
        latest_unit_from_log(location, "RecDate", "day")


def without_rec_date_statistics(spark: SparkSession, location: str, rec_date: str) -> str:
    """A table of one row (1, rec_date) whose file keeps statistics of its first column, id, only."""
    spark.sql(
        f"CREATE TABLE delta.`{location}` (id INT, RecDate DATE) USING delta "
        "TBLPROPERTIES ('delta.dataSkippingNumIndexedCols' = '1')"
    )
    spark.sql(f"INSERT INTO delta.`{location}` VALUES (1, {rec_date})")
    return location


def test_a_file_without_statistics_makes_the_log_unreadable(spark: SparkSession, tmp_path: Path) -> None:
    location = without_rec_date_statistics(spark, str(tmp_path / "a"), "DATE'2025-02-01'")
    with pytest.raises(LogUnreadable, match="no max statistic"):
        latest_unit_from_log(location, "RecDate", "day")


def test_column_mapping_and_odd_locations_make_the_log_unreadable(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    spark.sql("SELECT DATE'2025-02-01' AS RecDate, 1 AS id").write.format("delta").save(location)
    assert latest_unit_from_log(f"file://{location}", "RecDate", "day") == 20120
    for odd in (f"s3://bucket/{location}", str(tmp_path / "missing")):
        with pytest.raises(LogUnreadable):
            latest_unit_from_log(odd, "RecDate", "day")
    with pytest.raises(LogUnreadable):
        latest_unit_from_log(location, "id", "day")  # not a date: Spark gives the error
    spark.sql(
        f"ALTER TABLE delta.`{location}` SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name', "
        "'delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5')"
    )
    with pytest.raises(LogUnreadable, match="maps its column names"):
        latest_unit_from_log(location, "RecDate", "day")


def test_the_null_count_of_recdate_comes_from_the_log_as_spark_counts_it(spark: SparkSession, tmp_path: Path) -> None:
    rows = "('2025-02-01', 1), (NULL, 2), ('2025-02-03', 3), (NULL, 4), (NULL, 5)"
    frame = spark.sql(f"SELECT CAST(d AS DATE) AS RecDate, id FROM VALUES {rows} t(d, id)")
    for name, partitioning in (("flat", []), ("parted", ["RecDate"])):
        location = str(tmp_path / name)
        frame.repartition(2).write.format("delta").partitionBy(*partitioning).save(location)
        expected = count_null_inc(spark.read.format("delta").load(location), "RecDate")
        assert null_count_from_log(location, "recdate") == expected == 3
    location = without_rec_date_statistics(spark, str(tmp_path / "no_stats"), "NULL")
    with pytest.raises(LogUnreadable, match="null count|no null_count"):
        null_count_from_log(location, "RecDate")


def _files_read_as_spark_plans_them(spark: SparkSession, location: str) -> None:
    """files_in_units of the table at `location` equals Spark's planned scan for several day ranges."""
    table = spark.read.format("delta").load(location)
    for first, last in ((20120, 20121), (20121, 20121), (20122, 20130), (20000, 20200), (20121, None)):
        expected = scan_stats(spark, table.where(source_filter(table, "RecDate", "day", first, last)))
        assert files_in_units(location, "RecDate", "day", first, last) == (expected.files, expected.bytes)


def test_the_files_a_window_reads_come_from_the_log_as_spark_plans_them(spark: SparkSession, tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    days = "('2025-02-01', 1), ('2025-02-02', 2), ('2025-02-02', 3), ('2025-02-04', 4), (NULL, 5)"
    frame = spark.sql(f"SELECT CAST(d AS DATE) AS RecDate, id FROM VALUES {days} t(d, id)")
    frame.repartition(3).write.format("delta").partitionBy("RecDate").save(location)
    _files_read_as_spark_plans_them(spark, location)


def test_the_files_a_window_reads_of_an_unpartitioned_table_are_those_delta_skips_to(
    spark: SparkSession, tmp_path: Path
) -> None:
    # Four files: days 1-2, day 2, day 4 and a NULL day; Delta keeps the files whose min and max reach the range.
    location = str(tmp_path / "flat")
    for days in (("2025-02-01", "2025-02-02"), ("2025-02-02",), ("2025-02-04",), (None,)):
        rows = ", ".join("(NULL, 1)" if day is None else f"('{day}', 1)" for day in days)
        spark.sql(f"SELECT CAST(d AS DATE) AS RecDate, id FROM VALUES {rows} t(d, id)").coalesce(1).write.format(
            "delta"
        ).mode("append").save(location)
    _files_read_as_spark_plans_them(spark, location)


def test_null_keys_of_units_come_from_the_files_null_counts_where_those_are_exact(
    spark: SparkSession, tmp_path: Path
) -> None:
    # Unpartitioned, a file a day: day 1 without NULL keys, day 2 with two; a last file spans days 3-4 with one.
    location = str(tmp_path / "flat")
    for rows in ("('2025-02-01', 1)", "('2025-02-02', NULL), ('2025-02-02', NULL)",
                 "('2025-02-03', 3), ('2025-02-04', NULL)"):  # fmt: skip
        spark.sql(f"SELECT CAST(d AS DATE) AS RecDate, CAST(k AS INT) AS k FROM VALUES {rows} t(d, k)").coalesce(
            1
        ).write.format("delta").mode("append").save(location)
    assert null_keys_in_units(location, "k", "RecDate", "day", 20120, 20120) == 0
    assert null_keys_in_units(location, "k", "RecDate", "day", 20120, 20121) == 2
    with pytest.raises(LogUnreadable, match="reaches past the units"):
        null_keys_in_units(location, "k", "RecDate", "day", 20122, 20122)  # which of the file's days holds it?
    assert null_keys_in_units(location, "k", "RecDate", "day", 20122, 20123) == 1


def test_what_delta_rs_raises_while_reading_a_log_is_log_unreadable_naming_the_table(tmp_path: Path) -> None:
    from deltalake import DeltaTable

    (tmp_path / "not_delta").mkdir()
    folder = str(tmp_path / "not_delta")
    with pytest.raises(LogUnreadable, match=r"delta-rs cannot read .*not_delta: TableNotFoundError"), reading(folder):
        DeltaTable(folder)


def test_a_bug_of_deltainc_inside_a_log_read_surfaces_unchanged() -> None:
    # Only the log readers' errors fall back to Spark; deltainc's own would otherwise hide behind a slower path.
    rows: dict[str, int] = {}
    with pytest.raises(KeyError, match="num_records"), reading("/any/table"):
        rows["num_records"] += 1
