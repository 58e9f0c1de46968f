"""A window that Spark fails (issue 80): the command's one error line names it (a backfill's chunk k of n), says
what is committed and that the same command resumes there; Spark's Java stack stays out of the terminal, in the
window's run-log row. The failure is real: chunk k's source file is not Parquet, and Spark's read of it fails."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from cli_jobs import A_SCHEMA, B_SCHEMA, job_toml, settings_env
from delta_rows import read_rows, write_rows
from pyspark.sql import SparkSession

from deltainc.cli.app import main

pytestmark = pytest.mark.spark

DAYS = [dt.date(2025, 3, 1) + dt.timedelta(days=n) for n in range(3)]
A_ROWS = [(1, 10.0, DAYS[0]), (2, 20.0, DAYS[1]), (3, 30.0, DAYS[2]), (4, 40.0, DAYS[2])]
B_ROWS = [(10, 1, "NL", DAYS[0]), (11, 2, "NL", DAYS[2]), (12, 3, "DE", DAYS[2])]  # TrxId 2's B a day late


def _job(root: Path, name: str, a: str, b: str) -> Path:
    path = root / "jobs" / f"{name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(job_toml(name, a, b, str(root / f"target_{name}"), start=DAYS[0]))
    return path


@pytest.mark.windows
def test_a_window_spark_fails_is_named_with_what_is_committed_and_the_same_command_resumes_there(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, value in settings_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    a = write_rows(tmp_path / "a", A_ROWS, A_SCHEMA, partition_by=["RecDate"])
    b = write_rows(tmp_path / "b", B_ROWS, B_SCHEMA, partition_by=["RecDate"])
    (second_day,) = (tmp_path / "a" / f"RecDate={DAYS[1]}").glob("*.parquet")
    kept = second_day.read_bytes()
    second_day.write_bytes(b"not a parquet file " * 8)  # chunk 2's A rows cannot be read
    job = _job(tmp_path, "trx", a, b)
    argv = ["backfill", str(job), "--start", str(DAYS[0]), "--end", str(DAYS[2]), "--chunk", "day"]

    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert re.search(r"^\[1/3\] 2025-03-01  same_time 1 ", out, re.M)
    assert err.count("\n") == 1 and err.startswith("deltainc: error: "), err  # one line, no Java stack
    assert "\tat " not in err and "Caused by" not in err
    assert (
        "(chunk 2 of 3 (2025-03-02) failed; chunk 1 is committed (the watermark is 2025-03-01); run the same "
        "command again to resume at chunk 2: processed chunks are skipped; --verbose for the full trace"
    ) in err
    assert main(["status", str(job), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["watermark"] == "2025-03-01"
    failed = status["runs"][0]
    assert (failed["window_start"], failed["status"]) == ("2025-03-02", "failed")
    assert "\tat org.apache.spark" in failed["error"]  # the Java stack is kept in the window's run-log row

    second_day.write_bytes(kept)  # the cause removed: the same command goes on at chunk 2
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert re.search(r"^\[1/3\] 2025-03-01  already processed, skipped$", out, re.M)
    assert re.search(r"^\[3/3\] 2025-03-03 ", out, re.M)
    assert err == ""

    one_shot = _job(tmp_path, "one_shot", a, b)
    assert main(["run", str(one_shot)]) == 0
    capsys.readouterr()
    assert read_rows(tmp_path / "target_trx") == read_rows(tmp_path / "target_one_shot")


@pytest.mark.pure
def test_spark_out_of_memory_names_the_setting_to_raise() -> None:
    from deltainc.cli.output import classify

    spark_said = (
        "org.apache.spark.SparkException: Not enough memory to build and broadcast the table to all worker nodes. "
        "As a workaround, you can either disable broadcast by setting spark.sql.autoBroadcastJoinThreshold to -1"
    )
    code, message = classify(RuntimeError(spark_said))
    assert code == 1
    assert message.startswith("RuntimeError: org.apache.spark.SparkException: Not enough memory to build")
    assert (
        """raise spark.driver.memory (a local session; spark.executor.memory on a cluster) under [spark.conf]"""
        in message
    )
    assert """DELTAINC_SPARK__CONF='{"spark.driver.memory": "8g"}'""" in message
    assert "spark.driver.memory" not in classify(RuntimeError("org.apache.spark.SparkException: Task failed"))[1]
