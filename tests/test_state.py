"""The state tables: the watermark only moves forward; the lock admits one run and expires when stale."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from deltainc import JobLockedError
from deltainc.state import (
    LEGACY_WATERMARK_SCHEMA,
    RunRecord,
    StatePaths,
    acquire_lock,
    append_run,
    ensure_state_tables,
    read_watermark,
    release_lock,
    remove_lock,
    state_paths,
)


def record(paths: StatePaths, spark: SparkSession, job: str, run_id: str, unit: int | None, last: bool) -> None:
    started = dt.datetime(2025, 3, 1)
    append_run(
        spark,
        paths,
        RunRecord(
            job, run_id, "run", None, None, "succeeded", None, started, 1.0, watermark_unit=unit, releases_lock=last
        ),
    )


def test_the_watermark_never_moves_backwards(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(spark, paths)
    assert read_watermark(spark, paths, "j") is None
    record(paths, spark, "j", "r1", 20150, True)
    record(paths, spark, "j", "r2", 20140, True)
    record(paths, spark, "j", "r4", None, True)  # a re-run does not move it
    record(paths, spark, "other", "r3", 20200, True)
    assert read_watermark(spark, paths, "j") == 20150
    assert read_watermark(spark, paths, "other") == 20200


def test_a_watermark_table_of_an_earlier_version_is_still_read(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(spark, paths)
    spark.sql(f"CREATE TABLE delta.`{paths.legacy_watermarks}` ({LEGACY_WATERMARK_SCHEMA}) USING delta")
    spark.sql(f"INSERT INTO delta.`{paths.legacy_watermarks}` VALUES ('j', 'day', '2025-03-03', 20150, now(), 'r')")
    assert read_watermark(spark, paths, "j") == 20150
    record(paths, spark, "j", "r1", 20151, True)
    assert read_watermark(spark, paths, "j") == 20151


def test_the_last_run_log_row_of_a_run_releases_its_lock(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(spark, paths)
    acquire_lock(spark, paths, "j", "first", stale_after_minutes=60)
    record(paths, spark, "j", "first", 20150, False)  # a window, more to come: still held
    with pytest.raises(JobLockedError):
        acquire_lock(spark, paths, "j", "second", stale_after_minutes=60)
    record(paths, spark, "j", "first", 20151, True)
    acquire_lock(spark, paths, "j", "second", stale_after_minutes=60)
    holders = [r.run_id for r in spark.read.format("delta").load(paths.locks).where("job = 'j'").collect()]
    assert holders == ["second"]


def test_a_held_lock_refuses_a_second_run_naming_the_holder(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(spark, paths)
    acquire_lock(spark, paths, "j", "first", stale_after_minutes=60)
    with pytest.raises(JobLockedError, match=r"job 'j' is locked by run first \("):
        acquire_lock(spark, paths, "j", "second", stale_after_minutes=60)
    acquire_lock(spark, paths, "k", "second", stale_after_minutes=60)  # another job is not affected


def test_a_run_releases_only_its_own_lock(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(spark, paths)
    acquire_lock(spark, paths, "j", "first", stale_after_minutes=60)
    release_lock(spark, paths, "j", "second")
    with pytest.raises(JobLockedError):
        acquire_lock(spark, paths, "j", "third", stale_after_minutes=60)
    release_lock(spark, paths, "j", "first")
    acquire_lock(spark, paths, "j", "third", stale_after_minutes=60)


def test_a_stale_lock_is_taken_over(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(spark, paths)
    spark.sql(
        f"INSERT INTO delta.`{paths.locks}` VALUES ('j', 'dead', current_timestamp() - INTERVAL 2 HOURS, 'x@y:1')"
    )
    acquire_lock(spark, paths, "j", "alive", stale_after_minutes=60)
    holders = [r.run_id for r in spark.read.format("delta").load(paths.locks).where("job = 'j'").collect()]
    assert holders == ["alive"]


def test_unlock_removes_a_lock_by_hand_and_checks_the_run_id(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(spark, paths)
    acquire_lock(spark, paths, "j", "first", stale_after_minutes=60)
    with pytest.raises(ValueError, match="--run-id: job 'j' is locked by run first"):
        remove_lock(spark, paths, "j", "nope")
    assert [r["run_id"] for r in remove_lock(spark, paths, "j")] == ["first"]
    acquire_lock(spark, paths, "j", "second", stale_after_minutes=60)
