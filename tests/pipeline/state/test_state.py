"""The state tables: the watermark only moves forward; the lock is a lease that admits one live run."""

from __future__ import annotations

import datetime as dt
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from deltainc import JobLockedError
from deltainc.join.windows import Window
from deltainc.pipeline.controller.plan import PipelineResult, WindowReport
from deltainc.pipeline.state.lock import acquire, release_lock, start_heartbeat, take_lock
from deltainc.pipeline.state.model import RunRecord, judge
from deltainc.pipeline.state.processes import COMMAND, DRIVER, Process, encode, start_ticks
from deltainc.pipeline.state.store import (
    StatePaths,
    append_run,
    ensure_state_tables,
    read_state,
    remove_lock,
    run_schema,
    state_paths,
)

pytestmark = pytest.mark.spark

LEASE = 120
LEGACY_WATERMARK_SCHEMA = (  # the watermark table of deltainc 0.1, still read
    "job STRING, time_uom STRING, watermark STRING, watermark_unit BIGINT, updated_at TIMESTAMP, run_id STRING"
)


def record(paths: StatePaths, job: str, run_id: str, unit: int | None, last: bool) -> None:
    started = dt.datetime(2025, 3, 1)
    append_run(
        paths,
        RunRecord(
            job, run_id, "run", None, None, "succeeded", None, started, 1.0, watermark_unit=unit, releases_lock=last
        ),
    )


def test_the_run_log_schema_derived_from_the_run_record_is_the_one_existing_run_logs_have() -> None:
    sql = {
        "string": "STRING",
        "int64": "BIGINT",
        "double": "DOUBLE",
        "bool": "BOOLEAN",
        "timestamp[us, tz=UTC]": "TIMESTAMP",
    }
    ddl = ", ".join(f"{field.name} {sql[str(field.type)]}" for field in run_schema())
    assert ddl == (
        "job STRING, run_id STRING, command STRING, window_start STRING, window_end STRING, status STRING, "
        "error STRING, started_at TIMESTAMP, duration_s DOUBLE, "
        "rows_same_time BIGINT, rows_a_late BIGINT, rows_b_late BIGINT, rows_a_timed_out BIGINT, "
        "rows_a_waiting BIGINT, rows_inserted BIGINT, rows_updated BIGINT, rows_deleted BIGINT, "
        "files_read_a BIGINT, bytes_read_a BIGINT, files_read_b BIGINT, bytes_read_b BIGINT, "
        "files_read_target BIGINT, bytes_read_target BIGINT, null_inc_a BIGINT, null_inc_b BIGINT, "
        "target_write STRING, target_version BIGINT, target_files_added BIGINT, target_files_removed BIGINT, "
        "target_rows_copied BIGINT, target_deletion_vectors BIGINT, "
        "time_uom STRING, watermark STRING, watermark_unit BIGINT, releases_lock BOOLEAN, took_over STRING, "
        "job_settings STRING, rows_not_matched BIGINT, rows_b_waiting BIGINT, rows_too_late BIGINT, "
        "rows_provisional BIGINT, null_key_a BIGINT, null_key_b BIGINT, source_reads STRING, "
        "spark_start_s DOUBLE, join_s DOUBLE, write_s DOUBLE, bookkeeping_s DOUBLE, source_latest STRING, "
        "downstream STRING"
    )


