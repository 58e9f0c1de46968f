"""`deltainc check`: a job's `[checks]` judged from its run log and state, read without a JVM, and the exit code a
scheduler acts on: 0 when no error level is breached, 4 when one is, 5 for a warning with --fail-on-warn, 2 for a
bad [checks]. Run logs are written by the state layer's own writer and sources by delta-rs: no Spark here."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pytest
from cli_jobs import D1, job_toml, settings_env
from deltalake import write_deltalake

from deltainc.cli import spark_start
from deltainc.cli.app import main
from deltainc.pipeline.state import RunRecord, append_run, state_paths
from deltainc.time_units import to_index

pytestmark = pytest.mark.pure


@pytest.fixture()
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Settings under tmp_path; Spark may not start (a check reads the Delta logs only)."""
    for name, value in settings_env(tmp_path).items():
        monkeypatch.setenv(name, value)

    def refuse(*_args: object) -> None:
        raise AssertionError("check started Spark")

    monkeypatch.setattr(spark_start, "start_spark", refuse)
    return tmp_path


def job(root: Path, checks: str = "", name: str = "trx") -> None:
    """The job `name` in root/jobs, with `checks` as its [checks] section's lines."""
    (root / "jobs").mkdir(exist_ok=True)
    text = job_toml(name, str(root / "a"), str(root / "b"), str(root / f"t_{name}"), D1)
    (root / "jobs" / f"{name}.toml").write_text(text + (f"[checks]\n{checks}\n" if checks else ""))


def sources(root: Path, last_day: int) -> None:
    """A and B with one row on each day D1 .. D1 + last_day."""
    days = [D1 + dt.timedelta(days=d) for d in range(last_day + 1)]
    a = pa.table({"TrxId": list(range(len(days))), "Amount": [1.0] * len(days), "RecDate": days})
    b = pa.table({"SepaId": list(range(len(days))), "TrxId": list(range(len(days))), "Country": ["NL"] * len(days),
                  "RecDate": days})  # fmt: skip
    write_deltalake(str(root / "a"), a, partition_by=["RecDate"])
    write_deltalake(str(root / "b"), b, partition_by=["RecDate"])


def window(root: Path, day: int, name: str = "trx", hours_ago: float = 1.0, units: int = 1, **values: object) -> None:
    """The run-log row of the daily window D1 + day (through D1 + day + units - 1: a catch-up of `units` days), one
    run each, `hours_ago` hours before now."""
    label, end = ((D1 + dt.timedelta(days=d)).isoformat() for d in (day, day + units - 1))
    status = str(values.pop("status", "succeeded"))
    moved = {"watermark": end, "watermark_unit": to_index(D1) + day + units - 1} if status == "succeeded" else {}
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)  # now, not at import: a suite runs for minutes
    started = now - dt.timedelta(hours=hours_ago, seconds=-day)  # a later day's run a moment later
    took = float(str(values.pop("duration_s", 10.0)))
    row = RunRecord(name, f"run-{name}-{day}-{status}", "run", label, end, status, None, started, took,
                    releases_lock=True, **{"rows_same_time": 9, "rows_a_timed_out": 1, **moved, **values})  # type: ignore[arg-type]  # fmt: skip
    append_run(state_paths(str(root / "state")), row)


def checked(root: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, dict[str, object]]]:
    """`deltainc check trx --json ARGS`: its exit code and its checks by name."""
    code = main(["check", "trx", "--json", *args])
    document = json.loads(capsys.readouterr().out)
    return code, {c["name"]: c for c in document["checks"]}


