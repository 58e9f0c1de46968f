"""The B side in pipeline jobs (docs/design.md#the-b-side-and-too-late-rows): full_outer jobs, too-late B rows,
corrections of the past."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import pytest
from delta.tables import DeltaTable
from expected import engine_output, same_rows
from frames import frame
from pyspark.sql import DataFrame, SparkSession

from deltainc import JoinType
from deltainc.demo.sample_data import SampleSpec, write_sources
from deltainc.pipeline.controller.commands import backfill, rerun, run
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.state import RunRecord
from jobs import job_config

pytestmark = pytest.mark.windows

START = dt.date(2025, 3, 27)
D = [START + dt.timedelta(days=i) for i in range(8)]
A_SCHEMA = "TrxId long, Amount double, RecDate date"
B_SCHEMA = "TrxId long, SepaId long, RecDate date"


def make_job(root: Path, name: str = "rec", how: str = "full_outer", **overrides: Any) -> JobConfig:
    join = {"how": how, "join_cols": ["TrxId"], "look_back_time": 2, "max_waiting_time": 2}
    return job_config(root, name, START, join, keys=["TrxId"], b_keys=["SepaId"], **overrides)


def write(spark: SparkSession, root: Path, a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> None:
    frame(spark, a, A_SCHEMA).write.format("delta").mode("overwrite").save(str(root / "a"))
    frame(spark, b, B_SCHEMA).write.format("delta").mode("overwrite").save(str(root / "b"))


def target(spark: SparkSession, job: JobConfig) -> DataFrame:
    return spark.read.format("delta").load(job.target.path)


def rows(spark: SparkSession, job: JobConfig) -> list[tuple[Any, ...]]:
    """(TrxId, SepaId, output day, JoinType) of every target row."""
    found = target(spark, job).collect()
    return sorted(
        ((r.TrxId, r.SepaId, (r.RecDate - START).days, r.JoinType) for r in found),
        key=lambda row: tuple(-1 if value is None else value for value in row),
    )


def test_full_outer_daily_monthly_and_one_run_give_the_engine_output(spark: SparkSession, tmp_path: Path) -> None:
    spec = SampleSpec(start=START, days=8, rows_per_day=6, seed=5, p_no_b=0.2, p_orphan_b=0.3, p_two_b=0.1)
    write_sources(spark, spec, str(tmp_path / "a"), str(tmp_path / "b"))
    last = D[7]
    daily = make_job(tmp_path, name="daily")
    monthly = make_job(tmp_path, name="monthly", max_window=0)
    once = make_job(tmp_path, name="once", max_window=0)
    assert len(run(daily, spark=spark).windows) == 8
    backfill(monthly, START, last, chunk="month", spark=spark)
    run(once, spark=spark)
    expected = engine_output(spark, daily, last)
    kinds = {r.JoinType for r in expected.select("JoinType").distinct().collect()}
    assert {JoinType.NOT_MATCHED, JoinType.B_WAITING, JoinType.A_WAITING, JoinType.A_TIMED_OUT} <= kinds
    for job in (daily, monthly, once):
        same_rows(target(spark, job), expected)


def test_a_b_row_waits_for_its_a_look_back_time_units_and_resolves_when_it_arrives(
    spark: SparkSession, tmp_path: Path
) -> None:
    # B row 1 lands on day 0 and its A two days later (lb = 2); B row 5 never gets an A.
    write(spark, tmp_path, [(1, 10.0, D[2]), (8, 80.0, D[3])], [(1, 11, D[0]), (5, 51, D[0]), (9, 99, D[3])])
    job = make_job(tmp_path)
    run(job, until=D[0], spark=spark)
    assert rows(spark, job) == [(1, 11, 0, JoinType.B_WAITING), (5, 51, 0, JoinType.B_WAITING)]
    run(job, until=D[1], spark=spark)
    assert rows(spark, job) == [(1, 11, 1, JoinType.B_WAITING), (5, 51, 1, JoinType.B_WAITING)]
    report = run(job, until=D[2], spark=spark).windows[0]
    assert rows(spark, job) == [(1, 11, 2, JoinType.A_LATE), (5, 51, 2, JoinType.NOT_MATCHED)]
    assert (report.counts["a_late"], report.counts["not_matched"], report.counts["b_waiting"]) == (1, 1, 0)


@pytest.fixture(scope="module")
def late_job(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[JobConfig, list[RunRecord]]:
    """A full_outer job (lb 0, mw 2) run daily over days 0-3, keeping its too-late rows. A row 1 times out on
    day 2 and its B lands on day 3; A row 2 is matched on day 1 by its first parcel, its second lands on day 3."""
    root = tmp_path_factory.mktemp("late_rows")
    a = [(1, 10.0, D[0]), (2, 20.0, D[0]), (8, 80.0, D[3])]
    write(spark, root, a, [(1, 11, D[3]), (2, 21, D[1]), (2, 22, D[3]), (9, 99, D[3])])
    job = make_job(root, join={"look_back_time": 0}, target={"late_rows": str(root / "late")})
    return job, [r.record for r in run(job, spark=spark).windows]


def _kept(spark: SparkSession, job: JobConfig) -> list[tuple[Any, ...]]:
    """(TrxId, RecDate_A, SepaId, RecDate_B, TooLateBy) of the rows in the job's late_rows table."""
    late = spark.read.format("delta").load(str(job.target.late_rows)).collect()
    return sorted((r.TrxId, r.RecDate_A, r.SepaId, r.RecDate_B, r.TooLateBy) for r in late)


