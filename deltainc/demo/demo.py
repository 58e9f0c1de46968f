"""The end-to-end demo: a month of ledger and payment-engine loads, joined day by day into a Delta target.

`run_demo` plays a job's adoption and its daily schedule on generated data (`deltainc.demo.sample_data`): the
history before the last `daily` days is loaded at once and caught up in one window (`backfill`), then every day it
appends that day's partitions of A (ledger transactions) and B (payment-engine records) and runs the job with
`max_window = 1`, so the target grows exactly as it would in production. It then shows the two promises of
docs/design.md#invariants on the result: re-running a processed day leaves the target's rows unchanged, and
reloading every day in one run into a second target gives the same rows as the catch-up and the daily runs.
"""

from __future__ import annotations

import datetime as dt
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deltainc import pipeline
from deltainc.demo.demo_features import risk_scores, run_features
from deltainc.demo.demo_result import ChainResult, DemoDay, DemoResult, day_counts, same_rows, schedule_table
from deltainc.demo.jobs import DEMO_START, LOOK_BACK_TIME, MAX_WAITING_TIME, demo_job, scored_job
from deltainc.demo.sample_data import SampleSpec, generate
from deltainc.errors import ConfigError
from deltainc.join.options import JoinType
from deltainc.pipeline.delta.sources import latest_commit
from deltainc.pipeline.delta.sql import path_ref
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.report import write_report
from deltainc.settings import load_settings

__all__ = ["run_demo"]

DAILY_DAYS = 10  # the last days, loaded and run one at a time; the days before them are the history, caught up at once
_MARKER = ".deltainc-demo"  # marks a folder as the demo's own, so that a re-run may empty it


def _start_clean(root: Path) -> None:
    """Empty `root` when it is the demo's own folder (or empty); refuse to wipe anything else."""
    if root.exists():
        if not root.is_dir():
            raise ConfigError(f"demo root: {root} exists and is not a folder")
        if any(root.iterdir()) and not (root / _MARKER).exists():
            raise ConfigError(
                f"demo root: {root} is not empty and was not made by the demo ({_MARKER} missing); "
                "choose an empty or new folder"
            )
        shutil.rmtree(root)
    root.mkdir(parents=True)
    (root / _MARKER).write_text("made by `deltainc demo`; its contents are removed on the next demo run\n")


def _counts(frame: DataFrame, column: str) -> dict[Any, int]:
    """`frame`'s rows counted by the values of `column` (one Spark job)."""
    return {row[column]: int(row["count"]) for row in frame.groupBy(column).count().collect()}


def _append(frame: DataFrame, first: dt.date, last: dt.date, path: Path) -> None:
    """Append days [first, last] of `frame`, one file a day."""
    (
        frame.where(F.col("RecDate").between(F.lit(first), F.lit(last)))
        .coalesce(1)
        .write.format("delta")
        .mode("append")
        .partitionBy("RecDate")
        .save(str(path))
    )


def _day(spec: SampleSpec, offset: int) -> dt.date:
    return spec.start + dt.timedelta(days=offset)


def _chain(
    root: Path, spark: SparkSession, daily: JobConfig, reload: JobConfig, echo: Callable[[str], None]
) -> ChainResult:
    """The chain's second job (`scored_job`), run after each day above, against the same job on the reload's
    target run once: a chain reloaded equals the chain run day by day."""
    pipeline.run(reload, spark=spark)
    rows = spark.read.format("delta").load(str(root / f"target_{daily.name}"))
    equal = same_rows(rows, spark.read.format("delta").load(str(root / f"target_{reload.name}")))
    result = ChainResult(rows.count(), equal)
    echo(
        f"A chain of two jobs: {daily.name} reads demo_daily's final matched payments (a row reaches it the day it "
        f"became final) and adds the account's risk score as of the transaction; run after each day above, it "
        f"holds {result.rows} rows. Reloaded in one run from the reload's target: equal: {'yes' if equal else 'NO'}"
    )
    return result


