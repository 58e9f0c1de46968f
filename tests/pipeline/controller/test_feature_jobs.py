"""Feature jobs ([[features]]) in the pipeline: one spine with a `left` source that can match several rows and an
`asof` source, through real Delta tables. Daily, monthly and one-run schedules, a re-run and a failed run give the
rows of a chain of single-source joins combined by the documented rules, whose as-of matches are polars.join_asof's.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from delta.tables import DeltaTable
from delta_rows import write_rows
from frames import frame
from pyspark.sql import SparkSession
from rich.console import Console

from deltainc import IncJoinSettings, JoinType, inc_join
from deltainc.cli.app import main
from deltainc.cli.output import runs_table
from deltainc.errors import AmbiguousRowsError, SchemaError
from deltainc.pipeline import verify
from deltainc.pipeline.controller.commands import backfill, rerun, run
from deltainc.pipeline.inspect.status_from_logs import status_from_log
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.state.model import state_paths
from deltainc.pipeline.state.store import read_runs, read_state
from deltainc.settings import load_settings
from jobs import feature_job_config

pytestmark = pytest.mark.spark

START = dt.date(2025, 3, 1)
DAYS, LAST = 8, 7  # spine rows on days 0..7; the sources' rows reach day 9, the runs end at day 7
TRX = "TrxId long, CustomerId long, EventTime timestamp, RecDate date"
PAY = "PayId long, TrxId long, Amount double, RecDate date"
SCORE = "ScoreId long, CustomerId long, Risk double, EventTime timestamp, RecDate date"
PAY_LB, PAY_MW, RISK_LB, RISK_MW = 1, 2, 3, 1


def day(n: int) -> dt.date:
    return START + dt.timedelta(days=n)


def at(n: int, minute: int) -> dt.datetime:
    return dt.datetime(START.year, START.month, START.day) + dt.timedelta(days=n, minutes=minute)


def random_sources(seed: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Transactions; their payments (none, one or two each; early by up to a day, on time, late within and beyond
    max_waiting_time); risk scores per customer, delivered the day they are valid or up to max_waiting_time later.
    Every event time is distinct, so no as-of match is a tie."""
    rng = random.Random(seed)
    minutes = rng.sample(range(24 * 60), 120)
    trx = [(i, rng.randint(1, 3), at(d := rng.randint(0, LAST), minutes[i]), day(d)) for i in range(24)]
    pay: list[tuple[Any, ...]] = []
    for trx_id, _, _, rec in trx:
        for _ in range(rng.choice([0, 1, 1, 2])):
            delay = rng.choice([-1, 0, 0, 1, 2, 3])
            pay.append((100 + len(pay), trx_id, float(rng.randint(1, 99)), rec + dt.timedelta(days=delay)))
    scores = []
    for i in range(30):
        valid = rng.randint(-2, DAYS + 1)
        scores.append(
            (500 + i, rng.randint(1, 3), rng.random(), at(valid, minutes[40 + i]), day(valid + rng.choice([0, 0, 1])))
        )
    return trx, pay, scores


def feature_job(root: Path, name: str, max_window: int = 1) -> JobConfig:
    pay = {"name": "pay", "path": str(root / "pay"), "how": "left", "join_cols": ["TrxId"], "keys": ["PayId"],
           "look_back_time": PAY_LB, "max_waiting_time": PAY_MW, "columns": ["PayId", "Amount"]}  # fmt: skip
    risk = {"name": "risk", "path": str(root / "scores"), "how": "asof", "join_cols": ["CustomerId"],
            "asof_col": "EventTime", "look_back_time": RISK_LB, "max_waiting_time": RISK_MW,
            "columns": ["ScoreId", "Risk"]}  # fmt: skip
    return feature_job_config(root, name, START, [pay, risk], max_window=max_window)


def target_rows(spark: SparkSession, job: JobConfig) -> Counter[tuple[Any, ...]]:
    rows = spark.read.format("delta").load(job.target.path).collect()
    return Counter(
        (r.TrxId, r.pay_PayId, r.risk_ScoreId, r.RecDate, r.JoinType, r.pay_JoinType, r.risk_JoinType) for r in rows
    )