def test_a_b_row_one_unit_after_the_timeout_is_too_late_counted_and_kept_in_the_late_rows_table(
    spark: SparkSession, late_job: tuple[JobConfig, list[RunRecord]]
) -> None:
    job, records = late_job
    assert [r.rows_too_late for r in records] == [0, 0, 0, 2]  # TrxId 1's B row and TrxId 2's second parcel
    assert (1, 11, 3, JoinType.NOT_MATCHED) in rows(spark, job)  # in a full outer job also a B-only row
    assert (1, None, 2, JoinType.A_TIMED_OUT) in rows(spark, job)
    assert (1, D[0], 11, D[3], 1) in _kept(spark, job)
    logged = spark.read.format("delta").load(f"{job.state.path}/runs").orderBy("window_start").collect()
    assert [r.rows_too_late for r in logged] == [0, 0, 0, 2]
    rerun(job, D[3], spark=spark)  # a re-run rewrites the same late rows
    assert len(_kept(spark, job)) == 2


def test_a_b_row_arriving_after_its_a_row_was_matched_by_another_b_row_is_too_late(
    spark: SparkSession, late_job: tuple[JobConfig, list[RunRecord]]
) -> None:
    job, _ = late_job
    assert (2, 21, 1, JoinType.B_LATE) in rows(spark, job)  # the first parcel matched within the wait
    assert (2, 22, 3, JoinType.NOT_MATCHED) in rows(spark, job)  # the second one pairs with nothing
    assert (2, D[0], 22, D[3], 1) in _kept(spark, job)  # one unit after A row 2's window closed (day 2)


def test_the_late_rows_table_is_created_empty_with_its_columns_together_with_the_target(
    spark: SparkSession, tmp_path: Path
) -> None:
    write(spark, tmp_path, [(1, 10.0, D[0]), (2, 20.0, D[1])], [(1, 11, D[0]), (2, 21, D[1])])
    job = make_job(tmp_path, join={"look_back_time": 0}, target={"late_rows": str(tmp_path / "late")})
    assert [r.record.rows_too_late for r in run(job, spark=spark).windows] == [0, 0]  # no B row came too late
    assert DeltaTable.isDeltaTable(spark, str(tmp_path / "late"))
    late = DeltaTable.forPath(spark, str(tmp_path / "late"))
    columns = {field.name: field.dataType.simpleString() for field in late.toDF().schema.fields}
    assert columns == {"TrxId": "bigint", "RecDate_A": "date", "SepaId": "bigint", "RecDate_B": "date",
                       "RecDate": "date", "TooLateBy": "int"}  # fmt: skip
    assert late.toDF().count() == 0
    assert late.detail().first()["partitionColumns"] == ["RecDate"]


