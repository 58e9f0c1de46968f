"""Each fact once per command (issue 76): the settings check, the state read, the plan and the latest available unit
are worked out once by `run`, `rerun` and `backfill`, counted through `fact_counts`' own hook (`counting_facts`), as
`test_one_look.py` counts the Delta logs opened. What is worked out before Spark (the state under the lock, the
latest unit) is carried on, not worked out again."""

from __future__ import annotations

import collections
import datetime as dt
from pathlib import Path

import cli_jobs
import pytest
from cli_jobs import quiet
from pyspark.sql import SparkSession

from deltainc.fact_counts import LATEST_AVAILABLE, SETTINGS_CHECKED, STATE_READ, WINDOWS_PLANNED, counting_facts
from deltainc.pipeline.controller.before_spark import hold_lock
from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.job.job_config import load
from deltainc.pipeline.state import RunRecord, RunStatus, append_run, built_with, encode, read_state, state_paths
from deltainc.pipeline.state.window_row import SettingsChangedError
from deltainc.time_units import TimeUnit, to_index

pytestmark = pytest.mark.windows

EACH_ONCE = {SETTINGS_CHECKED: 1, STATE_READ: 1, WINDOWS_PLANNED: 1, LATEST_AVAILABLE: 1}


def _facts_of(argv: list[str]) -> dict[str, int]:
    """The facts `deltainc ARGV` (in-process: Spark started by the command, the lock taken before) worked out."""
    with counting_facts() as facts:
        assert quiet(argv) == 0
    return _counted(facts)


def _counted(facts: collections.Counter[str]) -> dict[str, int]:
    return {fact: facts[fact] for fact in EACH_ONCE}


def test_a_daily_run_of_one_window_works_out_each_fact_once(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = cli_jobs.daily_job(tmp_path, monkeypatch)
    assert _facts_of(["run", str(job)]) == EACH_ONCE


def test_a_run_of_two_windows_works_out_each_fact_once(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = cli_jobs.logged_job(tmp_path, monkeypatch, max_window=1)
    with counting_facts() as facts:
        assert len(run(job, spark=lambda: spark).windows) == 2  # a session started when asked for, as the CLI's
    assert _counted(facts) == EACH_ONCE


def test_a_run_given_a_session_works_out_each_fact_once(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = cli_jobs.daily_job(tmp_path, monkeypatch)
    with counting_facts() as facts:
        assert len(run(job, spark=spark).windows) == 1
    assert _counted(facts) == EACH_ONCE


def test_a_rerun_works_out_the_settings_the_state_and_the_plan_once_and_needs_no_latest_unit(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = cli_jobs.daily_job(tmp_path, monkeypatch)
    assert _facts_of(["rerun", str(job), "--start", "2025-03-01"]) == EACH_ONCE | {LATEST_AVAILABLE: 0}


def test_a_backfill_of_two_chunks_works_out_each_fact_once(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = cli_jobs.logged_job(tmp_path, monkeypatch)
    argv = ["backfill", str(job), "--start", "2025-03-01", "--end", "2025-03-02", "--chunk", "day"]
    assert _facts_of(argv) == EACH_ONCE


def test_a_run_with_nothing_pending_answered_from_the_logs_reads_the_state_and_the_latest_unit_once(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = cli_jobs.daily_job(tmp_path, monkeypatch)
    found = _facts_of(["run", str(job), "--until", "2025-03-01"])
    assert found == {SETTINGS_CHECKED: 1, STATE_READ: 1, WINDOWS_PLANNED: 0, LATEST_AVAILABLE: 1}


@pytest.mark.pure
def test_a_run_whose_lock_changed_hands_since_it_read_the_state_checks_the_settings_the_other_run_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job, settings = load(cli_jobs.logged_job(tmp_path, monkeypatch), None)
    paths = state_paths(job.state_path(settings.state_dir))
    read = read_state(paths, job.name)  # this run's read, before the lock: nothing recorded yet
    recorded = built_with(job)
    recorded[next(iter(recorded))] = "another value"
    with hold_lock(job, settings) as other:  # meanwhile another run takes the lock, and its last row records others
        day = to_index(cli_jobs.D1, TimeUnit.DAY)
        append_run(paths, RunRecord(job.name, other.run_id, "run", "2025-03-01", "2025-03-01",
                                    RunStatus.SUCCEEDED.value, None, dt.datetime(2025, 3, 1), 1.0, watermark_unit=day,
                                    releases_lock=True, job_settings=encode(recorded)))  # fmt: skip
        other.released = True
    with pytest.raises(SettingsChangedError), hold_lock(job, settings, state=read):
        pytest.fail("the lock was held under settings the other run changed")
