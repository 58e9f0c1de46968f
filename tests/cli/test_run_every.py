"""`deltainc run JOB --every INTERVAL`, the warm path of a sub-day schedule (docs/production/scheduling.md): one
process that looks at the sources' logs and processes each new hour as it lands, in one Spark session; killed
between two looks and started again, it recovers, and its target equals a reload's.

The loop is a process of its own, as a supervisor starts it; the sources are Delta tables written with delta-rs
(no JVM), one append per source and hour. The targets are read with the suite's local session.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from deltalake import DeltaTable
from expected import same_rows
from hour_sources import at, env, job_file, land
from pyspark.sql import SparkSession

from deltainc.cli.app import main
from deltainc.pipeline.controller.commands import run

pytestmark = pytest.mark.processes


def loop(root: Path, job: Path) -> subprocess.Popen[str]:
    """`deltainc run JOB --every 0.5`, as a supervisor starts it."""
    command = [sys.executable, "-m", "deltainc", "run", str(job), "--every", "0.5"]
    pipe = subprocess.PIPE
    return subprocess.Popen(
        command, cwd=root, env=env(root), stdout=pipe, stderr=pipe, text=True, start_new_session=True
    )


def runs(root: Path) -> list[dict[str, object]]:
    """The job's run-log rows, read with delta-rs, oldest first."""
    rows = DeltaTable(str(root / "state" / "runs")).to_pyarrow_table().to_pylist()
    return sorted(rows, key=lambda row: str(row["started_at"]))


def wait_for_watermark(root: Path, hour: int, process: subprocess.Popen[str], within_s: float = 240) -> None:
    """Until the run log shows the watermark at `hour`; fails naming the loop's output if it died or took longer."""
    wanted = at(hour, 0).replace(tzinfo=None).isoformat()
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        state = root / "state" / "runs"
        if state.exists() and any(row["watermark"] == wanted for row in runs(root)):
            return
        if process.poll() is not None:
            pytest.fail(f"the loop ended with {process.returncode}: {process.communicate()[1][-3000:]}")
        time.sleep(0.25)
    process.kill()
    pytest.fail(f"no watermark {wanted} within {within_s} s: {process.communicate()[1][-3000:]}")


def test_a_loop_processes_each_hour_as_it_lands_in_one_spark_session_survives_a_kill_and_gives_a_reloads_target(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hourly = job_file(tmp_path, "hourly", max_window=1)
    land(tmp_path, 0)  # the sources exist before the loop starts: a source that does not is the job's error
    first = loop(tmp_path, hourly)
    wait_for_watermark(tmp_path, 0, first)
    land(tmp_path, 1)
    wait_for_watermark(tmp_path, 1, first)
    os.killpg(first.pid, signal.SIGKILL)  # between two looks, with its JVM: the machine rebooted
    first.wait(timeout=60)

    land(tmp_path, 2)
    second = loop(tmp_path, hourly)
    wait_for_watermark(tmp_path, 2, second)
    land(tmp_path, 3)
    wait_for_watermark(tmp_path, 3, second)
    second.send_signal(signal.SIGTERM)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err[-3000:]
    assert out.splitlines()[-1] == "stopped (SIGTERM) between two looks: every window so far is committed", out
    assert sum(" inserted " in line for line in out.splitlines()) == 2, out  # hours 2 and 3, each as it came

    logged = [row for row in runs(tmp_path) if row["job"] == "hourly"]
    assert [row["status"] for row in logged] == ["succeeded"] * 4
    assert [bool(row["spark_start_s"]) for row in logged] == [True, False, True, False]  # one Spark per process

    for variable in ("DELTAINC_SETTINGS_FILE", "DELTAINC_WAREHOUSE_DIR", "DELTAINC_STATE_DIR"):
        monkeypatch.setenv(variable, env(tmp_path)[variable])
    reload = run(job_file(tmp_path, "reload", max_window=24), spark=spark)  # the four hours in one window
    assert len(reload.windows) == 1
    hourly_rows = spark.read.format("delta").load(str(tmp_path / "hourly_target"))
    same_rows(hourly_rows, spark.read.format("delta").load(str(tmp_path / "reload_target")))
    assert hourly_rows.where("ScanId IS NULL").count() > 0  # the rows of outcomes other than a match are there too


@pytest.mark.parametrize("given", [["--json"], ["--until", "2025-03-01"], ["--rebuild"]])
def test_a_loop_takes_no_json_until_or_rebuild_naming_the_option(
    tmp_path: Path, given: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    job = job_file(tmp_path, "hourly", max_window=1)
    assert main(["run", str(job), "--every", "1m", *given]) == 2
    out, err = capsys.readouterr()
    assert out == "" and f"run --every keeps running until it is stopped: it takes no {given[0]}" in err


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90.0), ("2.5", 2.5), ("90s", 90.0), ("5m", 300.0), ("1h", 3600.0)]
)
def test_an_interval_is_seconds_or_a_number_of_seconds_minutes_or_hours(text: str, seconds: float) -> None:
    from deltainc.cli.parser import build_parser

    assert build_parser().parse_args(["run", "job", "--every", text]).every == seconds


@pytest.mark.parametrize("text", ["0", "-5", "5d", "soon", ""])
def test_an_interval_that_is_not_a_positive_duration_is_refused_naming_the_forms(
    text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "job", "--every", text]) == 2
    assert "argument --every: expected seconds like 60, 90s, 5m or 1h" in capsys.readouterr().err
