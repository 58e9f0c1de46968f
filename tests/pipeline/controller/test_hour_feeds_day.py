"""An hour job feeding a day job (docs/concepts/pipelines.md#an-hour-job-feeding-a-day-job), with the page's job
files as written: checked before either has run, the day job run to the days its upstream has completed,
corrections flowing down, and the reverse (an hour job on a day job) refused."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from cli_jobs import settings_env
from delta_rows import read_rows, write_rows
from pyspark.sql import SparkSession

from deltainc.cli.app import main

pytestmark = pytest.mark.spark

PAGE = Path(__file__).resolve().parents[3] / "docs" / "concepts" / "pipelines.md"
D1, D2 = dt.date(2025, 3, 1), dt.date(2025, 3, 2)


def recipe() -> dict[str, str]:
    """The job files of the page's recipe, by job name, as the page gives them."""
    section = PAGE.read_text(encoding="utf-8").split("## An hour job feeding a day job")[1].split("\n## ")[0]
    files = re.findall(r"```toml\n(.*?)```", section, re.S)
    return {re.findall(r'^name = "(\w+)"', text, re.M)[0]: text for text in files}


def hour(day: dt.date, h: int) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, h)


@pytest.fixture()
def root(spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The recipe's job files in tmp_path/jobs and its sources under tmp_path/data: call 1 rated within the hour on
    March 1, disputed that day; call 2 rated at 05:00 on March 2, the call records and ratings reaching 05:00 there
    and the disputes March 2 (`spark`: the commands run in the worker's session)."""
    monkeypatch.chdir(tmp_path)
    for name, value in settings_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    (tmp_path / "jobs").mkdir()
    for name, text in recipe().items():
        (tmp_path / "jobs" / f"{name}.toml").write_text(text)
    data = tmp_path / "data"
    write_rows(data / "call_records", [(1, "m1", 60, hour(D1, 10)), (2, "m2", 30, hour(D2, 5))],
               "CallId long, Msisdn string, Seconds int, RecDate timestamp")  # fmt: skip
    write_rows(data / "ratings", [(11, 1, 0.5, hour(D1, 10)), (12, 2, 0.2, hour(D2, 5))],
               "RatingId long, CallId long, Price double, RecDate timestamp")  # fmt: skip
    write_rows(data / "disputes", [(21, 1, "price", D1), (22, 9, "none", D2)],
               "DisputeId long, CallId long, Reason string, RecDate date")  # fmt: skip
    return tmp_path


def test_the_recipes_pair_validates_before_either_has_run(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate"]) == 0
    out = capsys.readouterr().out
    assert re.findall(r"^(\w+): valid", out, re.M) == ["calls", "calls_disputed"]
    assert "source_a: the target of job calls does not exist yet" in out.split("calls_disputed: valid")[1]
    assert not (root / "data" / "calls").exists() and not (root / "state").exists()


@pytest.mark.windows  # two jobs run, then a rerun of both
def test_a_day_job_runs_the_days_its_hour_upstream_has_completed_and_takes_its_corrections(root: Path) -> None:
    assert main(["run"]) == 0  # calls to 2025-03-02 05:00: only March 1 is complete for calls_disputed
    columns = ["CallId", "DisputeId", "JoinType", "RecDate", "RecDate_A2"]
    assert read_rows(root / "data" / "calls_disputed", columns) == [(1, 21, 1, D1, hour(D1, 10))]
    write_rows(root / "data" / "disputes", [(23, 2, "late", D2)], "DisputeId long, CallId long, Reason string, "
               "RecDate date", mode="append")  # fmt: skip
    write_rows(root / "data" / "call_records", [(3, "m3", 5, hour(D2, 23))],
               "CallId long, Msisdn string, Seconds int, RecDate timestamp", mode="append")  # fmt: skip
    write_rows(root / "data" / "ratings", [(13, 3, 0.1, hour(D2, 23))],
               "RatingId long, CallId long, Price double, RecDate timestamp", mode="append")  # fmt: skip
    assert main(["run"]) == 0  # calls to 23:00: March 2 complete
    got = read_rows(root / "data" / "calls_disputed", columns)
    assert got == [(1, 21, 1, D1, hour(D1, 10)), (2, 23, 1, D2, hour(D2, 5)), (3, None, 5, D2, hour(D2, 23))]
    write_rows(root / "data" / "call_records", [(4, "m4", 9, hour(D2, 5))],
               "CallId long, Msisdn string, Seconds int, RecDate timestamp", mode="append")  # fmt: skip
    write_rows(root / "data" / "ratings", [(14, 4, 0.3, hour(D2, 5))],
               "RatingId long, CallId long, Price double, RecDate timestamp", mode="append")  # fmt: skip
    assert main(["rerun", "calls", "--start", "2025-03-02T05:00", "--downstream"]) == 0
    calls = read_rows(root / "data" / "calls", ["CallId", "RatingId"])
    assert (4, 14) in calls  # the correction (a call loaded late into 05:00) reached calls ...
    disputed = read_rows(root / "data" / "calls_disputed", ["CallId", "RatingId", "DisputeId"])
    assert (4, 14, None) in disputed and (2, 12, 23) in disputed  # ... and, by the day of its hour, calls_disputed


def test_an_hour_job_on_a_day_jobs_target_is_refused_naming_the_source_and_nothing_is_written(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (root / "jobs" / "hourly_on_daily.toml").write_text(
        'name = "hourly_on_daily"\nstart_date = 2025-03-01\n[source_a]\njob = "calls_disputed"\n[source_b]\n'
        'path = "data/ratings"\n[join]\nhow = "left"\njoin_cols = ["CallId"]\ntime_uom = "hour"\n'
        '[target]\npath = "data/hourly_on_daily"\nkeys = ["CallId"]\n'
    )
    for command in (["validate"], ["run"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert "hourly_on_daily.toml: source_a.job: calls_disputed's target is dated by RecDate in days" in err
        assert "a job of hours cannot read a job of days, whose RecDate is a DATE that names no hour" in err
    written = [p.name for p in (root / "data").iterdir() if p.name not in ("call_records", "ratings", "disputes")]
    assert written == [] and not (root / "state").exists()