def chain_reference(spark: SparkSession, root: Path, end: dt.date) -> Counter[tuple[Any, ...]]:
    """Each source joined to the spine on its own (the single-source engine, one window up to `end`), then combined
    by the documented rules: one row per pair of components, the later RecDate, waiting before provisional before the
    latest outcome."""
    spine = spark.read.format("delta").load(str(root / "trx"))
    pay = spark.read.format("delta").load(str(root / "pay"))
    scores = spark.read.format("delta").load(str(root / "scores"))
    left = inc_join(spine, pay, "left", "TrxId", None, PAY_LB, PAY_MW, None, end,
                    IncJoinSettings(include_waiting=True, output_select="TrxId, PayId, RecDate, JoinType"))  # fmt: skip
    asof = inc_join(spine, scores, "asof", "CustomerId", None, RISK_LB, RISK_MW, None, end,
                    IncJoinSettings(include_waiting=True, asof_col="EventTime",
                                    output_select="TrxId, ScoreId, RecDate, JoinType"))  # fmt: skip
    by_trx: dict[int, list[Any]] = {}
    for row in asof.collect():
        by_trx[row.TrxId] = [row.ScoreId, row.RecDate, row.JoinType]
    combined: Counter[tuple[Any, ...]] = Counter()
    for row in left.collect():
        score, score_rec, score_type = by_trx[row.TrxId]
        codes = (row.JoinType, score_type)
        kind = 5 if 5 in codes else 7 if 7 in codes else max(codes)
        combined[(row.TrxId, row.PayId, score, max(row.RecDate, score_rec), kind, row.JoinType, score_type)] += 1
    return combined


def polars_asof(trx: list[tuple[Any, ...]], scores: list[tuple[Any, ...]]) -> dict[int, int | None]:
    """Each transaction's risk score by polars.join_asof on complete data: the latest valid at its time, within
    look_back_time days."""
    left = pl.DataFrame(trx, schema=["TrxId", "CustomerId", "EventTime", "RecDate"], orient="row").sort("EventTime")
    right = pl.DataFrame(scores, schema=["ScoreId", "CustomerId", "Risk", "EventTime", "RecDate"], orient="row")
    joined = left.join_asof(right.sort("EventTime"), on="EventTime", by="CustomerId", strategy="backward",
                            tolerance=dt.timedelta(days=RISK_LB), check_sortedness=False)  # fmt: skip
    return {row["TrxId"]: row["ScoreId"] for row in joined.iter_rows(named=True)}


@pytest.fixture(scope="module")
def sources(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[Any, ...]]:
    root = tmp_path_factory.mktemp("feature_jobs")
    trx, pay, scores = random_sources(seed=11)
    for rows, schema, name in ((trx, TRX, "trx"), (pay, PAY, "pay"), (scores, SCORE, "scores")):
        frame(spark, rows, schema).coalesce(1).write.format("delta").partitionBy("RecDate").save(str(root / name))
    return root, (trx, pay, scores)


@pytest.fixture(scope="module")
def daily(spark: SparkSession, sources: tuple[Path, tuple[Any, ...]]) -> JobConfig:
    root, _ = sources
    job = feature_job(root, "daily")
    run(job, until=day(LAST), spark=spark)
    return job


@pytest.mark.windows
def test_daily_runs_give_the_chain_of_single_source_joins_combined_by_the_rules(
    spark: SparkSession, sources: tuple[Path, tuple[Any, ...]], daily: JobConfig
) -> None:
    root, (trx, pay, scores) = sources
    got = target_rows(spark, daily)
    assert got == chain_reference(spark, root, day(LAST))
    kinds = {row[4] for row in got}
    assert {int(JoinType.A_WAITING), int(JoinType.A_TIMED_OUT)} <= kinds  # the data has both
    assert max(Counter(row[0] for row in got.elements()).values()) == 2  # a transaction with two payments


@pytest.mark.windows
def test_final_as_of_matches_are_polars_join_asof_on_complete_data(
    spark: SparkSession, sources: tuple[Path, tuple[Any, ...]], daily: JobConfig
) -> None:
    _, (trx, _, scores) = sources
    expected = polars_asof(trx, scores)
    final = {row[0]: row[2] for row in target_rows(spark, daily) if row[6] not in (5, 7)}
    assert final and final == {trx_id: expected[trx_id] for trx_id in final}


