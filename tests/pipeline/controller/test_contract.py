"""The pipeline's contract (docs/design.md#the-contract) on real Delta tables: any schedule gives the engine's
output."""

from __future__ import annotations

import datetime as dt
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from delta.tables import DeltaTable
from expected import engine_output, same_rows
from frames import frame
from pyspark.sql import DataFrame, SparkSession

from deltainc import AmbiguousRowsError, JobLockedError, JoinType
from deltainc.demo.sample_data import SampleSpec, write_sources
from deltainc.pipeline.controller.commands import backfill, rerun, run
from deltainc.pipeline.controller.migrate import Migration, migrate
from deltainc.pipeline.inspect.status import status
from deltainc.pipeline.inspect.validate import validate_job
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.state.lock import acquire
from deltainc.pipeline.state.model import RunRecord
from deltainc.pipeline.state.store import ensure_state_tables, state_paths
from deltainc.pipeline.state.window_row import SettingsChangedError
from deltainc.settings import Settings

pytestmark = pytest.mark.spark

START = dt.date(2025, 3, 27)  # the history crosses a month boundary
DAYS = 8
LAST = START + dt.timedelta(days=DAYS - 1)
SPEC = SampleSpec(
    start=START, days=DAYS, rows_per_day=6, seed=11, p_no_b=0.15, p_orphan_b=0.2, p_two_b=0.15, p_corrected=0.1
)


