"""The `deltainc` command line through its real entry point, on tiny Delta tables under tmp_path.

Every command runs in-process through `deltainc.cli.app.main` (the session `spark` fixture is reused by getOrCreate);
`python -m deltainc` runs as a subprocess twice, to prove the installed entry point and the quiet Spark start.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib.metadata
import importlib.util
import io
import json
import logging
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_jobs import A_ROWS, A_SCHEMA, B_ROWS, B_SCHEMA, D1, D2, Sources, edit, settings_env, write_job
from delta_rows import read_rows, write_rows
from pyspark.sql import SparkSession

import deltainc
from deltainc.cli import app as cli
from deltainc.cli import context, spark_start
from deltainc.cli.app import main
from deltainc.pipeline.job.job_config import load_job
from deltainc.pipeline.state.lock import acquire
from deltainc.pipeline.state.store import ensure_state_tables, state_paths
from deltainc.settings import load_settings

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sources(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Sources:
    """The module's source tables, written with delta-rs (no JVM); `spark` starts the worker's session, which the
    commands run in-process then use."""
    root = tmp_path_factory.mktemp("sources")

    def write(name: str, rows: list[tuple[Any, ...]], schema: str) -> str:
        return write_rows(root / name, rows, schema)

    return Sources(
        a=write("a", A_ROWS, A_SCHEMA),
        b=write("b", B_ROWS, B_SCHEMA),
        b_string_key=write("b_str", [(10, "1", "NL", D1)], "SepaId long, TrxId string, Country string, RecDate date"),
        b_without_key=write("b_nokey", [(10, "NL", D1)], "SepaId long, Country string, RecDate date"),
        a_duplicates=write("a_dup", [(1, 10.0, D1), (1, 10.0, D1)], A_SCHEMA),
    )


@pytest.fixture(autouse=True)
def settings_under_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name, value in settings_env(tmp_path).items():
        monkeypatch.setenv(name, value)


def nothing_written(root: Path, name: str = "trx") -> bool:
    return not (root / f"target_{name}").exists() and not (root / "state").exists()


@pytest.fixture()
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if the command starts Spark."""

    def refuse(*_args: object) -> None:
        raise AssertionError("the command started Spark")

    monkeypatch.setattr(spark_start, "start_spark", refuse)


@pytest.fixture()
def trx_job(tmp_path: Path, sources: Sources) -> Path:
    """jobs/trx.toml under tmp_path over the module's sources: the first step of tests that start from that job."""
    return write_job(tmp_path, sources)


# --- the real entry point ---------------------------------------------------------------------------------------