def test_a_job_without_checks_passes_when_its_last_run_succeeded(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job(root)
    window(root, 0)
    code, checks = checked(root, capsys)
    assert (code, list(checks), checks["last_run"]["level"]) == (0, ["last_run"], "pass")


def test_a_failed_last_run_is_an_error_by_default_and_a_warning_where_the_job_says_so(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job(root)
    window(root, 0)
    window(root, 1, status="failed")
    code, checks = checked(root, capsys)
    assert (code, checks["last_run"]["level"], checks["last_run"]["value"]) == (4, "error", "failed")
    job(root, 'last_run = "warn"')
    assert checked(root, capsys)[0] == 0
    assert checked(root, capsys, "--fail-on-warn")[0] == 5


def test_lag_counts_the_units_the_watermark_is_behind_the_sources_latest_recdate(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sources(root, last_day=5)
    window(root, 2)  # the watermark three days behind
    job(root, "lag = { warn = 1, error = 2 }")
    code, checks = checked(root, capsys)
    assert (code, checks["lag"]["value"], checks["lag"]["level"]) == (4, 3, "error")
    job(root, "lag = { warn = 2, error = 3 }")
    code, checks = checked(root, capsys, "--fail-on-warn")
    assert (code, checks["lag"]["level"]) == (5, "warn")
    job(root, "lag = { error = 3 }")
    assert checked(root, capsys)[1]["lag"]["level"] == "pass"


def test_the_timed_out_share_is_of_the_final_a_rows_of_the_last_windows(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    window(root, 0, rows_same_time=0, rows_a_timed_out=10)  # older than the last two windows: not counted
    window(root, 1, rows_same_time=6, rows_a_late=1, rows_a_timed_out=1)
    window(root, 2, rows_same_time=1, rows_b_late=0, rows_a_timed_out=1, rows_a_waiting=50)  # waiting: not final
    job(root, "windows = 2\ntimed_out_share = { warn = 0.1, error = 0.25 }")
    code, checks = checked(root, capsys, "--fail-on-warn")
    assert (code, checks["timed_out_share"]["value"], checks["timed_out_share"]["level"]) == (5, 0.2, "warn")


def test_the_timed_out_share_is_a_share_so_a_catch_up_window_with_the_usual_share_does_not_move_it(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    window(root, 0, units=12, rows_same_time=108, rows_a_timed_out=12)  # 12 days of 10%
    window(root, 12, rows_same_time=9, rows_a_timed_out=1)  # one day of 10%
    job(root, "timed_out_share = { warn = 0.1 }")
    code, checks = checked(root, capsys, "--fail-on-warn")
    assert (code, checks["timed_out_share"]["value"], checks["timed_out_share"]["level"]) == (0, 0.1, "pass")


def test_too_late_rows_are_judged_by_the_most_in_one_of_the_last_windows(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for day, late in enumerate((40, 3, 12, 0)):
        window(root, day, rows_too_late=late)
    job(root, "windows = 3\ntoo_late = { warn = 5, error = 10 }")
    code, checks = checked(root, capsys)
    assert (code, checks["too_late"]["value"], checks["too_late"]["level"]) == (4, 12, "error")


def test_too_late_rows_are_judged_per_unit_so_a_catch_up_window_passes_a_threshold_set_for_one_unit(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    window(root, 0, units=12, rows_too_late=118)  # a catch-up of 12 days: 9.8 a day
    for day, late in ((12, 8), (13, 9), (14, 7)):  # the scheduled days after it
        window(root, day, rows_too_late=late)
    job(root, "too_late = { warn = 10, error = 100 }")
    code, checks = checked(root, capsys, "--fail-on-warn")
    assert (code, checks["too_late"]["level"], checks["too_late"]["value"]) == (0, "pass", round(118 / 12, 4))
    assert "(118 in the window of 12 days from 2025-03-01)" in str(checks["too_late"]["message"])
    window(root, 15, rows_too_late=130)  # a spike in one day
    code, checks = checked(root, capsys)
    assert (code, checks["too_late"]["level"], checks["too_late"]["value"]) == (4, "error", 130)


def test_freshness_is_the_hours_since_the_last_successful_run_ended(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    window(root, 0, hours_ago=30)
    window(root, 1, hours_ago=2, status="failed")  # a failed run is not fresh
    job(root, 'last_run = "off"\nfreshness_hours = { warn = 24, error = 48 }')
    code, checks = checked(root, capsys, "--fail-on-warn")
    assert code == 5 and 29.9 < float(str(checks["freshness_hours"]["value"])) < 30.1
    assert list(checks) == ["freshness_hours"]


def test_duration_is_the_last_runs_windows_together(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    window(root, 0)
    window(root, 1, duration_s=700.0)
    job(root, "duration_s = { warn = 600, error = 900 }")
    code, checks = checked(root, capsys, "--fail-on-warn")
    assert (code, checks["duration_s"]["value"], checks["duration_s"]["level"]) == (5, 700.0, "warn")


def test_freshness_is_never_negative_when_the_last_run_ended_a_moment_after_now(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    window(root, 0, hours_ago=0.0, duration_s=30.0)  # its start plus its duration: 30 s from now
    job(root, "freshness_hours = { warn = 1 }")
    code, checks = checked(root, capsys, "--fail-on-warn")
    assert (code, checks["freshness_hours"]["value"]) == (0, 0.0)
    assert "ended 0.0 hour(s) ago" in str(checks["freshness_hours"]["message"])


@pytest.mark.parametrize(("took", "counted", "code"), [(1200.0, 100.0, 0), (12000.0, 1000.0, 4)])
@pytest.mark.parametrize("first_run", [False, True])
def test_duration_counts_a_catch_up_window_at_its_seconds_per_usual_window(
    root: Path, capsys: pytest.CaptureFixture[str], took: float, counted: float, code: int, first_run: bool
) -> None:
    if not first_run:  # three usual windows of a day before it; a first run has none, and one unit is taken
        for day in range(3):
            window(root, day, duration_s=30.0)
    window(root, 3, units=12, duration_s=took)  # a catch-up of 12 days
    job(root, "duration_s = { warn = 600, error = 900 }")
    found, checks = checked(root, capsys, "--fail-on-warn")
    assert (found, checks["duration_s"]["value"]) == (code, counted)
    assert str(checks["duration_s"]["message"]).startswith(
        f"the last run took {took:.1f} s, counted as {counted:.1f} s: its catch-up of 12 days"
    )


def test_without_a_job_every_job_is_judged_and_the_worst_level_decides_the_exit_code(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job(root)
    job(root, name="scores")
    window(root, 0)
    window(root, 0, name="scores", status="failed")
    assert main(["check", "--json"]) == 4
    document = json.loads(capsys.readouterr().out)
    assert document["level"] == "error"
    assert {j["job"]: j["level"] for j in document["jobs"]} == {"scores": "error", "trx": "pass"}
    assert main(["check", "trx"]) == 0
    assert capsys.readouterr().out.startswith("trx: pass")


@pytest.mark.parametrize(
    ("lines", "named"),
    [
        ("lag = { warn = 5, error = 2 }", "checks.lag: error (2) is below warn (5)"),
        ("lagg = { warn = 1 }", "checks.lagg"),
        ('last_run = "maybe"', "checks.last_run"),
        ("too_late = { warn = -1 }", "checks.too_late.warn"),
    ],
)
def test_a_bad_checks_section_exits_2_naming_the_field(
    root: Path, capsys: pytest.CaptureFixture[str], lines: str, named: str
) -> None:
    job(root, lines)
    assert main(["check", "trx"]) == 2
    assert named in capsys.readouterr().err