@pytest.mark.windows
def test_monthly_and_one_run_schedules_give_the_daily_target(
    spark: SparkSession, sources: tuple[Path, tuple[Any, ...]], daily: JobConfig
) -> None:
    root, _ = sources
    monthly, once = feature_job(root, "monthly"), feature_job(root, "once", max_window=0)
    backfill(monthly, START, day(LAST), chunk="month", spark=spark)
    run(once, until=day(LAST), spark=spark)
    assert target_rows(spark, monthly) == target_rows(spark, daily) == target_rows(spark, once)


@pytest.mark.windows
def test_a_rerun_changes_nothing_and_verify_finds_no_difference(
    spark: SparkSession, sources: tuple[Path, tuple[Any, ...]], daily: JobConfig
) -> None:
    before = target_rows(spark, daily)
    report = rerun(daily, day(3), spark=spark).windows[0]
    assert target_rows(spark, daily) == before
    assert report.record.target_version is None  # nothing to commit
    checked = verify(daily, spark=spark)
    assert checked.only_in_target == {} and checked.only_in_recompute == {}
    assert checked.recomputed_rows == sum(before.values())


@pytest.mark.windows
def test_a_run_that_fails_after_writing_the_target_is_recovered_by_the_next(
    spark: SparkSession, sources: tuple[Path, tuple[Any, ...]], daily: JobConfig
) -> None:
    # Injected in this process: the real kill -9 at this point is tests/pipeline/controller/test_recovery.py's, and the
    # controller's recovery does not depend on the job's sources.
    root, _ = sources
    job = feature_job(root, "failed", max_window=3)
    run(job, until=day(2), spark=spark)  # the first window, committed

    def fail(step: str) -> None:
        if step == "written":
            raise RuntimeError("injected failure after the target commit")

    target_version = DeltaTable.forPath(spark, job.target.path).history(1).first()["version"]
    with pytest.raises(RuntimeError, match="injected failure"):
        run(job, spark=spark, on_step=fail)
    assert DeltaTable.forPath(spark, job.target.path).history(1).first()["version"] == target_version + 1
    paths = state_paths(str(root / "state"))
    logged = read_runs(paths, "failed", 5)
    assert [r["status"] for r in logged] == ["failed", "succeeded"]
    assert read_state(paths, "failed").watermark == logged[1]["watermark_unit"]  # the first window's: not moved
    run(job, until=day(LAST), spark=spark)
    assert target_rows(spark, job) == target_rows(spark, daily)


@pytest.mark.windows
def test_the_run_log_reports_each_source_read_in_its_own_window(
    spark: SparkSession, sources: tuple[Path, tuple[Any, ...]], daily: JobConfig
) -> None:
    root, _ = sources
    logged = read_runs(state_paths(str(root / "state")), "daily", 20)
    last = next(r for r in logged if r["command"] == "run" and r["window_start"] == day(LAST).isoformat())
    reads = json.loads(last["source_reads"])
    # a daily window on day 7 reads the spine in [7 - 2, 7], pay in [4, 7] and scores in [2, 7], a file per day
    files = {role: reads[role]["files"] for role in ("features[pay]", "features[risk]")}
    pay_days = len({r for (*_, r) in sources[1][1] if day(LAST - PAY_MW - PAY_LB) <= r <= day(LAST)})
    score_days = len({r for (*_, r) in sources[1][2] if day(LAST - PAY_MW - RISK_LB) <= r <= day(LAST)})
    assert files == {"features[pay]": pay_days, "features[risk]": score_days}
    assert last["files_read_b"] == pay_days + score_days


def three_source_job_file(root: Path, folder: Path, name: str, risk_name: str = "risk") -> Path:
    """The job file of a feature job over the module's sources, written as a user writes one: the spine, `pay` (left)
    and the scores (asof) under the name `risk_name`; target and state under `folder`."""
    job = folder / f"{name}.toml"
    job.write_text(
        f"""name = "{name}"
start_date = 2025-03-01
[source_a]
path = "{root / "trx"}"
[[features]]
name = "pay"
path = "{root / "pay"}"
how = "left"
join_cols = ["TrxId"]
keys = ["PayId"]
[[features]]
name = "{risk_name}"
path = "{root / "scores"}"
how = "asof"
join_cols = ["CustomerId"]
asof_col = "EventTime"
[target]
path = "{folder / "target"}"
keys = ["TrxId"]
[state]
path = "{folder / "state"}"
"""
    )
    return job


