"""`deltainc check` after a real catch-up (issue 75): an hour job that caught up on eight hours in one window, then
ran hour by hour, judged against a `too_late` threshold set for one hour's usual count. The windows are run by
Spark on tiny sources written with delta-rs; the check reads the run log without a JVM."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from cli_jobs import settings_env
from delta_rows import write_rows
from pyspark.sql import SparkSession

from deltainc.cli.app import main
from deltainc.pipeline.controller.commands import run

pytestmark = pytest.mark.windows

T0 = dt.datetime(2025, 3, 1)
SPIKE = 8  # the hour whose A rows are five, not two: their B rows, two hours late, make hour 10 a spike


def hour(h: int) -> dt.datetime:
    return T0 + dt.timedelta(hours=h)


def write_job(root: Path) -> None:
    """An hour job (a B row 2 hours after its A row is too late: max_waiting_time 1, late_horizon 2) whose A has
    two rows an hour (five at SPIKE) and whose B has each of them two hours later, too late."""
    a = [(100 * h + i, 1.0, hour(h)) for h in range(11) for i in range(5 if h == SPIKE else 2)]
    b = [(trx, trx, at + dt.timedelta(hours=2)) for trx, _, at in a]
    write_rows(root / "a", a, "TrxId long, Amount double, RecDate timestamp")
    write_rows(root / "b", b, "SepaId long, TrxId long, RecDate timestamp")
    (root / "jobs").mkdir()
    (root / "jobs" / "trx.toml").write_text(
        f"""name = "trx"
start_date = 2025-03-01
max_window = 0
[source_a]
path = "{root / "a"}"
[source_b]
path = "{root / "b"}"
[join]
how = "left"
join_cols = ["TrxId"]
look_back_time = 1
max_waiting_time = 1
time_uom = "hour"
[target]
path = "{root / "target"}"
keys = ["TrxId"]
b_keys = ["SepaId"]
[checks]
too_late = {{ warn = 2, error = 3 }}
"""
    )


def checked(capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    """`deltainc check trx --json --fail-on-warn`: its exit code and its too_late check."""
    capsys.readouterr()
    code = main(["check", "trx", "--json", "--fail-on-warn"])
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    return code, checks["too_late"]


def test_a_catch_up_then_hourly_runs_pass_a_too_late_threshold_set_for_one_hour_and_a_spike_fails_it(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in settings_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    write_job(tmp_path)
    caught_up = run("trx", until=hour(7).isoformat(), spark=spark).windows  # hours 0-7 in one window
    hourly = [run("trx", until=hour(h).isoformat(), spark=spark).windows for h in (8, 9)]
    late = [w.record.rows_too_late for w in caught_up] + [w.record.rows_too_late for ws in hourly for w in ws]
    assert late == [12, 2, 2]  # hours 2-7 two each, in one window: more than a normal hour's 2 (warn above 2)
    code, too_late = checked(capsys)
    assert (code, too_late["level"], too_late["value"]) == (0, "pass", 2)
    run("trx", until=hour(10).isoformat(), spark=spark)  # the B rows of SPIKE's five A rows
    code, too_late = checked(capsys)
    assert (code, too_late["level"], too_late["value"]) == (4, "error", 5)
