"""`python -m deltainc` as a process (the installed entry point, a quiet Spark start), `--version`, and the
example job and the spark-submit entry point (jobs/run_job.py). Run through `deltainc.cli.app.main` or as a
subprocess, on tiny Delta tables under tmp_path."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_commands import nothing_written
from cli_jobs import D1, Sources, settings_env, write_job

import deltainc
from deltainc.cli import app as cli
from deltainc.cli.app import main
from deltainc.pipeline.job.job_config import load_job
from deltainc.settings import load_settings

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("settings_under_tmp")]

REPO = Path(__file__).resolve().parents[2]


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