def run_demo(
    root: Path,
    spark: SparkSession,
    days: int = 30,
    rows_per_day: int = 200,
    echo: Callable[[str], None] = print,
    daily: int = DAILY_DAYS,
) -> DemoResult:
    """Load `days` days of sample data under `root`: the days before the last `daily` at once, caught up in one run,
    then the last `daily` days one day at a time, each joined after its load; then check re-run and reload.

    `root` is emptied first (only if it is empty or was made by an earlier demo). Under it: `ledger` (A) and
    `payments` (B), Delta tables partitioned by RecDate; `target_demo_daily` (the daily job's target),
    `target_demo_reload` (the one-shot reload's target) and `_deltainc` (watermarks, run log, locks).
    """
    clock = time.monotonic()
    root = Path(root).absolute()
    spec = SampleSpec(start=DEMO_START, days=days, rows_per_day=rows_per_day)
    _start_clean(root)
    daily_job, reload = demo_job(root, "demo_daily", 1), demo_job(root, "demo_reload", 0)
    scored, scored_reload = scored_job(root, "demo_scored", daily_job), scored_job(root, "demo_scored_reload", reload)
    echo(
        f"deltainc demo: {days} days x {rows_per_day} ledger transactions from {spec.start} under {root}\n"
        f"  A = ledger, B = payment engine; full outer join on TrxId, look_back_time {LOOK_BACK_TIME}, "
        f"max_waiting_time {MAX_WAITING_TIME} (days): matched payments, ledger rows waiting for or missing "
        "their payment, and payments the ledger never booked (not_matched; b_waiting while they may still)"
    )
    history = max(days - daily, 0)  # days caught up in one window before the daily runs
    if history > 1:
        echo(
            f"  The first {history} days are the history, loaded at once and caught up in one run (`deltainc "
            f"backfill --chunk all`); then each of the last {days - history} days is loaded and run alone"
        )

    # The risk scores, for the chain's second job and the feature table: every delivery at once, dated by RecDate.
    risk_scores(spark, spec).write.format("delta").partitionBy("RecDate").save(str(root / "risk_scores"))
    source_a, source_b = generate(spark, spec, partitions=2)
    source_a = source_a.persist(StorageLevel.MEMORY_AND_DISK)
    source_b = source_b.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        rows_a, rows_b = _counts(source_a, "RecDate"), _counts(source_b, "RecDate")
        schedule: list[DemoDay] = []
        watermark: str | None = None
        # (first, last day) of each load and run: the history as one span, then one span a day.
        spans = [(spec.start, _day(spec, history - 1))] if history else []
        spans += [(_day(spec, offset), _day(spec, offset)) for offset in range(history, days)]
        for first, day in spans:
            started = time.monotonic()
            _append(source_a, first, day, root / "ledger")
            _append(source_b, first, day, root / "payments")
            loaded = time.monotonic()
            if first < day:
                outcome = pipeline.backfill(daily_job, first, day, chunk="all", spark=spark)
            else:
                outcome = pipeline.run(daily_job, spark=spark)
            ran = time.monotonic()
            chained = pipeline.run(scored, spark=spark)  # the chain's second job, up to demo_daily's watermark
            chain_s = time.monotonic() - ran
            windows, watermark = outcome.windows, outcome.watermark
            span = [first + dt.timedelta(days=i) for i in range((day - first).days + 1)]
            entry = DemoDay(
                day=day,
                first=first if first < day else None,
                rows_a=sum(rows_a.get(d, 0) for d in span),
                rows_b=sum(rows_b.get(d, 0) for d in span),
                windows=tuple(str(w.window) for w in windows),
                counts=day_counts(list(windows)),
                inserted=sum(w.record.rows_inserted for w in windows),
                updated=sum(w.record.rows_updated for w in windows),
                deleted=sum(w.record.rows_deleted for w in windows),
                load_s=loaded - started,
                run_s=ran - loaded,
            )
            schedule.append(entry)
            what = ", ".join(entry.windows) if entry.windows else "nothing pending"
            echo(
                f"  {entry.label}: loaded A {entry.rows_a:>5} / B {entry.rows_b:>5} rows ({entry.load_s:.1f} s); "
                f"run: {what} ({entry.run_s:.1f} s) +{entry.inserted} ~{entry.updated} -{entry.deleted}; "
                f"then {scored.name}: +{sum(w.record.rows_inserted for w in chained.windows)} ({chain_s:.1f} s)"
            )
    finally:
        source_a.unpersist()
        source_b.unpersist()
    echo(schedule_table(tuple(schedule)))

    daily_path = str(root / f"target_{daily_job.name}")
    by_type = _counts(spark.read.format("delta").load(daily_path), "JoinType")
    target_rows = sum(by_type.values())
    echo(
        f"Payments the ledger never booked: {by_type.get(int(JoinType.NOT_MATCHED), 0)} final (not_matched), "
        f"{by_type.get(int(JoinType.B_WAITING), 0)} still waiting for their ledger row (b_waiting)"
    )
    if watermark is None:
        raise ConfigError(f"demo: no day was processed (days={days}, rows_per_day={rows_per_day} is too small)")
    rerun_day = min(spec.start + dt.timedelta(days=days // 2), dt.date.fromisoformat(watermark))
    last = latest_commit(spark, path_ref(daily_path))  # the daily target before the re-run
    version = 0 if last is None else int(last["version"])
    rerun_result = pipeline.rerun(daily_job, rerun_day, spark=spark)
    snapshot = spark.read.format("delta").option("versionAsOf", version).load(daily_path)
    rerun_unchanged = same_rows(spark.read.format("delta").load(daily_path), snapshot)
    changed = rerun_result.windows[0].record
    echo(
        f"Re-run of {rerun_day}: +{changed.rows_inserted} ~{changed.rows_updated} -{changed.rows_deleted} rows; "
        f"all {target_rows} target rows unchanged: {'yes' if rerun_unchanged else 'NO'}"
    )

    started = time.monotonic()
    reloaded = pipeline.run(reload, spark=spark)
    reload_s = time.monotonic() - started
    reload_path = str(root / f"target_{reload.name}")
    reload_equal = same_rows(spark.read.format("delta").load(daily_path), spark.read.format("delta").load(reload_path))
    reloaded_windows = ", ".join(str(w.window) for w in reloaded.windows) or "nothing"
    echo(
        f"One-shot reload of {reloaded_windows} into a second target ({reload_s:.1f} s): "
        f"equal to the daily target: {'yes' if reload_equal else 'NO'}"
    )
    chain = _chain(root, spark, scored, scored_reload, echo)
    features = run_features(root, spark, spec, echo)
    report = write_report(daily_job, load_settings(), root / f"{daily_job.name}-report.html").page
    echo(f"The daily job's history as a page of charts (deltainc report): {report}")
    result = DemoResult(
        root=root,
        days=tuple(schedule),
        target_rows=target_rows,
        rerun_day=rerun_day,
        rerun_unchanged=rerun_unchanged,
        reload_equal=reload_equal,
        reload_s=reload_s,
        total_s=time.monotonic() - clock,
        features=features,
        report=report,
        chain=chain,
    )
    echo(
        f"Done in {result.total_s:.0f} s ({result.seconds_per_day:.1f} s per scheduled day). "
        f"Tables under {root}: ledger, payments, risk_scores, target_{daily_job.name}, target_{reload.name}, "
        f"target_{scored.name}, target_{scored_reload.name}, target_demo_features, target_demo_features_reload, "
        "_deltainc"
    )
    return result