def test_a_source_name_used_twice_exits_2_naming_the_field_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = three_source_job_file(tmp_path, tmp_path, "twice", risk_name="pay")  # refused before any source is read
    assert main(["run", str(job)]) == 2
    assert "features[1].name: 'pay' is used twice" in capsys.readouterr().err
    assert not (tmp_path / "target").exists() and not (tmp_path / "state").exists()


def test_validate_of_a_three_source_job_names_all_three_sources(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A row each, the spine's the earliest: the latest RecDate in all three is the spine's.
    for rows, schema, name in (
        ([(1, 7, at(LAST, 60), day(LAST))], TRX, "trx"),
        ([(100, 1, 5.0, day(LAST + 1))], PAY, "pay"),
        ([(500, 7, 0.5, at(LAST, 30), day(LAST + 2))], SCORE, "scores"),
    ):
        write_rows(tmp_path / name, rows, schema, partition_by=["RecDate"])  # delta-rs: the rule is validate's
    job = three_source_job_file(tmp_path, tmp_path, "three")
    assert main(["validate", str(job)]) == 0
    out = capsys.readouterr().out
    assert f"latest RecDate in all 3 sources {day(LAST)}" in out and "both" not in out


@pytest.mark.windows
def test_status_shows_the_files_each_source_read(
    spark: SparkSession, sources: tuple[Path, tuple[Any, ...]], daily: JobConfig
) -> None:
    status = status_from_log(daily, load_settings(), runs=5)
    buffer = io.StringIO()
    Console(file=buffer, width=250).print(runs_table(status.runs))
    last = next(r for r in status.runs if r["command"] == "run" and r["window_start"] == day(LAST).isoformat())
    reads = json.loads(str(last["source_reads"]))
    shown = (
        f"A {last['files_read_a']} / pay {reads['features[pay]']['files']} / risk {reads['features[risk]']['files']}"
    )
    assert shown in buffer.getvalue()


def small_job(root: Path, pay: dict[str, Any], **target: Any) -> JobConfig:
    """A feature job of one `left` source, `pay`, over the tables under `root`."""
    return JobConfig.model_validate(
        {
            "name": "small",
            "start_date": START,
            "source_a": {"path": str(root / "trx")},
            "features": [{"name": "pay", "path": str(root / "pay"), "how": "left", "join_cols": ["TrxId"], **pay}],
            "target": {"path": str(root / "target"), "keys": ["TrxId"], **target},
            "state": {"path": str(root / "state")},
        }
    )


def write(spark: SparkSession, rows: list[tuple[Any, ...]], schema: str, path: Path, mode: str = "append") -> None:
    frame(spark, rows, schema).write.format("delta").mode(mode).option("mergeSchema", "true").save(str(path))


def test_a_left_source_without_keys_that_matches_two_rows_is_refused_naming_it(
    spark: SparkSession, tmp_path: Path
) -> None:
    write_rows(tmp_path / "trx", [(1, 7, at(0, 60), day(0))], TRX)  # delta-rs: the rule is the run's
    write_rows(tmp_path / "pay", [(100, 1, 5.0, day(0)), (101, 1, 6.0, day(0))], PAY)
    job = small_job(tmp_path, {"columns": ["Amount"]})
    with pytest.raises(AmbiguousRowsError, match=r"one spine row matches several rows of features\[pay\]"):
        run(job, spark=spark)
    assert not (tmp_path / "target").exists()


@pytest.mark.windows
def test_rows_with_a_null_join_key_are_counted_per_window_in_the_spine_and_the_feature_sources(
    spark: SparkSession, tmp_path: Path
) -> None:
    spine = [(1, 7, at(0, 60), day(0)), (None, 7, at(0, 90), day(0)), (2, 7, at(1, 60), day(1))]
    write(spark, spine, TRX, tmp_path / "trx")  # not partitioned: Spark counts
    pay = [(100, 1, 5.0, day(0)), (101, None, 6.0, day(0)), (102, None, 7.0, day(1)), (103, 2, 8.0, day(1))]
    payments = frame(spark, pay, PAY)
    payments.write.format("delta").partitionBy("RecDate").save(str(tmp_path / "pay"))  # the log's null counts
    job = small_job(tmp_path, {"keys": ["PayId"]})
    first = run(job, until=day(0), spark=spark).windows[0].record
    second = run(job, spark=spark).windows[0].record
    assert [(r.null_key_a, r.null_key_b) for r in (first, second)] == [(1, 1), (0, 1)]


@pytest.mark.windows
def test_a_column_added_to_one_feature_source_is_added_like_any_other(spark: SparkSession, tmp_path: Path) -> None:
    write(spark, [(1, 7, at(0, 60), day(0)), (2, 7, at(1, 60), day(1))], TRX, tmp_path / "trx")
    write(spark, [(100, 1, 5.0, day(0))], PAY, tmp_path / "pay")
    run(small_job(tmp_path, {"keys": ["PayId"]}), until=day(0), spark=spark)
    write(spark, [(101, 2, 6.0, day(1), 0.5)], f"{PAY[: PAY.rindex(',')]}, RecDate date, Fee double", tmp_path / "pay")
    with pytest.raises(SchemaError, match=r"'pay_Fee' \(features\[pay\] column 'Fee'"):
        run(small_job(tmp_path, {"keys": ["PayId"]}), spark=spark)
    run(small_job(tmp_path, {"keys": ["PayId"]}, schema_evolution="add_columns"), spark=spark)
    rows = spark.read.format("delta").load(str(tmp_path / "target")).collect()
    assert sorted((r.TrxId, r.pay_PayId, r.pay_Fee) for r in rows) == [(1, 100, None), (2, 101, 0.5)]


def test_a_feature_source_missing_its_join_column_exits_2_naming_the_source(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_rows(tmp_path / "trx", [(1, 7, at(0, 60), day(0))], TRX)  # delta-rs: the rule is the run's
    write_rows(tmp_path / "pay", [(100, 5.0, day(0))], "PayId long, Amount double, RecDate date")
    job = tmp_path / "small.toml"
    job.write_text(
        f'name = "small"\nstart_date = 2025-03-01\n[source_a]\npath = "{tmp_path / "trx"}"\n'
        f'[[features]]\nname = "pay"\npath = "{tmp_path / "pay"}"\nhow = "left"\njoin_cols = ["TrxId"]\n'
        f'[target]\npath = "{tmp_path / "target"}"\nkeys = ["TrxId"]\n[state]\npath = "{tmp_path / "state"}"\n'
    )
    assert main(["run", str(job)]) == 2
    error = capsys.readouterr().err
    assert "features[pay]" in error and "'TrxId'" in error
    assert not (tmp_path / "target").exists()


@pytest.mark.windows
def test_the_change_feed_shows_a_waiting_row_replaced_by_its_features(spark: SparkSession, tmp_path: Path) -> None:
    write(spark, [(1, 7, at(0, 60), day(0)), (2, 7, at(1, 60), day(1))], TRX, tmp_path / "trx")
    write(spark, [(100, 1, 5.0, day(1))], PAY, tmp_path / "pay")
    job = small_job(tmp_path, {"keys": ["PayId"], "max_waiting_time": 2}, change_data_feed=True)
    run(job, until=day(0), spark=spark)
    first = spark.read.format("delta").load(str(tmp_path / "target")).collect()
    assert [(r.TrxId, r.pay_PayId, r.JoinType) for r in first] == [(1, None, int(JoinType.A_WAITING))]
    version = DeltaTable.forPath(spark, str(tmp_path / "target")).history(1).collect()[0].version
    run(job, until=day(1), spark=spark)
    changes = spark.read.format("delta").option("readChangeFeed", "true").option("startingVersion", version + 1)
    rows = changes.load(str(tmp_path / "target")).where("TrxId = 1").collect()
    assert sorted((r._change_type, r.pay_PayId, r.JoinType) for r in rows) == [
        ("delete", None, int(JoinType.A_WAITING)),
        ("insert", 100, int(JoinType.B_LATE)),
    ]
