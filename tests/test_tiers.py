"""The tier rules (tests/support/tiers.py): a test's tier is the highest marker it carries, and a marker that says less
than the test uses is refused naming the marker it needs. No Spark here."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from tiers import fixture_problem, process_problem, run_logs, tier_of, window_problem, windows_committed_since

pytestmark = pytest.mark.pure

RUN_ROW = pa.schema([("job", pa.string()), ("window_start", pa.string()), ("window_end", pa.string())])


@pytest.mark.parametrize(
    ("markers", "tier"),
    [
        ([], None),
        (["smoke", "parametrize"], None),
        (["pure"], "pure"),
        (["spark", "smoke"], "spark"),
        (["processes", "spark"], "processes"),  # a test's own marker over its module's
        (["windows", "spark"], "windows"),
        (["processes", "windows"], "processes"),
        (["cluster", "service", "pure"], "service"),
    ],
)
def test_a_tests_tier_is_the_highest_marker_it_carries(markers: list[str], tier: str | None) -> None:
    assert tier_of(markers) == tier


@pytest.mark.parametrize(
    ("tier", "fixtures", "needed"),
    [
        (None, ["tmp_path"], "no tier marker"),
        ("pure", ["tmp_path", "spark"], "mark it 'spark'"),
        ("pure", ["worker_spark"], "mark it 'spark'"),
        ("spark", ["spark", "server"], "mark it 'service'"),
        ("processes", ["server"], "mark it 'service'"),
    ],
)
def test_a_marker_below_the_fixtures_a_test_uses_is_refused_naming_the_marker_it_needs(
    tier: str | None, fixtures: list[str], needed: str
) -> None:
    assert needed in (fixture_problem(tier, fixtures) or "")


@pytest.mark.parametrize(
    ("tier", "fixtures"),
    [("pure", ["tmp_path", "monkeypatch"]), ("spark", ["spark"]), ("service", ["spark", "server"])],
)
def test_a_marker_that_covers_the_fixtures_passes(tier: str, fixtures: list[str]) -> None:
    assert fixture_problem(tier, fixtures) is None


@pytest.mark.parametrize(
    ("tier", "started", "needed"),
    [
        ("pure", ["python -c pass"], "mark it 'processes'"),
        ("spark", ["python -m deltainc --help"], "mark it 'processes'"),
        ("pure", ["/opt/spark/bin/spark-submit pyspark-shell"], "take the `spark` fixture"),
        ("processes", ["python -c pass"], None),
        ("service", ["minio server"], None),
        ("pure", [], None),
    ],
)
def test_a_process_started_below_the_processes_tier_is_refused(
    tier: str, started: list[str], needed: str | None
) -> None:
    problem = process_problem(tier, started)
    assert (problem is None) if needed is None else (needed in (problem or ""))


@pytest.mark.parametrize(
    ("tier", "windows", "needed"),
    [
        ("spark", 2, "mark it 'windows'"),
        ("pure", 5, "mark it 'windows'"),
        ("spark", 1, None),
        ("spark", 0, None),
        ("windows", 9, None),
        ("processes", 9, None),
    ],
)
def test_a_job_run_over_more_than_one_window_below_the_windows_tier_is_refused(
    tier: str, windows: int, needed: str | None
) -> None:
    problem = window_problem(tier, windows)
    assert (problem is None) if needed is None else (needed in (problem or ""))


def _append_runs(location: Path, windows: list[str | None]) -> None:
    """Rows as a job's windows append them to its run log, one commit each through delta-rs (None: a row of no
    window, as a test of the state writes by hand)."""
    for window in windows:
        row = {"job": ["j"], "window_start": [window], "window_end": [window]}
        write_deltalake(str(location), pa.table(row, schema=RUN_ROW), mode="append")


def test_the_windows_a_test_ran_are_the_rows_of_windows_its_run_logs_gained_since_it_began(tmp_path: Path) -> None:
    before = tmp_path / "before" / "state" / "runs"
    _append_runs(before, ["2025-01-01"])
    began = time.time()
    _append_runs(tmp_path / "job" / "state" / "runs", ["2025-01-02", None, "2025-01-03"])
    _append_runs(before, ["2025-01-04"])
    _append_runs(tmp_path / "job" / "target", ["2025-01-02", "2025-01-03"])  # a table, not a run log
    (tmp_path / "jobcurrent").symlink_to(tmp_path / "job")  # as pytest links its newest folder of a name
    logs = run_logs(sorted(tmp_path.iterdir()))
    assert sorted(logs) == [before, tmp_path / "job" / "state" / "runs"]
    assert [windows_committed_since(log, began) for log in sorted(logs)] == [1, 2]


def test_a_run_log_copied_in_adds_no_windows(tmp_path: Path) -> None:
    _append_runs(tmp_path / "fixture" / "runs", ["2025-01-01", "2025-01-02"])
    time.sleep(0.01)
    began = time.time()
    shutil.copytree(tmp_path / "fixture", tmp_path / "copy", copy_function=shutil.copy)  # new file times
    assert windows_committed_since(tmp_path / "copy" / "runs", began) == 0
