"""`deltainc status` (and `report`, which holds what status shows) through `deltainc.cli.app.main`: the
watermark, pending range and runs of one processed job, every job of the job directory, missing sources, and
the answer read from the Delta logs without starting Spark."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path

import pytest
from cli_commands import Processed, nothing_written
from cli_jobs import Sources, edit, write_job
from pyspark.sql import SparkSession

from deltainc.cli.app import main

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("settings_under_tmp")]

REPO = Path(__file__).resolve().parents[2]


# --- one job processed once per module (`processed`, tests/cli/conftest.py) -------------------------------------------


@pytest.mark.windows
def test_status_json_shows_watermark_latest_pending_and_last_runs(
    processed: Processed, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DELTAINC_STATE_DIR", str(processed.root / "state"))
    assert main(["status", str(processed.job), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["job"], status["watermark"], status["latest_available"], status["pending"]) == (
        "trx",
        "2025-03-02",
        "2025-03-02",
        None,
    )
    runs = [(r["command"], r["window_start"], r["status"]) for r in status["runs"] if r["command"] == "run"]
    assert runs[:2] == [("run", "2025-03-02", "succeeded"), ("run", "2025-03-01", "succeeded")]


@pytest.mark.windows
def test_status_prints_watermark_pending_and_a_table_of_runs(
    processed: Processed, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DELTAINC_STATE_DIR", str(processed.root / "state"))
    assert main(["status", str(processed.job), "--runs", "2"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  watermark +2025-03-02$", out, re.M)
    assert re.search(r"^  pending +nothing pending$", out, re.M)
    assert re.search(r"run +2025-03-02 +succeeded +3 +3 / 0 / 1", out)


@pytest.mark.processes
def test_report_holds_what_status_json_shows_and_renders_offline_in_a_browser(
    processed: Processed, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page of a real job opened from its file in Debian's headless chromium (`make chromium`) through
    Playwright, the network off: charts drawn, no console error, no request but the page's own file, and a figure
    on the page equal to the run log's. The screenshot is kept under build/report-test/."""
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DELTAINC_STATE_DIR", str(processed.root / "state"))
    assert main(["status", str(processed.job), "--json", "--runs", "50"]) == 0
    status = json.loads(capsys.readouterr().out)
    page_file = processed.root / "trx-report.html"
    assert main(["report", str(processed.job), "--out", str(page_file)]) == 0
    capsys.readouterr()
    found = re.search(r'<script type="application/json" id="deltainc-report">(.*?)</script>', page_file.read_text())
    assert found is not None
    data = json.loads(found.group(1).replace("<\\/", "</"))
    assert [(r["run_id"], r["window"], r["status"], r["duration_s"]) for r in data["runs"]] == [
        (
            r["run_id"],
            f"{r['window_start']}..{r['window_end']}".removesuffix(f"..{r['window_start']}"),
            r["status"],
            r["duration_s"],
        )
        for r in status["runs"]
    ]
    forward = [r for r in reversed(status["runs"]) if r["command"] == "run"]
    assert data["charts"]["outcomes"]["series"]["b_late"] == [r["rows_b_late"] for r in forward]
    newest = status["runs"][0]
    requests: list[str] = []
    problems: list[str] = []
    screenshot = REPO / "build" / "report-test" / "report.png"
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium")
        try:
            page = browser.new_context(offline=True).new_page()
            page.on("request", lambda request: requests.append(request.url))
            page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.goto(page_file.as_uri())
            charts = page.locator("svg.chart").count()
            bars = page.locator("svg.chart[data-chart=outcomes] rect.bar").count()
            shown = page.locator(f'table.runs tr[data-run-id="{newest["run_id"]}"] td').nth(5).inner_text()
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    assert problems == []
    assert requests == [page_file.as_uri()]
    assert charts >= 6 and bars >= len(forward)
    assert shown == f"{newest['duration_s']:,.2f}"
    assert screenshot.stat().st_size > 10_000


# --- every job of the job directory ------------------------------------------------------------------------------


def test_status_and_validate_without_job_cover_every_job_and_name_the_bad_ones(
    spark: SparkSession, tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str]
) -> None:
    write_job(tmp_path, sources, name="good")
    write_job(tmp_path, sources, name="nodata", a=str(tmp_path / "not_loaded_yet"))
    edit(write_job(tmp_path, sources, name="bad"), "max_waiting_time = 2", "max_wait = 2")

    assert main(["status", "--json"]) == 2  # a job file that cannot be read at all
    out, err = capsys.readouterr()
    jobs = {entry["job"]: entry for entry in json.loads(out)["jobs"]}
    assert jobs["good"]["pending"]["start"] == "2025-03-01" and jobs["good"]["problem"] is None
    assert jobs["nodata"]["problem"] == f"source_a: no Delta table at path {tmp_path / 'not_loaded_yet'}"
    assert jobs["bad"]["exit_code"] == 2 and "join.max_wait: unknown key" in jobs["bad"]["error"]
    assert re.fullmatch(r"deltainc: error: job bad \(.*jobs/bad\.toml\): .*join\.max_wait: unknown key\n", err)

    assert main(["validate"]) == 2
    out, err = capsys.readouterr()
    assert re.search(r"^good: valid", out, re.M) and "bad" not in out and "nodata" not in out
    assert "deltainc: error: job bad (" in err
    assert f"deltainc: error: job nodata ({tmp_path / 'jobs' / 'nodata.toml'}): source_a: no Delta table" in err
    assert nothing_written(tmp_path, "good")


def test_status_of_a_job_whose_sources_are_missing_shows_the_problem_and_exits_0(
    tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str]
) -> None:
    write_job(tmp_path, sources, name="nodata", b=str(tmp_path / "not_loaded_yet"))
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert re.search(rf"^  problem +source_b: no Delta table at path {re.escape(str(tmp_path))}", out, re.M)


def test_status_and_validate_show_the_whole_pending_range_and_how_many_windows_it_takes(
    spark: SparkSession, tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(write_job(tmp_path, sources), "start_date = 2025-03-01", "start_date = 2025-03-01\nmax_window = 1")
    assert main(["status", "trx"]) == 0
    status_out = capsys.readouterr().out
    assert main(["validate", "trx"]) == 0
    validate_out = capsys.readouterr().out
    for out in (status_out, validate_out):
        line = "2025-03-01..2025-03-02 (2 days, 2 windows of max_window 1; next 2025-03-01)"
        assert re.search(rf"^  pending +{re.escape(line)}$", out, re.M), out


@pytest.mark.windows
def test_status_answers_from_the_delta_logs_without_starting_spark(
    processed: Processed, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, no_spark: None
) -> None:
    monkeypatch.setenv("DELTAINC_STATE_DIR", str(processed.root / "state"))
    assert main(["status", str(processed.job), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["read_with"], status["watermark"], status["latest_available"]) == (
        "delta_log",
        "2025-03-02",
        "2025-03-02",
    )
    assert dt.datetime.fromisoformat(status["runs"][0]["started_at"]).utcoffset() == dt.timedelta(0)
