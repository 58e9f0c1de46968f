"""`deltainc run` through the command line's real entry point (`deltainc.cli.app.main`, in-process): one line
per window, nothing pending, the phases a run records, a changed setting refused until a rebuild, and `run`
without a job: every job of the job directory, each after the jobs whose targets it reads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_commands import Processed, nothing_written, scans_job
from cli_jobs import D1, D2, Sources, edit, settings_env, write_job
from delta_rows import write_rows
from pyspark.sql import SparkSession

from deltainc.cli.app import main

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("settings_under_tmp")]


# --- one job processed once per module (`processed`, tests/cli/conftest.py) -------------------------------------------


@pytest.mark.windows
def test_run_prints_one_line_per_window_with_join_type_counts_and_changes(processed: Processed) -> None:
    first, second = processed.outputs
    assert re.fullmatch(
        r"2025-03-01  same_time 1  a_late 0  b_late 0  a_timed_out 0  a_waiting 1  too_late 0  \|  "
        r"inserted 2  updated 0  deleted 0  files removed 0  \(\d+\.\d s\)\n"
        r"trx: processed 1 window\(s\); "
        r"watermark 2025-03-01\n",
        first,
    )
    # TrxId 2's B arrives: its waiting row is deleted (the file of 03-01's open rows, removed whole) and its b_late
    # match inserted; TrxId 4 starts waiting
    assert re.fullmatch(
        r"2025-03-02  same_time 1  a_late 0  b_late 1  a_timed_out 0  a_waiting 1  too_late 0  \|  "
        r"inserted 3  updated 0  deleted 1  files removed 1  \(\d+\.\d s\)\n"
        r"trx: processed 1 window\(s\); "
        r"watermark 2025-03-02\n",
        second,
    )


@pytest.mark.windows
def test_run_with_nothing_pending_exits_0_with_one_line(
    processed: Processed, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(processed.root)
    for name, value in settings_env(processed.root).items():
        monkeypatch.setenv(name, value)
    assert main(["run", "trx"]) == 0  # by name, from the job directory
    out, err = capsys.readouterr()
    assert out == "nothing pending for trx: watermark 2025-03-02, latest RecDate in both sources 2025-03-02\n"
    assert err == ""


@pytest.mark.windows
def test_a_run_records_its_phases_and_its_duration_holds_them(
    processed: Processed, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DELTAINC_STATE_DIR", str(processed.root / "state"))
    assert main(["status", str(processed.job), "--json", "--runs", "50"]) == 0
    runs = [r for r in json.loads(capsys.readouterr().out)["runs"] if r["command"] == "run"]
    for run in runs:
        assert run["join_s"] > 0 and run["write_s"] > 0 and run["bookkeeping_s"] >= 0 and run["spark_start_s"] >= 0
        parts = run["spark_start_s"] + run["join_s"] + run["write_s"] + run["bookkeeping_s"]
        assert run["duration_s"] == pytest.approx(parts)
        day = run["window_end"]
        assert json.loads(run["source_latest"]) == {"source_a": D2.isoformat(), "source_b": D2.isoformat()}, day


@pytest.mark.windows
def test_a_changed_setting_makes_validate_and_run_exit_2_naming_it_until_a_rebuild(
    spark: SparkSession, tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str]
) -> None:
    job = write_job(tmp_path, sources)
    assert main(["run", "trx", "--until", "2025-03-01"]) == 0
    edit(job, "max_waiting_time = 2", "max_waiting_time = 1")
    capsys.readouterr()
    for command in ("validate", "run"):
        assert main([command, "trx"]) == 2
        err = capsys.readouterr().err
        assert f"deltainc: error: {command}: job 'trx' changed since its target was built" in err
        assert "  join.max_waiting_time: 2 -> 1\n" in err and "deltainc run trx --rebuild" in err
    assert main(["run", "trx", "--rebuild"]) == 0
    assert re.search(
        r"^2025-03-01\.\.2025-03-02 .*\ntrx: rebuilt the target in 2025-03-01\.\.2025-03-02; "
        r"watermark 2025-03-02$",
        capsys.readouterr().out,
        re.M,
    )
    assert main(["validate", "trx"]) == 0


# --- every job of the job directory ------------------------------------------------------------------------------


@pytest.mark.windows
def test_run_without_a_job_runs_every_job_each_after_the_jobs_whose_targets_it_reads(
    spark: SparkSession, tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str]
) -> None:
    scans = write_rows(tmp_path / "scans", [(100, 1, D1), (101, 3, D2)], "ScanId long, TrxId long, RecDate date")
    scans_job(tmp_path, scans, name="a_scans")  # first by name, yet it reads trx
    write_job(tmp_path, sources)
    assert main(["run", "--until", D1.isoformat()]) == 0
    out, _ = capsys.readouterr()
    summaries = [line.split(":")[0] for line in out.splitlines() if "processed" in line]
    assert summaries == ["trx", "a_scans"]
    assert main(["run", "trx"]) == 0  # trx a day ahead of the job that reads it
    capsys.readouterr()
    assert main(["status", "--json"]) == 0
    jobs = {entry["job"]: entry for entry in json.loads(capsys.readouterr().out)["jobs"]}
    assert (jobs["a_scans"]["watermark"], jobs["trx"]["watermark"]) == (D1.isoformat(), D2.isoformat())
    assert (jobs["a_scans"]["upstream"], jobs["trx"]["upstream"]) == (["trx"], [])
    assert jobs["a_scans"]["upstream_watermarks"] == [{"job": "trx", "watermark": D2.isoformat(), "behind": 1}]
    assert main(["status", "a_scans"]) == 0
    line = rf"^  upstream +trx: watermark {D2}; this job is 1 day\(s\) behind it \(the latest RecDate is at most its"
    assert re.search(line, capsys.readouterr().out, re.M)


@pytest.mark.windows
def test_a_job_whose_upstream_was_rebuilt_under_other_settings_is_refused_naming_the_setting_and_writes_nothing(
    spark: SparkSession, tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str]
) -> None:
    write_job(tmp_path, sources)
    scans_job(tmp_path, write_rows(tmp_path / "scans", [(100, 1, D1)], "ScanId long, TrxId long, RecDate date"))
    assert main(["run"]) == 0
    edit(tmp_path / "jobs" / "trx.toml", "max_waiting_time = 2", "max_waiting_time = 3")
    assert main(["run", "trx", "--rebuild"]) == 0
    versions = sorted((tmp_path / "target_trx_scans" / "_delta_log").glob("*.json"))
    capsys.readouterr()
    assert main(["run", "trx_scans"]) == 2
    assert "source_a.job.join.max_waiting_time: 2 -> 3" in capsys.readouterr().err
    assert sorted((tmp_path / "target_trx_scans" / "_delta_log").glob("*.json")) == versions


def test_run_without_a_job_refuses_jobs_in_a_cycle_before_any_job_runs(
    tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str], no_spark: None
) -> None:
    write_job(tmp_path, sources, name="good")
    scans_job(tmp_path, sources.b, name="x", reads="y")
    scans_job(tmp_path, sources.b, name="y", reads="x")
    assert main(["run"]) == 2
    assert "the jobs read each other in a cycle: x -> y -> x" in capsys.readouterr().err
    assert nothing_written(tmp_path, "good")
