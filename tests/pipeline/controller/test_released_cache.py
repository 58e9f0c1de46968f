"""What a window persists is released once it ends (issue 80): after each window of a backfill and of a run of
several windows, the session's persisted RDDs are those it had before, as Spark's own REST API lists them
(`/api/v1/applications/<id>/storage/rdd`; the session's UI is on, so the run is a process of its own)."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_jobs import A_SCHEMA, B_SCHEMA, job_toml
from delta_rows import write_rows
from processes import env

pytestmark = pytest.mark.processes

REPO = Path(__file__).resolve().parents[3]
DAYS = [dt.date(2025, 3, 1) + dt.timedelta(days=n) for n in range(5)]
A_ROWS = [(n, 10.0 * n, DAYS[n % 5]) for n in range(1, 11)]
B_ROWS = [(100 + n, n, "NL", DAYS[min(4, n % 5 + n % 2)]) for n in range(1, 11)]  # some a day late


def test_after_every_window_of_a_backfill_and_of_a_run_the_sessions_persisted_rdds_are_as_before(
    tmp_path: Path,
) -> None:
    a = write_rows(tmp_path / "a", A_ROWS, A_SCHEMA, partition_by=["RecDate"])
    b = write_rows(tmp_path / "b", B_ROWS, B_SCHEMA, partition_by=["RecDate"])
    job = tmp_path / "trx.toml"
    job.write_text(job_toml("trx", a, b, str(tmp_path / "target"), start=DAYS[0], max_window=1))
    # days 1-2 backfilled a chunk a day (two commands' worth of windows), then one run of days 3-5 (three windows)
    command = [sys.executable, "-m", "benchmarks.scenarios.memory", str(job), "--start", str(DAYS[0]), "--end",
               str(DAYS[4]), "--chunk", "day", "--run-from", str(DAYS[2])]  # fmt: skip
    environment = {**env(tmp_path), "DELTAINC_STATE_DIR": str(tmp_path / "state"),
                   "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=600,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    records = [json.loads(line.removeprefix("MEMORY ")) for line in done.stdout.splitlines()]
    before, windows = records[0], records[1:]
    assert [(w["number"], w["window"]) for w in windows] == [
        (1, "2025-03-01"), (2, "2025-03-02"), (-1, "2025-03-03"), (-1, "2025-03-04"), (-1, "2025-03-05")
    ]  # fmt: skip
    for window in windows:
        # Delta's cache of a table's current snapshot (one version a table, replaced as the table moves) is Delta's.
        ours = [name for name in window["rdds"] if not name.startswith("Delta Table State")]
        assert ours == before["rdds"], window["window"]
        assert len(window["rdds"]) - len(ours) <= 2 * 3, window["rdds"]  # A, B and the target at most