def test_a_result_reports_each_window_as_its_run_log_row() -> None:
    started = dt.datetime(2025, 3, 2, 5, 1, 2)
    row = RunRecord("j", "r1", "run", "2025-03-01", "2025-03-02", "succeeded", None, started, 1.5,
                    rows_same_time=3, rows_a_waiting=1, rows_not_matched=7, rows_inserted=4, watermark="2025-03-02",
                    watermark_unit=20149, job_settings='{"join.how": "left"}')  # fmt: skip
    report = WindowReport(Window(20148, 20149), row, "left")
    assert str(report.window) == "2025-03-01..2025-03-02"
    assert report.counts == {"same_time": 3, "a_late": 0, "b_late": 0, "a_timed_out": 0, "a_waiting": 1}
    document = PipelineResult("j", "run", "r1", (report,), "2025-03-02", "processed 1 window(s)").document()
    [window] = document["windows"]
    assert (document["nothing_pending"], window["window"], window["rows_inserted"]) == (
        False,
        "2025-03-01..2025-03-02",
        4,
    )
    assert window["started_at"] == "2025-03-02T05:01:02+00:00" and window["job_settings"] == {"join.how": "left"}
    assert "watermark_unit" not in window and window["watermark"] == "2025-03-02"


def test_the_watermark_never_moves_backwards(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(paths)
    assert read_state(paths, "j").watermark is None
    record(paths, "j", "r1", 20150, True)
    record(paths, "j", "r2", 20140, True)
    record(paths, "j", "r4", None, True)  # a re-run does not move it
    record(paths, "other", "r3", 20200, True)
    assert read_state(paths, "j").watermark == 20150
    assert read_state(paths, "other").watermark == 20200


def test_a_watermark_table_of_an_earlier_version_is_still_read(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(paths)
    spark.sql(f"CREATE TABLE delta.`{paths.legacy_watermarks}` ({LEGACY_WATERMARK_SCHEMA}) USING delta")
    spark.sql(f"INSERT INTO delta.`{paths.legacy_watermarks}` VALUES ('j', 'day', '2025-03-03', 20150, now(), 'r')")
    assert read_state(paths, "j").watermark == 20150
    record(paths, "j", "r1", 20151, True)
    assert read_state(paths, "j").watermark == 20151


def test_the_last_run_log_row_of_a_run_releases_its_lock(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(paths)
    acquire(paths, "j", "first", LEASE)
    record(paths, "j", "first", 20150, False)  # a window, more to come: still held
    with pytest.raises(JobLockedError):
        acquire(paths, "j", "second", LEASE)
    record(paths, "j", "first", 20151, True)
    assert acquire(paths, "j", "second", LEASE).took_over is None  # a finished run is not "taken over"
    holders = [r.run_id for r in spark.read.format("delta").load(paths.locks).where("job = 'j'").collect()]
    assert holders == ["second"]


def test_a_held_lock_refuses_a_second_run_naming_the_holder(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(paths)
    acquire(paths, "j", "first", LEASE)
    with pytest.raises(JobLockedError, match=r"job 'j' is locked by run first \(.*\) since .*last heartbeat \d+ s ago"):
        acquire(paths, "j", "second", LEASE)
    acquire(paths, "k", "second", LEASE)  # another job is not affected


def test_a_run_releases_only_its_own_lock(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(paths)
    acquire(paths, "j", "first", LEASE)
    release_lock(paths.locks, "j", "second")
    with pytest.raises(JobLockedError):
        acquire(paths, "j", "third", LEASE)
    release_lock(paths.locks, "j", "first")
    acquire(paths, "j", "third", LEASE)


def test_a_lock_whose_heartbeat_is_older_than_the_lease_is_taken_over_and_said_so(
    spark: SparkSession, tmp_path: Path
) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(paths)
    spark.sql(
        f"INSERT INTO delta.`{paths.locks}` VALUES ('j', 'dead', current_timestamp() - INTERVAL 10 MINUTES, "
        "'x@another-host:1', current_timestamp() - INTERVAL 3 MINUTES, NULL)"
    )
    acquired = acquire(paths, "j", "alive", LEASE)
    assert acquired.took_over is not None and re.fullmatch(
        r"dead \(x@another-host:1\): no heartbeat for 1\d\d s \(lease 120 s\)", acquired.took_over
    )
    holders = [r.run_id for r in spark.read.format("delta").load(paths.locks).where("job = 'j'").collect()]
    assert holders == ["alive"]


@pytest.mark.processes
def test_a_lock_whose_process_on_this_host_is_gone_is_taken_over_at_once(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(paths)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    owner = f"me@{socket.gethostname()}:{gone.pid}"
    now = "current_timestamp()"
    spark.sql(f"INSERT INTO delta.`{paths.locks}` VALUES ('j', 'killed', {now}, '{owner}', {now}, NULL)")
    acquired = acquire(paths, "j", "next", LEASE)
    assert acquired.took_over == f"killed ({owner}): its process ({owner}) is gone"


@pytest.mark.processes
def test_a_lock_whose_command_is_gone_is_taken_over_only_once_its_spark_driver_is_stopped(
    spark: SparkSession, tmp_path: Path
) -> None:
    # kill -9 of a command leaves its JVM running (it may finish a commit): the lock row names both processes
    paths = state_paths(str(tmp_path))
    ensure_state_tables(paths)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    driver = subprocess.Popen(["sleep", "300"])  # stands for the orphaned driver JVM: a real process that runs on
    host, now = socket.gethostname(), "current_timestamp()"
    processes = encode((Process(COMMAND, host, gone.pid), Process(DRIVER, host, driver.pid, start_ticks(driver.pid))))
    owner = f"me@{host}:{gone.pid}"
    spark.sql(f"INSERT INTO delta.`{paths.locks}` VALUES ('j', 'killed', {now}, '{owner}', {now}, '{processes}')")
    held = read_state(paths, "j").holder
    assert held is not None and judge(held, LEASE).alive  # status shows it running while its driver runs
    acquired = acquire(paths, "j", "next", LEASE)
    assert driver.wait(timeout=10) == -9  # stopped before the lock changed hands
    assert acquired.took_over == (
        f"killed ({owner}): its processes are gone ({owner}: command pid {gone.pid}, spark driver pid {driver.pid}); "
        f"its spark driver pid {driver.pid} was stopped"
    )


def test_a_live_run_renews_its_lease_and_is_never_taken_over(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(paths)
    acquire(paths, "j", "busy", 10)
    first = read_state(paths, "j").holder
    beat = start_heartbeat(paths.locks, "j", "busy", 0.5)
    try:
        time.sleep(2)  # four heartbeats at 0.5 s
        later = read_state(paths, "j").holder
        assert first is not None and later is not None and first.heartbeat_at is not None
        assert later.heartbeat_at is not None and later.heartbeat_at > first.heartbeat_at
        with pytest.raises(JobLockedError):
            acquire(paths, "j", "second", 10)
    finally:
        beat.end()
    assert not beat.lost.is_set()


def test_a_run_whose_lock_was_taken_learns_it_from_its_heartbeat(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(paths)
    acquire(paths, "j", "slow", LEASE)
    assert take_lock(paths.locks, "j", "other", read_state(paths, "j").holder)  # e.g. judged dead
    beat = start_heartbeat(paths.locks, "j", "slow", 0.2)
    assert beat.lost.wait(30)
    beat.end()


def test_jobs_sharing_a_state_folder_take_their_locks_at_the_same_moment(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(paths)
    errors: list[BaseException] = []

    def take(job: str) -> None:
        try:
            acquire(paths, job, f"run-{job}", LEASE)
        except BaseException as exc:  # recorded for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=take, args=(f"job{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    holders = sorted(r.run_id for r in spark.read.format("delta").load(paths.locks).collect())
    assert holders == ["run-job0", "run-job1", "run-job2"]


def test_unlock_removes_a_lock_by_hand_and_checks_the_run_id(spark: SparkSession, tmp_path: Path) -> None:
    paths = state_paths(str(tmp_path))
    ensure_state_tables(paths)
    acquire(paths, "j", "first", LEASE)
    with pytest.raises(ValueError, match="--run-id: job 'j' is locked by run first"):
        remove_lock(paths.locks, "j", "nope")
    assert [r["run_id"] for r in remove_lock(paths.locks, "j")] == ["first"]
    acquire(paths, "j", "second", LEASE)
