"""The demo end to end on a tiny size, run once through the command line (`deltainc demo`): the history caught up in
one run, a daily schedule, a re-run that changes nothing, an equal reload."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from deltainc.cli.app import main
from deltainc.demo import demo as demo_module
from deltainc.demo.demo import run_demo
from deltainc.demo.demo_result import COUNT_NAMES, DemoResult
from deltainc.demo.jobs import DEMO_START
from deltainc.errors import ConfigError

pytestmark = pytest.mark.spark

DAYS = 5
DAILY = 3  # the last three days run one at a time; the two before them are the history, caught up in one run
HISTORY_END = DEMO_START + dt.timedelta(days=DAYS - DAILY - 1)


@pytest.fixture(scope="module")
def demo(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[DemoResult, list[str], Path]:
    root = tmp_path_factory.mktemp("demo") / "demo-data"
    root.mkdir()
    (root / ".deltainc-demo").write_text("left by an earlier demo\n")
    (root / "stale-table").mkdir()  # an earlier demo's leftovers are removed first
    results: list[DemoResult] = []

    def kept(*args: object, **kwargs: object) -> DemoResult:  # the real demo; its result kept for the tests below
        results.append(run_demo(*args, **kwargs))  # type: ignore[arg-type]
        return results[-1]

    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out):
        patch.chdir(root.parent)  # the command's settings come from the folder it runs in: none here
        patch.setattr(demo_module, "run_demo", kept)
        code = main(["demo", "--root", root.name, "--days", str(DAYS), "--daily", str(DAILY), "--rows-per-day", "10"])
    assert code == 0, out.getvalue()[-3000:]  # exit 0: every promise of the demo held
    (result,) = results
    return result, out.getvalue().splitlines(), root


@pytest.mark.windows
def test_the_history_is_caught_up_in_one_window_then_each_day_runs_one(
    demo: tuple[DemoResult, list[str], Path],
) -> None:
    result, _, root = demo
    history, *scheduled = result.days
    assert (history.first, history.day, history.windows) == (DEMO_START, HISTORY_END, (f"{DEMO_START}..{HISTORY_END}",))
    assert [d.day for d in scheduled] == [HISTORY_END + dt.timedelta(days=i + 1) for i in range(DAILY)]
    assert [d.windows for d in scheduled] == [(str(d.day),) for d in scheduled]  # one day per window, in order
    assert all(d.first is None for d in scheduled)
    assert all(d.rows_a > 0 for d in result.days)
    assert sum(d.inserted for d in result.days) - sum(d.deleted for d in result.days) == result.target_rows
    assert sum(d.counts["same_time"] for d in result.days) > 0
    assert all(set(d.counts) == set(COUNT_NAMES) for d in result.days)
    assert not (root / "stale-table").exists()
    partitions = sorted(p.name for p in (root / "ledger").glob("RecDate=*"))
    assert partitions == [f"RecDate={DEMO_START + dt.timedelta(days=i)}" for i in range(DAYS)]
    assert (root / "target_demo_daily" / "_delta_log").is_dir()
    assert (root / "target_demo_reload" / "_delta_log").is_dir()


@pytest.mark.windows
def test_rerun_changes_nothing_and_the_reload_equals_the_daily_target(
    demo: tuple[DemoResult, list[str], Path],
) -> None:
    result, _, _ = demo
    assert result.rerun_unchanged and result.reload_equal and result.ok
    assert DEMO_START <= result.rerun_day <= DEMO_START + dt.timedelta(days=DAYS - 1)
    assert result.total_s > result.reload_s > 0


@pytest.mark.windows
def test_the_demo_prints_progress_a_table_and_the_checks(demo: tuple[DemoResult, list[str], Path]) -> None:
    _, lines, _ = demo
    text = "\n".join(lines)
    assert text.startswith(f"deltainc demo: {DAYS} days x 10 ledger transactions from {DEMO_START}")
    for heading in ("A rows", "B rows", *COUNT_NAMES, "inserted", "updated", "deleted"):
        assert heading in text
    assert f"{DEMO_START}..{HISTORY_END}: loaded A" in text
    assert f"{HISTORY_END + dt.timedelta(days=1)}: loaded A" in text
    assert "Payments the ledger never booked: " in text  # the full outer job's B-only rows
    assert "target rows unchanged: yes" in text
    assert "equal to the daily target: yes" in text
    report = demo[0].report
    assert report is not None and report.is_file() and f"(deltainc report): {report}" in text
    assert "Feature table from two sources: each ledger transaction with its account's risk score" in text
    assert "equal to the daily one: yes" in text


@pytest.mark.windows
def test_the_two_source_feature_table_runs_daily_and_its_reload_is_equal(
    spark: SparkSession, demo: tuple[DemoResult, list[str], Path]
) -> None:
    result, _, root = demo
    assert result.features is not None and result.features.reload_equal
    assert [d.day for d in result.features.days][-1] == DEMO_START + dt.timedelta(days=DAYS - 1)
    last = result.features.days[-1]
    assert last.final + last.provisional + last.waiting + last.timed_out == result.features.rows > 0
    assert (root / "risk_scores" / "_delta_log").is_dir()
    columns = set(spark.read.format("delta").load(str(root / "target_demo_features")).columns)
    assert {"risk_Risk", "risk_JoinType", "payment_SepaId", "payment_CountryCode", "payment_JoinType"} <= columns


def test_a_folder_the_demo_did_not_make_is_never_emptied(spark: SparkSession, tmp_path: Path) -> None:
    (tmp_path / "precious.txt").write_text("keep me")
    with pytest.raises(ConfigError, match="demo root: .* is not empty and was not made by the demo"):
        run_demo(tmp_path, spark, days=1, rows_per_day=1)
    assert (tmp_path / "precious.txt").read_text() == "keep me"


@pytest.mark.windows
def test_the_chains_second_job_holds_each_final_matched_payment_of_the_first_and_its_reload_is_equal(
    spark: SparkSession, demo: tuple[DemoResult, list[str], Path]
) -> None:
    result, lines, root = demo
    assert result.chain is not None and result.chain.reload_equal and result.chain.rows > 0
    upstream = spark.read.format("delta").load(str(root / "target_demo_daily"))
    matched = upstream.where("IsFinal AND SepaId IS NOT NULL AND TrxDT IS NOT NULL").select("TrxId", "SepaId")
    scored = spark.read.format("delta").load(str(root / "target_demo_scored")).select("TrxId", "SepaId")
    assert sorted(scored.collect()) == sorted(matched.collect())
    assert any(line.startswith("A chain of two jobs: demo_scored reads") and "equal: yes" in line for line in lines)