def test_a_job_whose_target_exists_without_its_late_rows_table_still_runs_and_keeps_its_too_late_rows(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A job of an earlier release: its target exists, its late_rows table does not (no B row came too late yet)."""
    write(spark, tmp_path, [(1, 10.0, D[0]), (8, 80.0, D[3])], [(1, 11, D[3])])  # A 1 times out on day 2
    job = make_job(tmp_path, join={"look_back_time": 0}, target={"late_rows": str(tmp_path / "late")})
    run(job, until=D[1], spark=spark)
    shutil.rmtree(tmp_path / "late")
    assert [r.record.rows_too_late for r in run(job, spark=spark).windows] == [0, 1]
    assert _kept(spark, job) == [(1, D[0], 11, D[3], 1)]


def test_a_window_labels_its_spark_jobs_the_too_late_search_its_own_and_gives_the_caller_its_label_back(
    spark: SparkSession, late_job: tuple[JobConfig, list[RunRecord]]
) -> None:
    job, _ = late_job
    context, groups = spark.sparkContext, ("deltainc", "deltainc-too-late")
    tracker = context.statusTracker()
    before = {group: set(tracker.getJobIdsForGroup(group)) for group in (*groups, None)}
    context.setJobGroup("caller", "the caller's own jobs")
    try:
        rerun(job, D[3], spark=spark)  # its window searches for too-late rows
        assert context.getLocalProperty("spark.jobGroup.id") == "caller"
    finally:
        for key in ("spark.jobGroup.id", "spark.job.description"):
            context.setLocalProperty(key, None)  # type: ignore[arg-type]  # None removes it
    for group in groups:
        assert set(tracker.getJobIdsForGroup(group)) - before[group], f"no Spark job of the rerun in group {group}"
    # The window's commit runs in a thread of its own: its jobs are labelled as the window's too.
    # (Spark's status store forgets its oldest jobs past spark.ui.retainedJobs: only new ones count.)
    assert not set(tracker.getJobIdsForGroup(None)) - before[None], "a Spark job of the rerun ran without a label"


def _corrected(spark: SparkSession, root: Path, corrections: str) -> tuple[JobConfig, list[tuple[Any, ...]]]:
    """A left job run through day 3, then a backdated B row (day 1) for A row 1, which had timed out."""
    write(spark, root, [(1, 10.0, D[0]), (2, 20.0, D[0]), (8, 80.0, D[3])], [(2, 21, D[0]), (9, 99, D[3])])
    job = make_job(root, how="left", max_window=0, join={"max_waiting_time": 1, "look_back_time": 0},
                   target={"corrections": corrections})  # fmt: skip
    run(job, spark=spark)
    before = rows(spark, job)
    assert (1, None, 1, JoinType.A_TIMED_OUT) in before
    frame(spark, [(1, 11, D[1])], B_SCHEMA).write.format("delta").mode("append").save(str(root / "b"))
    assert run(job, spark=spark).nothing_pending  # a forward run keeps timed out final
    return job, before


def test_a_rerun_applies_a_backdated_correction_so_the_target_equals_a_reload(
    spark: SparkSession, tmp_path: Path
) -> None:
    job, _ = _corrected(spark, tmp_path, "apply")
    result = rerun(job, D[1], spark=spark)
    report = result.windows[0]
    assert (str(report.window), report.record.rows_inserted, report.record.rows_deleted) == (f"{D[1]}..{D[3]}", 1, 1)
    assert (1, 11, 1, JoinType.B_LATE) in rows(spark, job)
    same_rows(target(spark, job), engine_output(spark, job, D[3]))


def test_with_corrections_keep_a_rerun_keeps_the_timed_out_row_and_reports_the_match_too_late(
    spark: SparkSession, tmp_path: Path
) -> None:
    job, before = _corrected(spark, tmp_path, "keep")
    report = rerun(job, D[1], spark=spark).windows[0].record
    assert rows(spark, job) == before
    assert (report.rows_inserted, report.rows_deleted, report.rows_too_late) == (0, 0, 1)


def _too_late_pairs(spark: SparkSession, job: JobConfig, last: dt.date) -> tuple[set[tuple[Any, ...]], int]:
    """The too-late rows (docs/design.md#the-b-side-and-too-late-rows), by brute force on the complete sources:
    (TrxId, A day, SepaId, B day) of each B row up to `last` that arrived after its A row's sliding join window
    closed, within the horizon, whether that A row timed out or was matched by other B rows; and how many of
    them are of a matched A row (second parcels)."""
    lb, mw, horizon = job.join.look_back_time, job.join.max_waiting_time, job.join.horizon
    a = [(r.TrxId, r.RecDate) for r in spark.read.format("delta").load(job.source_a.path).collect() if r.RecDate]
    b = [(r.TrxId, r.SepaId, r.RecDate) for r in spark.read.format("delta").load(job.source_b.path).collect()]
    b = [row for row in b if row[2] is not None]
    pairs, of_matched = set(), 0
    for key, a_day in a:
        matched = any(k == key and -lb <= (day - a_day).days <= mw for k, _sepa, day in b)
        for k, sepa, day in b:
            if k == key and day <= last and mw < (day - a_day).days <= horizon:
                pairs.add((key, a_day, sepa, day))
                of_matched += matched
    return pairs, of_matched


def test_too_late_b_rows_are_those_of_the_definition_whatever_the_window_size(
    spark: SparkSession, tmp_path: Path
) -> None:
    spec = SampleSpec(start=START, days=10, rows_per_day=12, seed=11, p_no_b=0.1, p_two_b=0.2)
    write_sources(spark, spec, str(tmp_path / "a"), str(tmp_path / "b"))
    last = START + dt.timedelta(days=9)
    settings = {"look_back_time": 0, "max_waiting_time": 1, "late_horizon": 6}
    daily = make_job(tmp_path, "daily", "left", max_window=2, join=settings,
                     target={"late_rows": str(tmp_path / "late_d")})  # fmt: skip
    once = make_job(tmp_path, "once", "left", max_window=0, join=settings,
                    target={"late_rows": str(tmp_path / "late_o")})  # fmt: skip
    # One day a window: the search reads the target and B through their Delta logs (too_late_from_logs).
    single = make_job(tmp_path, "single", "left", max_window=1, join=settings,
                      target={"late_rows": str(tmp_path / "late_s")})  # fmt: skip
    expected, second_parcels = _too_late_pairs(spark, daily, last)
    assert len(expected) >= 3 and second_parcels >= 1  # the data has too-late rows of both kinds to find
    for job, late in ((daily, "late_d"), (once, "late_o"), (single, "late_s")):
        reports = run(job, spark=spark).windows
        assert sum(r.record.rows_too_late or 0 for r in reports) == len(expected)
        kept = spark.read.format("delta").load(str(tmp_path / late)).collect()
        assert {(r.TrxId, r.RecDate_A, r.SepaId, r.RecDate_B) for r in kept} == expected