@pytest.fixture(scope="module")
def generated(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("generated")
    path_a, path_b = str(root / "a"), str(root / "b")
    write_sources(spark, SPEC, path_a, path_b)
    return path_a, path_b


SMALL_LAST = START + dt.timedelta(days=2)


@pytest.fixture(scope="module")
def small(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """Three days of rows written inline, for the rules of a run's start and end that need no history (one window
    over them is one run): an A row a day, the first matched on its day, the second a day late, the third waiting."""
    root = tmp_path_factory.mktemp("small")
    path_a, path_b = str(root / "a"), str(root / "b")
    days = [START + dt.timedelta(days=i) for i in range(3)]
    frame(spark, [(1, days[0]), (2, days[1]), (3, days[2])], "TrxId long, RecDate date").write.format("delta").save(
        path_a
    )
    b_rows = [(1, 11, days[0]), (2, 12, days[2])]
    frame(spark, b_rows, "TrxId long, SepaId long, RecDate date").write.format("delta").save(path_b)
    return path_a, path_b


def make_job(root: Path, path_a: str, path_b: str, name: str = "trx", **overrides: Any) -> JobConfig:
    config: dict[str, Any] = {
        "name": name,
        "start_date": START,
        "max_window": 0,
        "source_a": {"path": path_a},
        "source_b": {"path": path_b},
        "join": {
            "how": "left",
            "join_cols": ["TrxId"],
            "look_back_time": 2,
            "max_waiting_time": 4,
            "include_waiting": True,
        },
        "target": {"path": str(root / f"target_{name}"), "keys": ["TrxId"], "b_keys": ["SepaId"]},
        "state": {"path": str(root / "state")},
    }
    for key, value in overrides.items():
        if isinstance(value, dict):
            config[key] = {**config[key], **value}
        else:
            config[key] = value
    return JobConfig.model_validate(config)


def target(spark: SparkSession, job: JobConfig) -> DataFrame:
    return spark.read.format("delta").load(job.target.path)


def fails_before_writing(spark: SparkSession, job: JobConfig, error: type[Exception], match: str) -> None:
    """Run `job`: it raises `error` (matching `match`) before its first write, so no target table exists."""
    with pytest.raises(error, match=match):
        run(job, spark=spark)
    assert not DeltaTable.isDeltaTable(spark, job.target.path)


@dataclass(frozen=True)
class Schedules:
    """One history processed under four schedules (daily, windows of three days, one run, calendar months), and
    in windows of three days into a target of the earlier layout: five jobs, each with a target of its own, in one
    state; the window lists are the schedules' results."""

    jobs: dict[str, JobConfig]
    windows: dict[str, list[str]]
    watermark: str | None


@pytest.fixture(scope="module")
def schedules(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, generated: tuple[str, str]) -> Schedules:
    """The history processed once per Spark session under every schedule; the tests below only read the targets,
    or re-run windows that must leave them unchanged (and say so)."""
    root = tmp_path_factory.mktemp("schedules")
    jobs = {
        name: make_job(root, *generated, name=name, max_window=size)
        for name, size in (("daily", 1), ("three", 3), ("once", 0), ("monthly", 0))
    }
    # The layout of earlier versions (open rows with the final ones, found by JoinType), in windows of three days.
    jobs["three_by_recdate"] = make_job(root, *generated, name="three_by_recdate", max_window=3,
                                        target={"partition_by": ["RecDate"]})  # fmt: skip
    results = {name: run(jobs[name], spark=spark) for name in ("daily", "three", "once", "three_by_recdate")}
    results["monthly"] = backfill(jobs["monthly"], START, LAST, chunk="month", spark=spark)
    windows = {name: [str(w.window) for w in result.windows] for name, result in results.items()}
    return Schedules(jobs, windows, results["daily"].watermark)


@pytest.mark.smoke
@pytest.mark.windows
def test_daily_monthly_and_one_run_give_the_engine_output(spark: SparkSession, schedules: Schedules) -> None:
    assert len(schedules.windows["daily"]) == DAYS and schedules.watermark == LAST.isoformat()
    assert len(schedules.windows["three"]) == 3
    assert len(schedules.windows["once"]) == 1
    assert schedules.windows["monthly"] == ["2025-03-27..2025-03-31", "2025-04-01..2025-04-03"]
    expected = engine_output(spark, schedules.jobs["daily"], LAST)
    kinds = {r.JoinType for r in expected.select("JoinType").distinct().collect()}
    assert {JoinType.SAME_TIME, JoinType.A_LATE, JoinType.B_LATE, JoinType.A_TIMED_OUT, JoinType.A_WAITING} <= kinds
    for job in schedules.jobs.values():
        same_rows(target(spark, job), expected)


@pytest.mark.smoke
@pytest.mark.windows
def test_rerun_of_any_processed_window_leaves_target_and_watermark_unchanged(
    spark: SparkSession, schedules: Schedules
) -> None:
    for name in ("three", "three_by_recdate"):  # processed in windows of three days, in either layout
        reruns_change_nothing(spark, schedules.jobs[name])


def reruns_change_nothing(spark: SparkSession, job: JobConfig) -> None:
    before = target(spark, job).collect()
    version = DeltaTable.forPath(spark, job.target.path).history(1).first()["version"]
    for start, end in (
        (START + dt.timedelta(days=2), None),
        (START + dt.timedelta(days=5), LAST - dt.timedelta(days=1)),
        (START, LAST),
    ):
        result = rerun(job, start, end, spark=spark)
        assert result.watermark == LAST.isoformat()
        logged = result.windows[0].record
        assert logged.rows_inserted == logged.rows_updated == logged.rows_deleted == 0
    assert sorted(target(spark, job).collect()) == sorted(before)
    assert DeltaTable.forPath(spark, job.target.path).history(1).first()["version"] == version


@pytest.mark.parametrize(
    ("step", "partition_by", "window"),
    [
        ("read", None, 2),
        ("written", None, 2),
        ("watermark", None, 2),
        ("written", ["RecDate"], 2),
        ("written", None, 1),
    ],
    ids=["read", "written", "watermark", "written-earlier-layout", "written-first-window"],
)
@pytest.mark.windows
def test_a_run_that_fails_at_any_step_and_is_run_again_gives_the_uninterrupted_result(
    spark: SparkSession,
    tmp_path: Path,
    generated: tuple[str, str],
    step: str,
    partition_by: list[str] | None,
    window: int,
) -> None:
    job = make_job(tmp_path, *generated, max_window=4, target={"partition_by": partition_by})
    calls: list[str] = []

    def crash(name: str) -> None:
        calls.append(name)
        # fail in that window; in the first, "written" is after the commit that created the target with its rows
        if name == step and calls.count(name) == window:
            raise RuntimeError(f"injected failure at {name}")

    with pytest.raises(RuntimeError, match="injected failure"):
        run(job, spark=spark, on_step=crash)
    result = run(job, spark=spark)
    assert result.watermark == LAST.isoformat()
    same_rows(target(spark, job), engine_output(spark, job, LAST))
    log = spark.read.format("delta").load(f"{job.state.path}/runs").where("status = 'failed'").collect()
    assert [r.error for r in log] == [f"RuntimeError: injected failure at {step}"]


@pytest.mark.windows
def test_waiting_rows_move_forward_and_resolve_never_back(spark: SparkSession, tmp_path: Path) -> None:
    d = [START + dt.timedelta(days=i) for i in range(8)]
    # Key 8 on day 7 only makes day 7 available in A as well (the latest RecDate present in both sources).
    a = frame(spark, [(1, d[0]), (2, d[0]), (8, d[7])], "TrxId long, RecDate date")
    b = frame(spark, [(1, 11, d[2]), (9, 99, d[7])], "TrxId long, SepaId long, RecDate date")
    a.write.format("delta").save(str(tmp_path / "a"))
    b.write.format("delta").save(str(tmp_path / "b"))
    job = make_job(
        tmp_path,
        str(tmp_path / "a"),
        str(tmp_path / "b"),
        max_window=1,
        join={"look_back_time": 0, "max_waiting_time": 3},
    )

    def states() -> list[tuple[int, int, int | None, int]]:
        return sorted(
            (r.TrxId, (r.RecDate - START).days, r.WaitingTime, r.JoinType)
            for r in target(spark, job).where("TrxId < 8").collect()
        )

    run(job, until=d[1], spark=spark)
    assert states() == [(1, 1, 1, JoinType.A_WAITING), (2, 1, 1, JoinType.A_WAITING)]
    run(job, until=d[2], spark=spark)
    assert states() == [(1, 2, None, JoinType.B_LATE), (2, 2, 2, JoinType.A_WAITING)]
    run(job, until=d[4], spark=spark)
    final = [(1, 2, None, JoinType.B_LATE), (2, 3, 3, JoinType.A_TIMED_OUT)]
    assert states() == final
    rerun(job, d[0], d[1], spark=spark)  # stale: its waiting rows must not come back
    assert states() == final


@pytest.mark.windows  # a second command that runs the job
def test_nothing_pending_returns_cleanly_and_writes_nothing(
    spark: SparkSession, tmp_path: Path, small: tuple[str, str]
) -> None:
    job = make_job(tmp_path, *small)
    run(job, spark=spark)
    versions = {
        p: DeltaTable.forPath(spark, p).history(1).first()["version"]
        for p in (job.target.path, f"{job.state.path}/runs", f"{job.state.path}/locks")
    }
    result = run(job, spark=spark)
    assert result.nothing_pending and "nothing pending" in result.message
    assert {p: DeltaTable.forPath(spark, p).history(1).first()["version"] for p in versions} == versions


def test_a_jobs_first_window_creates_its_target_with_its_rows_in_one_commit(
    spark: SparkSession, tmp_path: Path, small: tuple[str, str]
) -> None:
    job = make_job(tmp_path, *small)
    record = run(job, spark=spark).windows[0].record
    log = Path(job.target.path or "") / "_delta_log"
    assert sorted(p.name for p in log.glob("*.json")) == [f"{0:020d}.json"]  # one commit, no empty one before it
    actions = commit_actions(Path(job.target.path or ""), 0)
    info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
    assert json.loads(info["userMetadata"])["run_id"] == record.run_id  # a stop finds it as the window's commit
    assert (record.target_write, record.target_version) == ("create", 0)
    assert record.rows_inserted == spark.read.format("delta").load(job.target.path).count() > 0
    assert record.target_files_added == sum(1 for a in actions if "add" in a)


def test_a_locked_job_fails_fast_and_writes_no_target(
    spark: SparkSession, tmp_path: Path, small: tuple[str, str]
) -> None:
    job = make_job(tmp_path, *small)
    paths = state_paths(job.state.path or "")
    ensure_state_tables(paths)
    acquire(paths, job.name, "other-run", 120)
    fails_before_writing(spark, job, JobLockedError, "job 'trx' is locked by run other-run")


@pytest.mark.windows
def test_two_runs_started_together_do_not_double_write(
    spark: SparkSession, tmp_path: Path, generated: tuple[str, str]
) -> None:
    job = make_job(tmp_path, *generated, max_window=3)
    outcomes: list[str] = []

    def attempt() -> None:
        try:
            outcomes.append(f"ran {len(run(job, spark=spark).windows)}")
        except JobLockedError:
            outcomes.append("locked")
        except Exception as exc:  # recorded, so that the assertion shows it
            outcomes.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=attempt) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(outcomes) == 2 and any(o.startswith("ran") and o != "ran 0" for o in outcomes), outcomes
    rows = target(spark, job)
    assert rows.count() == rows.dropDuplicates().count()
    same_rows(rows, engine_output(spark, job, LAST))


@pytest.mark.windows
def test_a_daily_run_reads_only_the_partitions_inside_the_read_bounds(spark: SparkSession, tmp_path: Path) -> None:
    spec = SampleSpec(start=START, days=60, rows_per_day=3, seed=3)
    write_sources(spark, spec, str(tmp_path / "a"), str(tmp_path / "b"))
    job = make_job(tmp_path, str(tmp_path / "a"), str(tmp_path / "b"))
    last = START + dt.timedelta(days=59)
    run(job, until=last - dt.timedelta(days=1), spark=spark)
    report = run(job, spark=spark).windows[0].record

    def files_between(table: str, first: dt.date, end: dt.date) -> int:
        return sum(
            len(list((tmp_path / table / f"RecDate={first + dt.timedelta(days=i)}").glob("*.parquet")))
            for i in range((end - first).days + 1)
        )

    lb, mw = job.join.look_back_time, job.join.max_waiting_time
    assert report.files_read_a == files_between("a", last - dt.timedelta(days=mw), last)
    assert report.files_read_b == files_between("b", last - dt.timedelta(days=lb + mw), last)
    assert report.files_read_a < files_between("a", START, last) / 5
    logged = spark.read.format("delta").load(f"{job.state.path}/runs").orderBy("started_at").collect()[-1]
    assert (logged.files_read_a, logged.files_read_b) == (report.files_read_a, report.files_read_b)
    assert logged.bytes_read_a > 0 and logged.files_read_target >= 0


def test_two_source_rows_with_one_identity_fail_before_writing(spark: SparkSession, tmp_path: Path) -> None:
    a = frame(spark, [(1, START), (1, START)], "TrxId long, RecDate date")
    b = frame(spark, [(1, 5, START)], "TrxId long, SepaId long, RecDate date")
    a.write.format("delta").save(str(tmp_path / "a"))
    b.write.format("delta").save(str(tmp_path / "b"))
    job = make_job(tmp_path, str(tmp_path / "a"), str(tmp_path / "b"))
    fails_before_writing(
        spark, job, AmbiguousRowsError, rf"TrxId=1, RecDate_A={START}, SepaId=5, RecDate_B={START} \(2 rows\)"
    )
    assert status(job, spark=spark).watermark is None


@pytest.mark.windows
def test_a_first_window_over_several_days_refused_by_its_own_write_creates_neither_the_target_nor_its_late_rows(
    spark: SparkSession, tmp_path: Path
) -> None:
    # The reload's one window is checked by its write's own query (one pass): the refusal comes before the target's
    # first commit, and the too-late rows' table, created with the target, is not created either.
    days = [START + dt.timedelta(days=i) for i in range(3)]
    a_rows = [(1, days[0]), (2, days[1]), (3, days[2]), (3, days[2])]
    frame(spark, a_rows, "TrxId long, RecDate date").write.format("delta").save(str(tmp_path / "a"))
    b_rows = [(1, 5, days[0]), (3, 7, days[2])]
    frame(spark, b_rows, "TrxId long, SepaId long, RecDate date").write.format("delta").save(str(tmp_path / "b"))
    late = tmp_path / "late_rows"
    job = make_job(tmp_path, str(tmp_path / "a"), str(tmp_path / "b"), target={"late_rows": str(late)})
    fails_before_writing(
        spark, job, AmbiguousRowsError, rf"TrxId=3, RecDate_A={days[2]}, SepaId=7, RecDate_B={days[2]} \(2 rows\)"
    )
    assert not Path(job.target.path).exists() and not late.exists()
    assert status(job, spark=spark).watermark is None
    frame(spark, a_rows[:3], "TrxId long, RecDate date").write.format("delta").mode("overwrite").save(
        str(tmp_path / "a")
    )
    assert [report.record.target_write for report in run(job, spark=spark).windows] == ["create"]  # fixed: it runs
    assert target(spark, job).count() == 3 and late.exists()


@pytest.mark.windows
def test_a_catalog_targets_refused_first_window_creates_no_table_and_once_fixed_the_run_creates_it(
    spark: SparkSession, tmp_path: Path
) -> None:
    # A catalog table's first window is counted and checked before its write (saveAsTable reports no observations):
    # nothing of it reaches the metastore, and the fixed run creates the table.
    a_rows = [(1, START), (1, START), (2, START)]
    frame(spark, a_rows, "TrxId long, RecDate date").write.format("delta").save(str(tmp_path / "a"))
    frame(spark, [(1, 5, START)], "TrxId long, SepaId long, RecDate date").write.format("delta").save(
        str(tmp_path / "b")
    )
    name = f"refused_{tmp_path.name.replace('-', '_')}"
    job = make_job(tmp_path, str(tmp_path / "a"), str(tmp_path / "b"), target={"path": None, "table": name})
    with pytest.raises(AmbiguousRowsError, match=r"TrxId=1"):
        run(job, spark=spark)
    assert not spark.catalog.tableExists(name)
    frame(spark, a_rows[1:], "TrxId long, RecDate date").write.format("delta").mode("overwrite").save(
        str(tmp_path / "a")
    )
    created = [report.record for report in run(job, spark=spark).windows]
    assert [(record.target_write, record.target_version) for record in created] == [("create", 0)]
    assert spark.table(name).count() == 2


def test_a_first_window_over_several_days_is_written_in_one_pass_nothing_of_it_cached_when_its_commit_begins(
    spark: SparkSession, tmp_path: Path, generated: tuple[str, str]
) -> None:
    # The output is counted and checked by the query that writes it, and the too-late search reads the target as
    # written: a year's reload computes its join once, not once to check and again to write.
    job = make_job(tmp_path, *generated)
    cached = []

    def at(step: object) -> None:  # the RDDs the session holds as the window starts, and as its commit begins
        if str(step) in ("start", "writing"):
            cached.append(spark.sparkContext._jsc.getPersistentRDDs().size())

    result = run(job, until=LAST, spark=spark, on_step=at)
    assert [report.record.target_write for report in result.windows] == ["create"]
    assert len(cached) == 2 and cached[1] == cached[0]
    same_rows(target(spark, job), engine_output(spark, job, LAST))


@pytest.mark.windows
def test_rows_with_one_identity_in_a_daily_window_fail_its_write_and_nothing_is_committed(
    spark: SparkSession, tmp_path: Path
) -> None:
    # The daily window of an existing target is checked by its write's own query: a duplicate fails that query.
    day2 = START + dt.timedelta(days=1)
    frame(spark, [(1, START)], "TrxId long, RecDate date").write.format("delta").save(str(tmp_path / "a"))
    frame(spark, [(1, 5, START)], "TrxId long, SepaId long, RecDate date").write.format("delta").save(
        str(tmp_path / "b")
    )
    job = make_job(tmp_path, str(tmp_path / "a"), str(tmp_path / "b"), max_window=1)
    run(job, spark=spark)
    version = DeltaTable.forPath(spark, job.target.path).history(1).collect()[0]["version"]
    frame(spark, [(2, day2), (2, day2)], "TrxId long, RecDate date").write.format("delta").mode("append").save(
        str(tmp_path / "a")
    )
    frame(spark, [(2, 7, day2)], "TrxId long, SepaId long, RecDate date").write.format("delta").mode("append").save(
        str(tmp_path / "b")
    )
    with pytest.raises(AmbiguousRowsError, match=rf"TrxId=2, RecDate_A={day2}, SepaId=7, RecDate_B={day2} \(2 rows\)"):
        run(job, spark=spark)
    assert DeltaTable.forPath(spark, job.target.path).history(1).collect()[0]["version"] == version
    assert status(job, spark=spark).watermark == str(START)


def test_without_b_keys_one_a_matching_two_b_rows_of_one_recdate_fails_naming_the_keys(
    spark: SparkSession, tmp_path: Path
) -> None:
    a = frame(spark, [(1, START)], "TrxId long, RecDate date")
    b = frame(spark, [(1, 5, START), (1, 6, START)], "TrxId long, SepaId long, RecDate date")
    a.write.format("delta").save(str(tmp_path / "a"))
    b.write.format("delta").save(str(tmp_path / "b"))
    job = make_job(tmp_path, str(tmp_path / "a"), str(tmp_path / "b"), target={"b_keys": []})
    fails_before_writing(
        spark, job, AmbiguousRowsError, f"TrxId=1, RecDate_A={START}, RecDate_B={START}.*set target.b_keys"
    )


@pytest.mark.windows
def test_each_commit_records_the_job_and_window_in_user_metadata(
    spark: SparkSession, tmp_path: Path, generated: tuple[str, str]
) -> None:
    job = make_job(tmp_path, *generated, max_window=5)
    run(job, spark=spark)
    writes = DeltaTable.forPath(spark, job.target.path).history().where("userMetadata IS NOT NULL").collect()
    windows = sorted(json.loads(m.userMetadata)["window"] for m in writes)
    assert windows == [f"{START}..{START + dt.timedelta(days=4)}", f"{START + dt.timedelta(days=5)}..{LAST}"]
    assert all(json.loads(m.userMetadata)["job"] == "trx" for m in writes)


def commit_actions(table: Path, version: int) -> list[dict[str, Any]]:
    lines = (table / "_delta_log" / f"{version:020d}.json").read_text().splitlines()
    return [json.loads(line) for line in lines]


@dataclass(frozen=True)
class ReloadThenDaily:
    """A default job (no layout settings) reloaded in one run up to the day before the last, then run daily for
    the last day: the daily run's report, and the versions of target, run log and locks before and after it."""

    job: JobConfig
    report: RunRecord
    before: list[int]
    after: list[int]


@pytest.fixture(scope="module")
def reload_then_daily(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, generated: tuple[str, str]
) -> ReloadThenDaily:
    job = make_job(tmp_path_factory.mktemp("reload_then_daily"), *generated)  # no layout settings: the defaults
    run(job, until=LAST - dt.timedelta(days=1), spark=spark)  # a one-shot reload of all but the last day
    tables = (job.target.path, f"{job.state.path}/runs", f"{job.state.path}/locks")

    def versions() -> list[int]:
        return [DeltaTable.forPath(spark, p).history(1).first()["version"] for p in tables]

    before = versions()
    report = run(job, spark=spark).windows[0].record
    return ReloadThenDaily(job, report, before, versions())


def operation_metrics(spark: SparkSession, job: JobConfig, version: int) -> dict[str, int]:
    row = DeltaTable.forPath(spark, job.target.path).history().where(f"version = {version}").first()
    return {name: int(value) for name, value in row["operationMetrics"].items()}


@pytest.mark.windows
def test_a_daily_run_of_a_default_job_replaces_whole_files_of_the_two_slices_and_reads_none(
    spark: SparkSession, reload_then_daily: ReloadThenDaily
) -> None:
    job, report = reload_then_daily.job, reload_then_daily.report
    table = Path(job.target.path or "")
    version = reload_then_daily.after[0]
    actions = commit_actions(table, version)
    watermark = LAST - dt.timedelta(days=1)
    removed = {(a["remove"]["partitionValues"]["RecDate"], a["remove"]["partitionValues"]["IsFinal"])
               for a in actions if "remove" in a}  # fmt: skip
    added = {a["add"]["partitionValues"]["RecDate"] for a in actions if "add" in a}
    assert removed == {(watermark.isoformat(), "false")}  # the open rows at w: their partition, whole
    assert added == {LAST.isoformat()}  # the window's rows, final and open
    assert not any(a["add"].get("deletionVector") for a in actions if "add" in a)
    open_files = len(list((table / f"RecDate={watermark}" / "IsFinal=false").glob("*.parquet")))
    metrics = operation_metrics(spark, job, version)
    assert metrics["numCopiedRows"] == metrics.get("numDeletionVectorsAdded", 0) == 0
    assert metrics["numRemovedFiles"] == open_files > 0
    logged = (report.target_rows_copied, report.target_deletion_vectors, report.target_files_removed)
    assert logged == (0, 0, metrics["numRemovedFiles"])
    assert report.target_files_added == metrics["numFiles"] and report.files_read_target == 0
    same_rows(target(spark, job), engine_output(spark, job, LAST))


@pytest.mark.windows
def test_final_rows_are_read_with_a_partition_filter_on_is_final(
    spark: SparkSession, reload_then_daily: ReloadThenDaily
) -> None:
    rows = target(spark, reload_then_daily.job)
    assert {f.name: f.dataType.simpleString() for f in rows.schema.fields}["IsFinal"] == "boolean"
    final = rows.where("IsFinal")
    assert all(path.split("/")[-2] == "IsFinal=true" for path in final.inputFiles())
    assert {r.JoinType for r in final.select("JoinType").distinct().collect()} <= {1, 2, 3, 4}
    assert {r.JoinType for r in rows.where("NOT IsFinal").select("JoinType").distinct().collect()} == {5}


@dataclass(frozen=True)
class OldLayout:
    """A target built in the layout of earlier versions (partitioned by RecDate alone), run daily by the default
    job (its layout read from the table): the report of that day, then `migrate`, then the last day's report."""

    job: JobConfig
    old_day: RunRecord
    migrated: Migration
    new_day: RunRecord
    validated: dict[str, tuple[str, ...]]  # validate's warnings before `migrate`: the job as is, with late_rows


@pytest.fixture(scope="module")
def old_layout(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, generated: tuple[str, str]) -> OldLayout:
    root = tmp_path_factory.mktemp("old_layout")
    run(make_job(root, *generated, target={"partition_by": ["RecDate"]}), until=LAST - dt.timedelta(days=2),
        spark=spark)  # fmt: skip
    job = make_job(root, *generated)  # the default layout, which the existing table does not have
    old_day = run(job, until=LAST - dt.timedelta(days=1), spark=spark).windows[0].record
    keeping_late_rows = make_job(root, *generated, target={"late_rows": str(root / "late")})
    validated = {"job": validate_job(job, spark=spark).warnings,
                 "late_rows": validate_job(keeping_late_rows, spark=spark).warnings}  # fmt: skip
    migrated = migrate(job, spark=spark)
    new_day = run(job, spark=spark).windows[0].record
    return OldLayout(job, old_day, migrated, new_day, validated)


@pytest.mark.windows
def test_validate_s_upgrade_warning_names_the_job_s_migrate_and_that_it_recomputes_too_late_rows(
    old_layout: OldLayout,
) -> None:
    name = old_layout.job.name
    [upgrade] = [w for w in old_layout.validated["job"] if "migrate" in w]
    assert f"`deltainc migrate {name}` rewrites it into the current layout" in upgrade and "rerun" not in upgrade
    layout, late = sorted((w for w in old_layout.validated["late_rows"] if "migrate" in w), key=lambda w: "late" in w)
    assert f"`deltainc migrate {name}` rewrites it into the current layout" in layout
    assert late.startswith("target.late_rows:") and f"`deltainc migrate {name}` also recomputes them" in late


@pytest.mark.windows
def test_a_target_of_the_earlier_layout_keeps_its_deletion_vector_path_and_logs_delta_s_metrics(
    spark: SparkSession, old_layout: OldLayout
) -> None:
    job, report = old_layout.job, old_layout.old_day
    actions = commit_actions(Path(job.target.path or ""), report.target_version or 0)
    with_vector = [a["add"]["path"] for a in actions if "add" in a and a["add"].get("deletionVector")]
    metrics = operation_metrics(spark, job, report.target_version or 0)
    assert report.target_deletion_vectors == len(with_vector) > 0
    assert report.target_rows_copied == metrics["numCopiedRows"]
    assert (report.target_files_added, report.target_files_removed) == (metrics["numFiles"], metrics["numRemovedFiles"])
    assert report.rows_deleted == metrics["numDeletedRows"] > 0


@pytest.mark.windows
def test_migrate_rewrites_a_target_of_the_earlier_layout_in_one_commit_and_its_rows_stay(
    spark: SparkSession, old_layout: OldLayout
) -> None:
    job, migrated = old_layout.job, old_layout.migrated
    assert (migrated.before, migrated.after) == (("RecDate",), ("RecDate", "IsFinal"))
    history = DeltaTable.forPath(spark, job.target.path).history().orderBy("version").collect()
    migrating = [h for h in history if h.userMetadata and json.loads(h.userMetadata)["command"] == "migrate"]
    [commit] = [h for h in migrating if h.operation == "WRITE"]  # then the unused deletion vectors' drop
    assert commit.version == migrated.version == old_layout.old_day.target_version + 1
    assert DeltaTable.forPath(spark, job.target.path).detail().first()["partitionColumns"] == ["RecDate", "IsFinal"]
    at = {
        v: spark.read.format("delta").option("versionAsOf", v).load(job.target.path)
        for v in (commit.version - 1, commit.version)
    }
    same_rows(at[commit.version].drop("IsFinal"), at[commit.version - 1])
    assert old_layout.new_day.target_deletion_vectors == old_layout.new_day.target_rows_copied == 0
    assert old_layout.new_day.files_read_target == 0
    same_rows(target(spark, job), engine_output(spark, job, LAST))
    assert migrate(job, spark=spark).version is None  # already migrated: nothing written


@pytest.mark.windows
def test_a_daily_run_costs_one_commit_each_of_lock_target_and_run_log(
    spark: SparkSession, reload_then_daily: ReloadThenDaily
) -> None:
    job, before, after = reload_then_daily.job, reload_then_daily.before, reload_then_daily.after
    assert [new - was for new, was in zip(after, before, strict=True)] == [1, 1, 1]  # target, run log, locks
    assert status(job, spark=spark).watermark == LAST.isoformat()
    assert run(job, spark=spark).nothing_pending  # the lock was released by the run-log row


@pytest.mark.windows
def test_the_forward_write_as_one_merge_gives_the_same_target(
    spark: SparkSession, tmp_path: Path, generated: tuple[str, str]
) -> None:
    job = make_job(tmp_path, *generated, max_window=3, target={"forward_write": "merge"})
    reports = run(job, spark=spark).windows
    assert [r.record.target_write for r in reports] == ["create"] + ["merge"] * (len(reports) - 1)
    history = DeltaTable.forPath(spark, job.target.path).history().where("version > 0")  # after the first window's
    assert {r.operation for r in history.collect()} == {"MERGE"}
    same_rows(target(spark, job), engine_output(spark, job, LAST))


@pytest.mark.windows
def test_without_the_sliding_join_window_a_forward_run_uses_the_forward_only_merge(
    spark: SparkSession, tmp_path: Path, generated: tuple[str, str]
) -> None:
    job = make_job(tmp_path, *generated, max_window=4, join={"enforce_sliding_join_window": False})
    writes = [r.record.target_write for r in run(job, spark=spark).windows]
    assert writes == ["create"] + ["forward_only_merge"] * (len(writes) - 1)  # the first window creates the target


@pytest.mark.windows
def test_status_reports_watermark_the_whole_pending_range_its_windows_and_runs(
    spark: SparkSession, tmp_path: Path, generated: tuple[str, str]
) -> None:
    job = make_job(tmp_path, *generated, max_window=3)
    before = status(job, spark=spark)
    assert before.watermark is None and before.pending is not None
    assert (str(before.pending.whole), before.pending.windows, str(before.pending.next)) == (
        f"{START}..{LAST}",
        3,  # 8 days in windows of 3
        f"{START}..{START + dt.timedelta(days=2)}",
    )
    run(job, until=START + dt.timedelta(days=3), spark=spark)
    after = status(job, spark=spark)
    assert after.watermark == str(START + dt.timedelta(days=3))
    assert after.pending is not None and str(after.pending.whole) == f"{START + dt.timedelta(days=4)}..{LAST}"
    assert [r["status"] for r in after.runs] == ["succeeded", "succeeded"]
    assert all(r["started_at"].tzinfo is not None for r in after.runs)  # timestamps carry their zone


def test_status_of_a_job_whose_source_is_missing_names_the_problem_and_still_shows_its_state(
    spark: SparkSession, tmp_path: Path, small: tuple[str, str]
) -> None:
    job = make_job(tmp_path, *small)
    run(job, spark=spark)
    gone = make_job(tmp_path, str(tmp_path / "no_such_a"), small[1])
    shown = status(gone, spark=spark)
    assert shown.problem == f"source_a: no Delta table at path {tmp_path / 'no_such_a'}"
    assert (shown.watermark, shown.pending, len(shown.runs)) == (SMALL_LAST.isoformat(), None, 1)


@pytest.mark.windows  # a second command that runs the job
def test_a_changed_setting_is_refused_naming_old_and_new_value_and_nothing_is_written(
    spark: SparkSession, tmp_path: Path, small: tuple[str, str]
) -> None:
    job = make_job(tmp_path, *small)
    run(job, until=SMALL_LAST - dt.timedelta(days=1), spark=spark)
    versions = {
        p: DeltaTable.forPath(spark, p).history(1).first()["version"]
        for p in (job.target.path, f"{job.state.path}/runs", f"{job.state.path}/locks")
    }
    changed = make_job(tmp_path, *small, join={"max_waiting_time": 2}, start_date=START + dt.timedelta(days=1))
    for attempt in (
        lambda: run(changed, spark=spark),
        lambda: rerun(changed, START + dt.timedelta(days=1), spark=spark),  # a processed day
        lambda: backfill(changed, SMALL_LAST, SMALL_LAST, spark=spark),
    ):
        with pytest.raises(SettingsChangedError) as refused:
            attempt()
        message = str(refused.value)
        assert f"start_date: '{START}' -> '{START + dt.timedelta(days=1)}'" in message
        assert "join.max_waiting_time: 4 -> 2" in message and "--rebuild" in message
        assert {c.setting for c in refused.value.changed} == {"start_date", "join.max_waiting_time"}
    assert {p: DeltaTable.forPath(spark, p).history(1).first()["version"] for p in versions} == versions
    assert status(changed, spark=spark).changed_settings == refused.value.changed


@pytest.mark.windows
def test_a_rebuild_recomputes_the_target_under_the_new_settings_in_one_commit_and_runs_go_on(
    spark: SparkSession, tmp_path: Path, generated: tuple[str, str]
) -> None:
    job = make_job(tmp_path, *generated)
    run(job, until=LAST - dt.timedelta(days=1), spark=spark)
    # Rows waiting 3 days under max_waiting_time 4 must time out under 2: only a rebuild makes them do so.
    changed = make_job(tmp_path, *generated, max_window=1, join={"max_waiting_time": 2})
    version = DeltaTable.forPath(spark, job.target.path).history(1).first()["version"]
    result = run(changed, rebuild=True, spark=spark)
    assert [str(w.window) for w in result.windows] == [f"{START}..{LAST}"]
    assert result.watermark == LAST.isoformat() and result.windows[0].record.target_write == "rebuild"
    assert DeltaTable.forPath(spark, job.target.path).history(1).first()["version"] == version + 1
    same_rows(target(spark, changed), engine_output(spark, changed, LAST))
    assert run(changed, spark=spark).nothing_pending  # the new settings are now the remembered ones
    with pytest.raises(SettingsChangedError, match="join.max_waiting_time: 2 -> 4"):
        run(job, spark=spark)


def test_nothing_pending_names_a_start_date_after_the_sources_latest_recdate(
    spark: SparkSession, tmp_path: Path, small: tuple[str, str]
) -> None:
    job = make_job(tmp_path, *small, start_date=SMALL_LAST + dt.timedelta(days=5))
    result = run(job, spark=spark)
    assert result.nothing_pending
    assert result.message == (
        f"nothing pending for trx: start_date {SMALL_LAST + dt.timedelta(days=5)} is after the latest RecDate in "
        f"both sources {SMALL_LAST}"
    )


def test_settings_state_dir_is_the_default_state_location(
    spark: SparkSession, tmp_path: Path, small: tuple[str, str]
) -> None:
    job = make_job(tmp_path, *small, state={"path": None})
    settings = Settings(state_dir=tmp_path / "global_state")
    run(job, spark=spark, settings=settings)
    assert DeltaTable.isDeltaTable(spark, str(tmp_path / "global_state" / "runs"))