def deltainc_process(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m deltainc *args` in a process of its own, in `root`, with the settings of `root` only."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("DELTAINC_")}, **settings_env(root)}
    return subprocess.run([sys.executable, "-m", "deltainc", *args], capture_output=True, text=True, env=env, cwd=root,
                          timeout=600, check=False)  # fmt: skip


@pytest.mark.processes
def test_python_m_deltainc_help_lists_every_command(tmp_path: Path) -> None:
    done = deltainc_process(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    for command in ("run", "rerun", "backfill", "status", "validate", "unlock", "profile", "demo"):
        assert re.search(rf"^\s+{command}\s", done.stdout, re.M), command
    assert done.stderr == ""


def test_version_prints_the_packages_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"deltainc {deltainc.__version__}\n"
    assert deltainc.__version__ == importlib.metadata.version("deltainc")  # one place: the package's metadata too


@pytest.mark.processes
def test_validate_as_a_process_shows_pending_window_and_read_bounds_with_no_spark_noise(
    tmp_path: Path, sources: Sources
) -> None:
    write_job(tmp_path, sources)
    done = deltainc_process(tmp_path, "validate", "trx")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no log4j WARN, no Ivy banner
    assert done.stdout.startswith("trx: valid")
    assert re.search(r"^  pending +2025-03-01\.\.2025-03-02 \(2 days, one window\)$", done.stdout, re.M)
    # A in [s - mw, e], B in [s - lb - mw, e] with lb = 1, mw = 2
    assert "source_a RecDate 2025-02-27..2025-03-02, source_b RecDate 2025-02-26..2025-03-02" in done.stdout
    assert nothing_written(tmp_path)


@pytest.mark.processes
def test_a_command_that_succeeds_prints_no_py4j_traceback_as_its_jvm_ends_even_when_spark_stops_slower_than_its_grace(
    tmp_path: Path, sources: Sources
) -> None:
    write_job(tmp_path, sources)
    done = deltainc_process(tmp_path, "run", "trx")
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    # `python -m deltainc`, its JVM's stop given 10 ms (a loaded machine): the stop is cut short under a Py4J call
    slow = (
        "import runpy, sys, deltainc.spark_driver as driver; driver.STOP_GRACE_SECONDS = 0.01; "
        "sys.argv = ['deltainc', 'explain', 'trx', 'TrxId=2']; runpy.run_module('deltainc', run_name='__main__')"
    )
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("DELTAINC_")}, **settings_env(tmp_path)}
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", slow], capture_output=True, text=True, env=env, cwd=tmp_path,
                              timeout=600, check=False)  # fmt: skip
        assert done.returncode == 0 and "TrxId 2" in done.stdout, done.stderr
        assert "Traceback" not in done.stderr and "Py4J" not in done.stderr and done.stderr == "", done.stderr


# --- run, status, rerun, unlock on one processed job ------------------------------------------------------------


@dataclass(frozen=True)
class Processed:
    root: Path
    job: Path
    outputs: tuple[str, ...]


@pytest.fixture(scope="module")
def processed(spark: SparkSession, sources: Sources, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Processed]:
    """A job run twice through the CLI: `run --until 2025-03-01`, then `run` (2025-03-02)."""
    root = tmp_path_factory.mktemp("processed")
    job = write_job(root, sources)
    outputs = []
    with pytest.MonkeyPatch.context() as patch:
        for name, value in settings_env(root).items():
            patch.setenv(name, value)
        for argv in (["run", str(job), "--until", "2025-03-01"], ["run", str(job)]):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                assert main(argv) == 0
            outputs.append(out.getvalue())
    yield Processed(root, job, tuple(outputs))


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


# --- backfill -------------------------------------------------------------------------------------------------------


@pytest.mark.windows
def test_backfill_reports_each_chunk_and_resumes_after_a_failure(
    spark: SparkSession, trx_job: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from deltainc.pipeline.target import forward_write as pipeline

    real_write, calls = pipeline.replace_slices, []

    def write_failing_once_on_the_second_chunk(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)  # the first chunk creates the target (no replace): the second chunk's write is the first
        if len(calls) == 1:
            raise RuntimeError("disk full\nmore detail")
        return real_write(*args, **kwargs)

    monkeypatch.setattr(pipeline, "replace_slices", write_failing_once_on_the_second_chunk)
    argv = ["backfill", "trx", "--start", "2025-03-01", "--end", "2025-03-02", "--chunk", "day"]

    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert re.search(r"^\[1/2\] 2025-03-01  same_time 1 .* inserted 2 ", out, re.M)
    assert err == (
        "deltainc: error: RuntimeError: disk full (chunk 2 of 2 (2025-03-02) failed; chunk 1 is committed (the "
        "watermark is 2025-03-01); run the same command again to resume at chunk 2: processed chunks are skipped; "
        "--verbose for the full trace)\n"
    )

    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert re.search(r"^\[1/2\] 2025-03-01  already processed, skipped$", out, re.M)
    assert re.search(
        r"^\[2/2\] 2025-03-02  same_time 1  a_late 0  b_late 1 .* inserted 3  updated 0  deleted 1 ", out, re.M
    )
    assert out.rstrip().endswith("trx: backfilled 1 of 2 chunk(s); watermark 2025-03-02")
    assert err == ""


# --- exit codes 1 and 2 --------------------------------------------------------------------------------------------


def test_an_unexpected_failure_exits_1_with_one_line_and_the_trace_only_with_verbose(
    spark: SparkSession, trx_job: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from deltainc.pipeline.from_delta_logs import status as status_module

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(status_module, "status_from_log", broken)
    assert main(["status", "trx"]) == 1
    assert capsys.readouterr().err == "deltainc: error: RuntimeError: boom (--verbose for the full trace)\n"
    assert main(["status", "trx", "--verbose"]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last):" in err
    assert err.endswith("deltainc: error: RuntimeError: boom\n")


def test_py4j_tracebacks_of_a_lost_jvm_connection_are_shown_only_with_verbose(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    # Py4J logs on the root logger from its own module when a SIGTERM stops the JVM under a call; the command's
    # own line says what happened. Other libraries' root records and the package's warnings still show, once.
    import py4j.java_gateway

    def logged(verbose: bool) -> tuple[list[str], str]:
        caplog.clear()
        with cli._logging("INFO", verbose):
            for message, path in [("lost connection", py4j.java_gateway.__file__), ("other library", __file__)]:
                fields = {"msg": message, "pathname": path, "levelno": logging.ERROR, "levelname": "ERROR"}
                logging.getLogger().handle(logging.makeLogRecord(fields))
            logging.getLogger("deltainc").warning("a package warning")
        return caplog.messages, capsys.readouterr().err

    assert logged(verbose=False) == (["other library"], "deltainc: WARNING: a package warning\n")
    assert logged(verbose=True) == (["lost connection", "other library"], "deltainc: WARNING: a package warning\n")


@pytest.mark.parametrize(
    "old, new, message",
    [
        ('how = "left"', 'how = "left', r"jobs/trx\.toml: invalid TOML: "),
        ("look_back_time = 1", "lookback_time = 1", r"jobs/trx\.toml: join\.lookback_time: unknown key"),
        ("look_back_time = 1", "look_back_time = -1", r"jobs/trx\.toml: join\.look_back_time: must be >= 0 \(got -1\)"),
        ('how = "left"', 'how = "right"', r"jobs/trx\.toml: join\.how: expected one of inner, .*, got 'right'"),
        ('keys = ["TrxId"]', "keys = []", r"jobs/trx\.toml: target\.keys: must list at least one column"),
    ],
    ids=["does_not_parse", "unknown_key", "negative_look_back_time", "unknown_join_type", "empty_keys"],
)
def test_a_job_file_that_is_invalid_exits_2_naming_the_field_before_spark_starts(
    tmp_path: Path,
    sources: Sources,
    capsys: pytest.CaptureFixture[str],
    no_spark: None,
    old: str,
    new: str,
    message: str,
) -> None:
    edit(write_job(tmp_path, sources), old, new)
    assert main(["run", "trx"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert re.match(rf"deltainc: error: .*{message}", err), err
    assert nothing_written(tmp_path)


def test_validate_of_a_job_file_with_a_misspelt_key_exits_2_naming_it_and_the_key_it_means(
    tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str], no_spark: None
) -> None:
    edit(write_job(tmp_path, sources), "max_waiting_time =", "max_wating_time =")
    assert main(["validate", "trx"]) == 2
    err = capsys.readouterr().err
    assert "join.max_wating_time: unknown key; did you mean 'max_waiting_time'?" in err, err
    assert nothing_written(tmp_path)


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("missing_source", r"source_a: no Delta table at path .*/missing"),
        ("missing_key_column", r"join_cols: column 'TrxId' missing from source_b \(columns: SepaId, Country, "),
        ("missing_target_key", r"target\.keys: column 'AccountId' missing from source_a \(columns: TrxId, Amount, "),
        ("mismatched_key_types", r"join_cols: key 'TrxId' has type bigint in source_a but string in source_b"),
        (
            "output_column_collision",
            r"output column collision: 'RecDate' from the output inc_col collides with "
            r"join_cols",
        ),
        ("hour_job_on_a_date_column", r"time_uom: 'hour' needs a timestamp 'RecDate', but column 'RecDate' of "),
    ],
)
def test_a_job_that_does_not_fit_its_sources_exits_2_naming_the_culprit_before_spark_starts(
    tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str], no_spark: None, case: str, message: str
) -> None:
    job = write_job(tmp_path, sources)
    if case == "missing_source":
        edit(job, sources.a, str(tmp_path / "missing"))
    elif case == "missing_key_column":
        edit(job, sources.b, sources.b_without_key)
    elif case == "missing_target_key":
        edit(job, 'keys = ["TrxId"]', 'keys = ["AccountId"]')
    elif case == "mismatched_key_types":
        edit(job, sources.b, sources.b_string_key)
    elif case == "hour_job_on_a_date_column":
        edit(job, 'how = "left"', 'how = "left"\ntime_uom = "hour"')
    else:
        edit(job, 'join_cols = ["TrxId"]', 'join_cols = ["TrxId", "RecDate"]')
    for command in ("run", "validate"):
        assert main([command, "trx"]) == 2
        out, err = capsys.readouterr()
        assert out == ""
        assert re.match(rf"deltainc: error: {message}", err), err
    assert nothing_written(tmp_path)


def test_ambiguous_source_rows_exit_2_before_the_target_is_written(
    spark: SparkSession, tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str]
) -> None:
    write_job(tmp_path, sources, a=sources.a_duplicates)
    assert main(["run", "trx"]) == 2
    assert re.match(
        r"deltainc: error: target identity TrxId, RecDate_A, SepaId, RecDate_B is not unique in the join "
        r"output: TrxId=1, .*\(2 rows\)",
        capsys.readouterr().err,
    )
    assert not (tmp_path / "target_trx").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["rerun", "trx", "--start", "2025-03-02", "--end", "2025-03-01"],
            r"deltainc: error: --start 2025-03-02 is after --end 2025-03-01: invalid window\n",
        ),
        (
            ["backfill", "trx", "--start", "2025-03-02", "--end", "2025-03-01"],
            r"deltainc: error: --start 2025-03-02 is after --end 2025-03-01: invalid window\n",
        ),
        (
            ["run", "trx", "--until", "2025-13-01"],
            r"usage: deltainc run .*\ndeltainc: error: argument --until: expected a date like 2025-03-07, "
            r"got '2025-13-01'\n",
        ),
        (
            ["run", "trx", "--conf", "spark.executor.memory"],
            r"usage: .*\ndeltainc: error: argument --conf: expected key=value "
            r"\(e\.g\. spark\.executor\.memory=4g\), got 'spark\.executor\.memory'\n",
        ),
        (
            ["run", "nosuchjob"],
            r"deltainc: error: job 'nosuchjob': no such job file and no .*jobs/nosuchjob\.toml "
            r"\(jobs in .*: trx\)\n",
        ),
        (["status", "trx", "--settings", "missing.toml"], r"deltainc: error: --settings: no such file missing\.toml\n"),
    ],
    ids=[
        "rerun_window_start_after_end",
        "backfill_window_start_after_end",
        "bad_date",
        "bad_conf",
        "unknown_job",
        "missing_settings_file",
    ],
)
def test_invalid_command_line_input_exits_2_before_spark_starts(
    tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str], no_spark: None, argv: list[str], message: str
) -> None:
    write_job(tmp_path, sources)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert re.fullmatch(message, err, re.S), err
    assert nothing_written(tmp_path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[spark\n", r"deltainc: error: settings\.toml: invalid TOML: "),
        (
            '[spark]\nmastr = "local[1]"\n',
            r"deltainc: error: settings \(settings\.toml or DELTAINC_\* variables\): "
            r"spark\.mastr: Extra inputs are not permitted",
        ),
        (
            "lock_expiry_seconds = 0\n",
            r"deltainc: error: settings \(.*\): lock_expiry_seconds: Input should "
            r"be greater than or equal to 10 \(got 0\)",
        ),
    ],
    ids=["does_not_parse", "unknown_key", "out_of_range"],
)
def test_an_invalid_settings_file_exits_2_naming_the_file_and_field(
    tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str], no_spark: None, text: str, message: str
) -> None:
    write_job(tmp_path, sources)
    (tmp_path / "settings.toml").write_text(text)
    assert main(["--settings", "settings.toml", "validate", "trx"]) == 2
    assert re.match(message, capsys.readouterr().err)
    assert os.environ["DELTAINC_SETTINGS_FILE"].endswith("no-settings-file.toml")  # the command never writes it


# --- global options ----------------------------------------------------------------------------------------------


def test_a_settings_file_is_given_to_load_settings_under_the_environment_which_is_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "chosen.toml").write_text('log_level = "DEBUG"\n[spark]\nmaster = "local[3]"\n')
    before = dict(os.environ)
    settings = load_settings(tmp_path / "chosen.toml")
    assert (settings.log_level, settings.spark.master) == ("DEBUG", "local[2]")  # DELTAINC_SPARK__MASTER on top
    assert load_settings(tmp_path / "chosen.toml", log_level="ERROR").log_level == "ERROR"
    assert load_settings().log_level == "INFO"  # $DELTAINC_SETTINGS_FILE (absent here): the defaults
    assert dict(os.environ) == before
    monkeypatch.setenv("DELTAINC_SETTINGS_FILE", str(tmp_path / "chosen.toml"))
    assert load_settings().log_level == "DEBUG"


def test_json_documents_write_the_types_they_hold_and_refuse_any_other() -> None:
    import decimal

    from pydantic import BaseModel

    from deltainc.cli.output import to_json

    class Model(BaseModel):
        when: dt.date

    @dataclass(frozen=True)
    class Point:
        at: dt.datetime
        path: Path

    document = {
        "date": D1,
        "amount": decimal.Decimal("10.50"),
        "tags": frozenset({"a"}),
        "pair": (1, 2),
        "model": Model(when=D2),
        "point": Point(dt.datetime(2025, 3, 1, 10, 30), Path("x/y")),
        "bytes": b"\x01\xff",
    }
    assert json.loads(to_json(document)) == {
        "date": "2025-03-01",
        "amount": "10.50",
        "tags": ["a"],
        "pair": [1, 2],
        "model": {"when": "2025-03-02"},
        "point": {"at": "2025-03-01T10:30:00", "path": "x/y"},
        "bytes": "01ff",
    }
    with pytest.raises(TypeError, match="does not write object as JSON"):
        to_json({"x": object()})


def test_settings_master_and_conf_options_reach_the_spark_session(
    spark: SparkSession,
    tmp_path: Path,
    trx_job: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, Any] = {}
    real_load_settings = context.load_settings

    def load(settings_file: Path | None = None, **overrides: object) -> Any:
        seen.update(file=str(settings_file))  # --settings is handed to load_settings, not to the environment
        return real_load_settings(settings_file, **overrides)

    def start(
        settings: Any, extra_conf: dict[str, str], verbose: bool, log_name: str, s3: bool
    ) -> tuple[SparkSession, None]:
        seen.update(settings=settings, conf=extra_conf, verbose=verbose, log_name=log_name, s3=s3)
        return spark, None

    monkeypatch.setattr(context, "load_settings", load)
    monkeypatch.setattr(spark_start, "start_spark", start)
    # A join_cond only Spark's analyzer resolves: validate starts Spark for it.
    edit(trx_job, 'join_cols = ["TrxId"]', 'join_cols = ["TrxId"]\njoin_cond = "A.Amount >= 0"')
    (tmp_path / "settings.toml").write_text('[spark]\nmaster = "local[2]"\nexecutor_memory = "1g"\n')
    argv = [
        "--settings",
        "settings.toml",
        "--conf",
        "spark.x.a=1",
        "validate",
        "trx",
        "--master",
        "local[1]",
        "--conf",
        "spark.x.b=k=v",
    ]
    monkeypatch.delenv("DELTAINC_SPARK__MASTER")
    assert main(argv) == 0
    assert seen["file"] == "settings.toml"
    assert (seen["settings"].spark.master, seen["settings"].spark.executor_memory) == ("local[1]", "1g")
    assert seen["conf"] == {"spark.x.a": "1", "spark.x.b": "k=v"}
    assert seen["verbose"] is False and seen["log_name"] == "trx"  # Spark's log goes to the job's own file
    assert seen["s3"] is False  # a job on local paths: no S3A jars
    assert capsys.readouterr().out.startswith("trx: valid")


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


def test_validate_json_gives_pending_range_next_window_reads_and_target_state_from_the_logs(
    tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str], no_spark: None
) -> None:
    job = write_job(tmp_path, sources)
    assert main(["validate", str(job), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document == {
        "job": "trx",
        "file": str(job),
        "valid": True,
        "watermark": None,
        "latest_available": "2025-03-02",
        "pending": {
            "start": "2025-03-01",
            "end": "2025-03-02",
            "units": 2,
            "windows": 1,
            "next_window": {"start": "2025-03-01", "end": "2025-03-02"},
        },
        "target_exists": False,
        "warnings": [],
        "notes": [],
        "next_window_reads": {"source_a": ["2025-02-27", "2025-03-02"], "source_b": ["2025-02-26", "2025-03-02"]},
    }
    assert nothing_written(tmp_path)


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


@pytest.mark.windows
def test_rerun_past_the_watermark_names_the_argument_given(
    processed: Processed, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DELTAINC_STATE_DIR", str(processed.root / "state"))
    assert main(["rerun", str(processed.job), "--start", "2025-03-05"]) == 2
    assert "rerun: --start 2025-03-05 is after the watermark 2025-03-02" in capsys.readouterr().err
    assert main(["rerun", str(processed.job), "--start", "2025-03-01", "--end", "2025-03-04"]) == 2
    assert "rerun: --end 2025-03-04 is after the watermark 2025-03-02" in capsys.readouterr().err


# --- profile (the demo runs once, through the command line, in tests/demo/test_demo.py) ---------------------------


def test_profile_prints_the_delay_profile_and_draws_the_chart(
    spark: SparkSession, tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str]
) -> None:
    write_job(tmp_path, sources)
    assert main(["profile", "trx", "--chart", "chart.png", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["pairs"], document["unmatched_a"], document["chart"]) == (3, 1, "chart.png")
    assert (tmp_path / "chart.png").stat().st_size > 0
    assert main(["profile", "trx", "--start", "2025-03-02"]) == 0
    assert capsys.readouterr().out.startswith("Delay profile of job trx:")
    assert nothing_written(tmp_path)


# --- the example job and the spark-submit entry point ----------------------------------------------------------------


def test_the_example_bank_trx_job_loads() -> None:
    job = load_job(REPO / "conf" / "jobs" / "bank_trx.toml")
    here = Path.cwd()  # relative paths in a job file are taken against the directory the command runs in
    assert (job.name, job.start_date, job.source_a.path, job.source_b.path, job.target.path) == (
        "bank_trx",
        D1,
        str(here / "data/finance_trx"),
        str(here / "data/sepa_trx"),
        str(here / "data/trx_joined"),
    )
    assert (job.target.keys, job.target.b_keys, job.join.join_cols) == (["TrxId"], ["SepaId"], ["TrxId"])
    assert (job.join.look_back_time, job.join.max_waiting_time, job.join.include_waiting) == (2, 11, True)


def test_run_job_leaves_the_master_to_spark_submit_and_returns_the_exit_code(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("run_job", REPO / "jobs" / "run_job.py")
    assert spec is not None and spec.loader is not None
    run_job = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_job)
    seen: dict[str, Any] = {}

    def fake_main(argv: list[str]) -> int:
        seen.update(argv=argv, master=load_settings().spark.master)
        return 3

    monkeypatch.setattr(cli, "main", fake_main)
    assert run_job.run(["run", "bank_trx"]) == 3
    assert seen == {"argv": ["run", "bank_trx"], "master": ""}


def scans_job(root: Path, scans: str, name: str = "trx_scans", reads: str = "trx") -> Path:
    """A job in root/jobs whose source A is the job `reads`'s target (`job = ...`), joined with the scans at `scans`."""
    path = root / "jobs" / f"{name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'name = "{name}"\nstart_date = {D1}\n[source_a]\njob = "{reads}"\n[source_b]\npath = "{scans}"\n'
        '[join]\nhow = "left"\njoin_cols = ["TrxId"]\nlook_back_time = 3\nmax_waiting_time = 1\n'
        'alias_a = "A2"\nalias_b = "B2"\n'
        f'[target]\npath = "{root / f"target_{name}"}"\nkeys = ["TrxId"]\nb_keys = ["ScanId"]\n'
    )
    return path


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


@pytest.mark.windows
def test_a_chain_backfilled_job_by_job_in_one_chunk_equals_the_chain_run_day_by_day(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    days = [D1 + dt.timedelta(days=i) for i in range(4)]
    a = write_rows(tmp_path / "a", [(k, 1.0, days[d]) for k, d in ((1, 0), (2, 0), (3, 1), (4, 1), (5, 2), (6, 3))],
                   A_SCHEMA)  # fmt: skip
    # TrxId 2's payment a day late, 3's two days late, 4 none (times out), 6 still waiting at the end.
    b = write_rows(tmp_path / "b", [(10, 1, "NL", days[0]), (11, 2, "NL", days[1]), (12, 3, "DE", days[3]),
                                    (13, 5, "DE", days[2])], B_SCHEMA)  # fmt: skip
    scanned = [(100, 1, 0), (101, 2, 2), (102, 3, 3), (103, 5, 3), (104, 4, 3)]
    scans = write_rows(
        tmp_path / "scans", [(s, k, days[d]) for s, k, d in scanned], "ScanId long, TrxId long, RecDate date"
    )
    for name in ("trx", "fresh"):
        write_job(tmp_path, Sources(a, b, "", "", ""), name=name)
        scans_job(tmp_path, scans, name=f"{name}_scans", reads=name)
    for day in days:  # the chain day by day
        assert main(["run", "trx", "--until", day.isoformat()]) == 0
        assert main(["run", "trx_scans", "--until", day.isoformat()]) == 0
    for name in ("fresh", "fresh_scans"):  # each job reloaded in one chunk, upstream first
        assert main(["backfill", name, "--start", D1.isoformat(), "--end", days[-1].isoformat(), "--chunk", "all"]) == 0
    for name, fresh in (("trx", "fresh"), ("trx_scans", "fresh_scans")):
        assert read_rows(tmp_path / f"target_{name}") == read_rows(tmp_path / f"target_{fresh}"), name
    final = {r[0] for r in read_rows(tmp_path / "target_trx_scans", ["TrxId", "IsFinal"]) if r[1]}
    assert final  # the second job has rows of its own that are final: the comparison is not of empty tables


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
