"""A job whose sources, target and state are all in S3, against a real S3-compatible server (MinIO, built from its
Go module: tests/support/s3_server.py). Spark reaches it through S3A, delta-rs (the state, the lock, status) through its
own S3 client, both configured from the same AWS_* variables (deltainc.storage).
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from cli_jobs import job_toml
from processes import KILLER, commits_of, lock_taken_at, python
from pyspark.sql import SparkSession
from s3_server import BUCKET, SECRET_KEY, S3Server

from deltainc.cli.app import main
from deltainc.demo.sample_data import SampleSpec, write_sources
from deltainc.pipeline import verify
from deltainc.pipeline.controller.commands import rerun, run
from deltainc.pipeline.controller.prepared_job import job_session
from deltainc.pipeline.inspect.status_from_logs import status_from_log
from deltainc.pipeline.inspect.validate import validate_job
from deltainc.pipeline.job.job_config import JobConfig, load_job
from deltainc.pipeline.state.model import state_paths
from deltainc.pipeline.state.store import read_runs, read_state
from deltainc.settings import Settings, load_settings

pytestmark = pytest.mark.service

START = dt.date(2025, 5, 1)
DAYS = 4
LAST = START + dt.timedelta(days=DAYS - 1)


@pytest.fixture(scope="module")
def bucket(spark: SparkSession, server: S3Server) -> str:
    """A folder of the test bucket holding the two sources, written by Spark through S3A."""
    root = f"s3a://{BUCKET}/{uuid.uuid4().hex[:8]}"
    job_session(spark, load_settings(), s3=True)  # this session's S3A settings, from the AWS_* variables
    spec = SampleSpec(start=START, days=DAYS, rows_per_day=5, seed=7, p_no_b=0.2, p_orphan_b=0.1, p_two_b=0.1)
    write_sources(spark, spec, f"{root}/a", f"{root}/b")
    return root


def job_file(folder: Path, root: str, name: str, max_window: int) -> Path:
    path = folder / f"{name}.toml"
    places = {"target": f"{root}/{name}/target", "state": f"{root}/{name}/state"}
    path.write_text(job_toml(name, f"{root}/a", f"{root}/b", start=START, max_window=max_window, **places))
    return path


def target_rows(spark: SparkSession, job: JobConfig) -> Counter[tuple[Any, ...]]:
    assert job.target.path is not None
    return Counter(tuple(row) for row in spark.read.format("delta").load(job.target.path).collect())


@pytest.fixture(scope="module")
def daily(spark: SparkSession, bucket: str, tmp_path_factory: pytest.TempPathFactory) -> JobConfig:
    job = load_job(job_file(tmp_path_factory.mktemp("daily"), bucket, "daily", max_window=1))
    run(job, spark=spark, settings=Settings())
    return job


def test_daily_runs_on_s3_equal_a_reload_in_one_run_and_a_rerun_changes_nothing(
    spark: SparkSession, bucket: str, daily: JobConfig, tmp_path: Path
) -> None:
    once = load_job(job_file(tmp_path, bucket, "once", max_window=0))
    run(once, spark=spark, settings=Settings())
    rows = target_rows(spark, daily)
    assert rows and rows == target_rows(spark, once)
    assert daily.state.path is not None and daily.state.path.startswith("s3a://")
    report = rerun(daily, START + dt.timedelta(days=1), spark=spark, settings=Settings()).windows[0]
    assert report.record.target_version is None and target_rows(spark, daily) == rows
    checked = verify(daily, spark=spark, settings=Settings())
    assert checked.only_in_target == {} and checked.only_in_recompute == {}
    (warning,) = validate_job(daily, spark=spark, settings=Settings()).warnings  # what makes the commits safe
    assert "S3SingleDriverLogStore" in warning


def test_status_reads_a_job_on_s3_from_its_delta_logs_without_spark(daily: JobConfig) -> None:
    status = status_from_log(daily, Settings(), runs=3)
    assert status.read_with == "delta_log" and status.problem is None
    assert status.watermark == status.latest_available == LAST.isoformat() and status.lock is None
    assert {r["status"] for r in status.runs} == {"succeeded"}
    assert LAST.isoformat() in [r["window_start"] for r in status.runs if r["command"] == "run"]


def test_check_judges_a_job_on_s3_from_its_delta_logs_and_exits_by_the_worst_level(
    daily: JobConfig, bucket: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = job_file(tmp_path, bucket, "daily", max_window=1)  # the fixture's job, with thresholds
    checks = "[checks]\nlag = { error = 0 }\ntimed_out_share = { error = 1 }\nduration_s = { warn = 0.001 }\n"
    path.write_text(path.read_text() + checks)
    assert main(["check", str(path), "--json"]) == 0  # a warning only
    levels = {c["name"]: c["level"] for c in json.loads(capsys.readouterr().out)["checks"]}
    assert levels == {"last_run": "pass", "lag": "pass", "timed_out_share": "pass", "duration_s": "warn"}
    assert main(["check", str(path), "--fail-on-warn"]) == 5
    path.write_text(path.read_text() + "freshness_hours = { error = 0.00001 }\n")  # ended more than 36 ms ago
    assert main(["check", str(path)]) == 4


def test_a_run_on_s3_killed_during_its_target_commit_is_recovered_by_the_next_run(
    spark: SparkSession, bucket: str, daily: JobConfig, tmp_path: Path
) -> None:
    path = job_file(tmp_path, bucket, "killed", max_window=2)
    job = load_job(path)
    run(job, until=START + dt.timedelta(days=1), spark=spark, settings=Settings())  # the first window, committed
    killed = python(tmp_path, "-c", KILLER, str(path), "writing", "during")  # killed in the next one
    assert killed.returncode == -9, killed.stderr[-3000:]
    assert job.state.path is not None and job.target.path is not None
    held = read_state(state_paths(job.state.path), "killed").holder
    assert held is not None and not held.finished  # the killed run's lock, in S3, naming its command and JVM
    assert [p.role for p in held.processes] == ["command", "spark driver"], held.processes
    run(job, spark=spark, settings=Settings())  # at once: its JVM, maybe still committing, is stopped first
    assert target_rows(spark, job) == target_rows(spark, daily)
    assert not any(p.alive() for p in held.processes)
    taken = lock_taken_at(f"{job.state.path}/locks", "killed")
    late = [(v, t) for v, t in commits_of(job.target.path, held.run_id) if t >= taken]
    assert late == [], (late, taken)  # no commit of the killed run after the next run took the lock
    logged = read_runs(state_paths(job.state.path), "killed", 5)
    assert logged[0]["status"] == "succeeded" and "gone" in str(logged[0]["took_over"])
    unlocked = python(tmp_path, "-m", "deltainc", "unlock", str(path))  # the finished run's lock row, by hand
    assert unlocked.returncode == 0, unlocked.stderr[-2000:]
    shown = killed.stdout + killed.stderr + unlocked.stdout + unlocked.stderr + str(logged)
    assert SECRET_KEY not in shown  # no credential printed, logged or in the run log


def downstream_file(folder: Path, name: str, reads: str, b: str, target: Path) -> Path:
    """A job beside `reads`'s file whose source A is that job's target (on S3) and source B the table `b`; its
    target and state on local disk."""
    path = folder / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\nstart_date = {START}\n[source_a]\njob = "{reads}"\n[source_b]\npath = "{b}"\n'
        '[join]\nhow = "left"\njoin_cols = ["TrxId"]\nlook_back_time = 1\nmax_waiting_time = 1\n'
        'alias_a = "A2"\nalias_b = "B2"\n'
        f'[target]\npath = "{target}"\nkeys = ["TrxId", "SepaId"]\nb_keys = ["SepaId"]\n'
        f'[state]\npath = "{target.parent / "state"}"\n'
    )
    return path


def test_a_chain_from_s3_to_local_disk_run_day_by_day_equals_it_reloaded(
    spark: SparkSession, bucket: str, tmp_path: Path
) -> None:
    targets = {}
    for schedule, max_window in (("daily", 1), ("once", 0)):
        folder = tmp_path / schedule
        folder.mkdir()
        up = load_job(job_file(folder, bucket, f"up_{schedule}", max_window))
        down = load_job(downstream_file(folder, f"down_{schedule}", up.name, f"{bucket}/b", tmp_path / schedule / "t"))
        assert up.target.path is not None and up.target.path.startswith("s3a://")
        for job in (up, down):  # the daily pair a window a day, the other one window each
            run(job, spark=spark, settings=Settings())
        targets[schedule] = target_rows(spark, down)
    assert targets["daily"] and targets["daily"] == targets["once"]
