"""`deltainc rerun` (and `unlock`, which frees the lock a rerun is refused on) through
`deltainc.cli.app.main`: a rerun of processed days changes nothing, past the watermark it names the argument,
and a rerun names the jobs that read its target and, with --downstream, reruns them too."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_commands import Processed, scans_job
from cli_jobs import A_ROWS, A_SCHEMA, B_SCHEMA, D1, D2, Sources, write_job
from delta_rows import read_rows, write_rows
from pyspark.sql import SparkSession

from deltainc.cli.app import main
from deltainc.pipeline.state.lock import acquire
from deltainc.pipeline.state.store import ensure_state_tables, state_paths

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("settings_under_tmp")]


# --- one job processed once per module (`processed`, tests/cli/conftest.py) -------------------------------------------


@pytest.mark.windows
def test_rerun_of_processed_days_changes_no_row_and_keeps_the_watermark(
    processed: Processed, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DELTAINC_STATE_DIR", str(processed.root / "state"))
    assert main(["rerun", str(processed.job), "--start", "2025-03-01", "--end", "2025-03-02", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["watermark"] == "2025-03-02"
    [window] = result["windows"]
    assert (window["window"], window["rows_inserted"], window["rows_updated"], window["rows_deleted"]) == (
        "2025-03-01..2025-03-02",
        0,
        0,
        0,
    )


@pytest.mark.windows
def test_a_locked_job_exits_3_and_unlock_removes_the_dead_runs_lock(
    spark: SparkSession, processed: Processed, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DELTAINC_STATE_DIR", str(processed.root / "state"))
    paths = state_paths(str(processed.root / "state"))
    ensure_state_tables(paths)
    acquire(paths, "trx", "dead-run", 360)
    job = str(processed.job)

    assert main(["rerun", job, "--start", "2025-03-02"]) == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert re.fullmatch(
        r"deltainc: error: job 'trx' is locked by run dead-run \(.*\) since .*last heartbeat .*"
        r"`deltainc unlock` is only needed if the lock must go sooner\n",
        err,
    )

    assert main(["unlock", job, "--run-id", "other-run"]) == 2
    assert re.search(
        r"--run-id: job 'trx' is locked by run dead-run .*, not by run 'other-run'", capsys.readouterr().err
    )

    assert main(["unlock", job, "--run-id", "dead-run"]) == 0
    assert re.fullmatch(
        r"trx: removed the lock of run dead-run \(.*\), taken at .*, \d+ minute\(s\) ago\n"
        r"  \(rarely needed: .*\)\n",
        capsys.readouterr().out,
    )
    assert main(["unlock", job]) == 0
    assert capsys.readouterr().out == "trx: no lock held, nothing to remove\n"


@pytest.mark.windows
def test_rerun_past_the_watermark_names_the_argument_given(
    processed: Processed, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DELTAINC_STATE_DIR", str(processed.root / "state"))
    assert main(["rerun", str(processed.job), "--start", "2025-03-05"]) == 2
    assert "rerun: --start 2025-03-05 is after the watermark 2025-03-02" in capsys.readouterr().err
    assert main(["rerun", str(processed.job), "--start", "2025-03-01", "--end", "2025-03-04"]) == 2
    assert "rerun: --end 2025-03-04 is after the watermark 2025-03-02" in capsys.readouterr().err


# --- every job of the job directory ------------------------------------------------------------------------------


@pytest.mark.windows
def test_a_rerun_of_a_job_file_outside_an_empty_job_directory_looks_for_no_jobs_below_it(
    spark: SparkSession, tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str]
) -> None:
    job = write_job(tmp_path / "elsewhere", sources)
    (tmp_path / "jobs").mkdir()  # the settings' job_dir, without job files
    assert main(["run", str(job), "--until", D1.isoformat()]) == 0
    assert main(["rerun", str(job), "--start", D1.isoformat()]) == 0
    out = capsys.readouterr().out
    assert "trx: re-ran 2025-03-01" in out and "downstream" not in out


@pytest.mark.windows
def test_a_rerun_names_the_jobs_that_read_its_target_and_with_downstream_leaves_them_equal_to_a_reload(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write_rows(tmp_path / "a", A_ROWS, A_SCHEMA)
    wrong = [(10, 1, "NL", D1), (11, 2, "NL", D2), (12, 4, "DE", D2)]  # SepaId 12 is TrxId 3's, not 4's
    b = write_rows(tmp_path / "b", wrong, B_SCHEMA)
    scans = write_rows(
        tmp_path / "scans", [(100, 1, D1), (101, 3, D2), (102, 4, D2)], "ScanId long, TrxId long, RecDate date"
    )
    write_job(tmp_path, Sources(a, b, "", "", ""))
    scans_job(tmp_path, scans)
    assert main(["run"]) == 0
    final = "IsFinal"
    assert {r[0] for r in read_rows(tmp_path / "target_trx_scans", ["TrxId", final]) if r[1]} == {1, 4}
    write_rows(b, [*wrong[:2], (12, 3, "DE", D2)], B_SCHEMA, mode="overwrite")  # the corrected B row
    capsys.readouterr()
    assert main(["rerun", "trx", "--start", D2.isoformat()]) == 0
    told = f"downstream: trx_scans read trx's rows from {D2} on: re-run it with `deltainc rerun trx_scans --start {D2} "
    assert told in capsys.readouterr().out
    below = [{"job": "trx_scans", "start": D2.isoformat(), "end": D2.isoformat()}]
    assert main(["status", "trx", "--json", "--runs", "1"]) == 0
    (rerun,) = json.loads(capsys.readouterr().out)["runs"]
    assert (rerun["command"], json.loads(rerun["downstream"])) == ("rerun", below)  # the run log keeps it too
    assert main(["rerun", "trx", "--start", D2.isoformat(), "--downstream", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["downstream"] == below
    assert [run["job"] for run in document["downstream_reruns"]] == ["trx_scans"]
    for name in ("trx", "trx_scans"):  # a reload of the corrected sources, as a new pair of jobs
        (tmp_path / "jobs" / f"{name}.toml").rename(tmp_path / f"{name}.toml.done")
    write_job(tmp_path, Sources(a, b, "", "", ""), name="fresh")
    scans_job(tmp_path, scans, name="fresh_scans", reads="fresh")
    assert main(["run"]) == 0
    for name, fresh in (("trx", "fresh"), ("trx_scans", "fresh_scans")):
        assert read_rows(tmp_path / f"target_{name}") == read_rows(tmp_path / f"target_{fresh}"), name
    assert {r[0] for r in read_rows(tmp_path / "target_trx_scans", ["TrxId", final]) if r[1]} == {
        1,
        3,
    }  # 2 waits for its scan
