"""The five benchmark scenarios, all on the same generated sources (see benchmarks/README.md).

- `daily_phase` (scenarios 1, 2 and 5): one deltainc target is brought to "watermark at day D-1" for each
  history size D (a one-shot `pipeline.run(until=D-1)`, untimed), then the daily run for day D is timed
  (first-time runs, the target and watermark restored between repetitions), next to `pipeline.rerun` of
  day D, the naive full recompute over days 1..D and the read-only floor of day D.
- `reload_phase` (scenario 3): days 1..R in one run vs. R daily runs, and whether both targets are equal.
- `stream_phase` (scenario 4): Structured Streaming's stream-stream left outer join with watermarks over
  copies of the sources, AvailableNow + foreachBatch MERGE, for the same day as a deltainc daily run.
"""

from __future__ import annotations

import datetime as dt
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks.data import Sources, append_day, copy_days, table_version
from benchmarks.timing import Counter, Measurement, measure
from deltainc import pipeline
from deltainc.demo.sample_data import A_SCHEMA, B_SCHEMA
from deltainc.join.engine import inc_join
from deltainc.join.options import IncJoinSettings, counted_types
from deltainc.join.output_layout import plan_layout
from deltainc.join.windows import to_index
from deltainc.pipeline.delta.spark_counts import ScanStats, scan_stats
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.plan import WindowReport
from deltainc.pipeline.state.store import state_paths
from deltainc.settings import Settings

__all__ = [
    "inc_join_window",
    "Bench",
    "Comparison",
    "DailyPoint",
    "ReloadResult",
    "StreamResult",
    "OUTCOMES",
    "PHASES",
    "PIPELINE_GROUPS",
    "SparkJobs",
    "job_tables",
    "restore",
    "snapshot",
    "profiled_daily",
    "daily_phase",
    "reload_phase",
    "stream_phase",
]

# JoinType code -> name, as in docs/design.md#outcomes-of-a-row.
OUTCOMES: dict[int, str] = {code: code.outcome for code in counted_types("left")}
_MATCHED = (1, 2, 3)
# The target's columns, in the order deltainc's default output_select gives them to the benchmark's left join
# (waiting rows included) of the sample sources.
OUTPUT_COLUMNS: tuple[str, ...] = plan_layout(
    A_SCHEMA.fieldNames(), B_SCHEMA.fieldNames(), ["TrxId"], "left", IncJoinSettings(include_waiting=True)
).selected


@dataclass(frozen=True)
class Bench:
    """Everything a scenario needs: the session, the sources, where to work, and how to measure."""

    spark: SparkSession
    settings: Settings
    sources: Sources
    work: Path
    repeat: int
    budget_s: float
    look_back: int
    max_wait: int
    partition_by: tuple[str, ...] | None  # None = the job's default layout
    echo: Callable[[str], None]

    @property
    def target_partitioning(self) -> tuple[str, ...]:
        """The partition columns of the deltainc target, which the naive and stream targets copy."""
        return ("RecDate",) if self.partition_by is None else self.partition_by

    def job(self, name: str, max_window: int, path_a: str | None = None, path_b: str | None = None) -> JobConfig:
        """A left join of A and B on TrxId with the benchmark's tolerances; target and state under work/name."""
        return JobConfig.model_validate(
            {
                "name": name,
                "start_date": self.sources.spec.start,
                "max_window": max_window,
                "source_a": {"path": path_a or self.sources.path_a},
                "source_b": {"path": path_b or self.sources.path_b},
                "join": {
                    "how": "left",
                    "join_cols": ["TrxId"],
                    "look_back_time": self.look_back,
                    "max_waiting_time": self.max_wait,
                    "include_waiting": True,
                },
                "target": {
                    "path": str(self.work / name / "target"),
                    "keys": ["TrxId"],
                    "b_keys": ["SepaId"],
                    "partition_by": None if self.partition_by is None else list(self.partition_by),
                },
                "state": {"path": str(self.work / name / "state")},
            }
        )

    def measure(
        self,
        name: str,
        call: Callable[[], Any],
        setup: Callable[[int], None] | None = None,
        counter: Counter | None = None,
    ) -> Measurement:
        """`timing.measure` of `call` with the bench's repetitions, time budget and echo."""
        return measure(name, call, self.repeat, self.budget_s, setup=setup, echo=self.echo, counter=counter)

    def run(self, job: JobConfig, until: int, on_step: Callable[[str], None] | None = None) -> tuple[WindowReport, ...]:
        """pipeline.run(job, until=day `until`); the windows it processed."""
        day = self.sources.day(until)
        return pipeline.run(job, until=day, spark=self.spark, settings=self.settings, on_step=on_step).windows

    def daily(self, job: JobConfig, number: int, on_step: Callable[[str], None] | None = None) -> WindowReport:
        """The scheduled run for day `number` (watermark at number - 1): exactly one window, that day."""
        windows = self.run(job, number, on_step)
        label = self.sources.day(number).isoformat()
        if len(windows) != 1 or str(windows[0].window) != label:
            raise RuntimeError(f"daily run of {job.name} for {label} processed {[str(w.window) for w in windows]}")
        return windows[0]


@dataclass(frozen=True)
class Comparison:
    """Two tables compared as multisets of rows."""

    rows_left: int
    rows_right: int
    only_left: int
    only_right: int

    @property
    def equal(self) -> bool:
        return self.only_left == 0 and self.only_right == 0 and self.rows_left == self.rows_right


def compare(left: DataFrame, right: DataFrame) -> Comparison:
    """Row-for-row comparison (exceptAll both ways, counts), columns matched by name."""
    right = right.select(*left.columns)
    return Comparison(left.count(), right.count(), left.exceptAll(right).count(), right.exceptAll(left).count())


def outcome_counts(frame: DataFrame) -> dict[str, int]:
    """Rows per JoinType name."""
    found = {int(r["JoinType"]): int(r["count"]) for r in frame.groupBy("JoinType").count().collect()}
    return {name: found.get(code, 0) for code, name in OUTCOMES.items()}


# The job groups deltainc puts a window's Spark jobs in (`deltainc.spark_compat.labelled_jobs`): a window's own, and
# its too-late search's in the thread beside it. They replace the caller's group while the window runs. The window's
# commit runs in a thread of its own (`finish_commit`), whose jobs carry no group: None.
PIPELINE_GROUPS: tuple[str | None, ...] = ("deltainc", "deltainc-too-late", None)


class SparkJobs:
    """A timing.Counter of the Spark jobs started between begin() and end() in any thread (status tracker): those of
    this thread's group, those deltainc labelled as a window's or its search's, and those of threads without a
    group (the window's commit) meanwhile."""

    def __init__(self, spark: SparkSession) -> None:
        self._context = spark.sparkContext
        self._number = 0
        self._group = ""
        self._before: set[int] = set()

    def _pipeline_jobs(self) -> set[int]:
        tracker = self._context.statusTracker()
        return {job_id for group in PIPELINE_GROUPS for job_id in tracker.getJobIdsForGroup(group)}

    def begin(self) -> None:
        self._number += 1
        self._group = f"deltainc-bench-{self._number}"
        self._before = self._pipeline_jobs()
        self._context.setJobGroup(self._group, "deltainc benchmark measurement")

    def now(self) -> int:
        """The jobs started since begin() so far (the count goes on)."""
        jobs = len(self._context.statusTracker().getJobIdsForGroup(self._group))
        return jobs + len(self._pipeline_jobs() - self._before)

    def end(self) -> int:
        jobs = self.now()
        self._context.setJobGroup("deltainc-bench-idle", "deltainc benchmark, not measured")
        return jobs


def _read(spark: SparkSession, path: str) -> DataFrame:
    return spark.read.format("delta").load(path)


# --- restoring a job to an earlier state, so that a first-time run can be repeated ---------------------


def job_tables(bench: Bench, job: JobConfig) -> list[str]:
    """The tables a run changes and a repetition must find as before: the target, the run log (which holds
    the watermark) and the lock table."""
    paths = state_paths(job.state_path(bench.settings.state_dir))
    return [str(job.target.path), paths.runs, paths.locks]


def snapshot(bench: Bench, job: JobConfig) -> dict[str, int]:
    """The current version of every table a run of `job` changes."""
    return {path: table_version(bench.spark, path) for path in job_tables(bench, job)}


def restore(bench: Bench, versions: dict[str, int]) -> None:
    """Put the tables back to `versions` (Delta RESTORE: the same files as before, as a new commit)."""
    for path, version in versions.items():
        if table_version(bench.spark, path) != version:
            DeltaTable.forPath(bench.spark, path).restoreToVersion(version)


def _restorer(bench: Bench, versions: dict[str, int]) -> Callable[[int], None]:
    """A measurement set-up that restores the tables to `versions` before every repetition."""

    def setup(_repetition: int) -> None:
        restore(bench, versions)

    return setup


# Where the time of one daily run goes, from the pipeline's step marks (see profiled_daily).
PHASES = (
    "before the window: sources, lock, state",
    "join, counts, ambiguity check",
    "target write (one commit)",
    "run-log commit (watermark, lock release)",
    "after the window",
)


def profiled_daily(bench: Bench, job: JobConfig, number: int, phases: list[dict[str, float]]) -> WindowReport:
    """bench.daily, and the seconds of each of PHASES appended to `phases`.

    The pipeline reports the steps "read" (join done, checked), "written" and "watermark"; the window's own
    duration (its run-log row's duration_s) ends just after "watermark", which gives where the window began.
    """
    marks: dict[str, float] = {}
    started = time.perf_counter()

    def mark(step: str) -> None:
        marks.setdefault(step, time.perf_counter() - started)

    report = bench.daily(job, number, on_step=mark)
    total = time.perf_counter() - started
    begin = max(0.0, marks["watermark"] - report.record.duration_s)
    steps = [begin, marks["read"], marks["written"], marks["watermark"], total]
    phases.append({name: b - a for name, a, b in zip(PHASES, [0.0, *steps[:-1]], steps, strict=True)})
    return report


def _rerun(bench: Bench, job: JobConfig, which: dt.date) -> WindowReport:
    return pipeline.rerun(job, which, spark=bench.spark, settings=bench.settings).windows[0]


def _fresh(*paths: Path) -> None:
    for path in paths:
        if path.exists():
            shutil.rmtree(path)


# --- the naive full recompute and the read-only floor ----------------------------------------------------


def naive_output(
    spark: SparkSession, path_a: str, path_b: str, last: dt.date, look_back: int, max_wait: int
) -> tuple[DataFrame, DataFrame, DataFrame]:
    """(scan of A, scan of B, output): what a user writes without deltainc to get the target as of `last`.

    Every row of A and B with RecDate <= last, a plain left join on TrxId with B.RecDate in
    [A.RecDate - look_back, A.RecDate + max_wait], and the outcome columns computed as of `last`.
    """
    a = _read(spark, path_a).where(F.col("RecDate") <= F.lit(last))
    b = _read(spark, path_b).where(F.col("RecDate") <= F.lit(last))
    left = a.select(
        "TrxId", "TrxDT", "CreditDebit", "AmountEuro", "AccountName", F.col("RecDate").alias("RecDate_A")
    ).alias("a")
    right = b.select(
        F.col("TrxId").alias("b_TrxId"), "SepaId", "CountryCode", F.col("RecDate").alias("RecDate_B")
    ).alias("b")
    condition = (
        (F.col("TrxId") == F.col("b_TrxId"))
        & (F.col("RecDate_B") >= F.date_sub("RecDate_A", look_back))
        & (F.col("RecDate_B") <= F.date_add("RecDate_A", max_wait))
    )
    joined = left.join(right, condition, "left")
    waiting = F.least(F.lit(max_wait), F.greatest(F.lit(0), F.datediff(F.lit(last), "RecDate_A")))
    return a, b, joined.select(*_target_columns(waiting, max_wait))


def _target_columns(waiting: Column, max_wait: int) -> list[Column]:
    """The target's columns from a joined row (RecDate_B null when unmatched) and its days waited so far."""
    matched = F.col("RecDate_B").isNotNull()
    diff = F.datediff("RecDate_B", "RecDate_A")
    join_type = (
        F.when(matched & (diff == 0), 1)
        .when(matched & (diff < 0), 2)
        .when(matched, 3)
        .when(waiting == F.lit(max_wait), 4)
        .otherwise(5)
        .cast("int")
    )
    computed = {
        "RecDate": F.when(matched, F.greatest("RecDate_A", "RecDate_B")).otherwise(F.date_add("RecDate_A", waiting)),
        "DiffArrivalTime": F.when(matched, diff).cast("int"),
        "WaitingTime": F.when(~matched, waiting).cast("int"),
        "JoinType": join_type,
    }
    return [computed.get(name, F.col(name)).alias(name) for name in OUTPUT_COLUMNS]


def _overwrite(frame: DataFrame, path: str, partition_by: tuple[str, ...]) -> None:
    writer = frame.write.format("delta").mode("overwrite").option("overwriteSchema", "true")
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    writer.save(path)


def floor_scans(bench: Bench, number: int) -> tuple[DataFrame, DataFrame]:
    """The partitions a daily run for day `number` needs: A in [D - mw, D], B in [D - lb - mw, D]."""
    last = bench.sources.day(number)
    first_a = last - dt.timedelta(days=bench.max_wait)
    first_b = last - dt.timedelta(days=bench.look_back + bench.max_wait)
    a = _read(bench.spark, bench.sources.path_a).where(F.col("RecDate").between(F.lit(first_a), F.lit(last)))
    b = _read(bench.spark, bench.sources.path_b).where(F.col("RecDate").between(F.lit(first_b), F.lit(last)))
    return a, b


def inc_join_window(spark: SparkSession, job: JobConfig, day: dt.date) -> DataFrame:
    """The floor's join: `day`'s window of the two-source `job`, by `inc_join` over its two Delta sources."""
    assert job.source_b is not None and job.join.how is not None  # a two-source job
    a = spark.read.format("delta").load(str(job.source_a.path))
    b = spark.read.format("delta").load(str(job.source_b.path))
    join = job.join
    return inc_join(a, b, job.outcome_kind, list(join.join_cols), None, join.look_back_time, join.max_waiting_time,
                    day, day, join.engine_settings(job.target.b_keys))  # fmt: skip


def _join_append(bench: Bench, job: JobConfig, number: int, path: str) -> None:
    """What any incremental job must do at least: join day `number`'s window, append the output to Delta."""
    prepared = pipeline.prepare_job(job, bench.spark, bench.settings)
    unit = to_index(bench.sources.day(number))
    output = prepared.join.join(unit, unit).output
    output.write.format("delta").mode("append").save(path)


def _noop(*frames: DataFrame) -> None:
    """Read every column of every row of the frames and throw them away.

    (An aggregate that touches every column, not the `noop` sink: Delta 3.3 cannot plan a table with
    deletion vectors under the noop sink, "non-pinned table snapshot".)"""
    for frame in frames:
        frame.agg(*[F.count(F.col(f"`{c}`")) for c in frame.columns]).collect()


# --- scenarios 1, 2 and 5 ------------------------------------------------------------------------------------


@dataclass
class DailyPoint:
    """The measurements for one history size D (the daily run is the run for day D)."""

    days: int
    build_s: float  # untimed set-up: the one-shot run that brought the watermark to day D - 1
    daily: Measurement  # first-time daily runs of day D; outputs: WindowReport
    rerun: Measurement  # pipeline.rerun of day D; outputs: WindowReport
    floor: Measurement | None = None  # noop read of the sources' partitions the daily run needs
    floor_target: Measurement | None = None  # ... plus the target rows its MERGE looks at
    floor_stats: tuple[ScanStats, ScanStats] | None = None
    naive: Measurement | None = None
    naive_stats: tuple[ScanStats, ScanStats] | None = None
    naive_check: Comparison | None = None  # naive target vs. deltainc's target after day D
    counts: dict[str, int] = field(default_factory=dict)  # the deltainc target's rows per outcome after day D
    phases: list[dict[str, float]] = field(default_factory=list)  # per daily repetition: seconds per PHASES
    commits: list[int] = field(default_factory=list)  # Delta commits of one daily run: target, run log, lock
    nothing_pending: Measurement | None = None  # pipeline.run once day D is processed: nothing to do
    floor_append: Measurement | None = None  # join day D's window and append its output to a Delta table

    @property
    def report(self) -> WindowReport:
        report: WindowReport = self.daily.last
        return report


def daily_phase(bench: Bench, sizes: list[int], naive: bool, floor: bool, check_sizes: set[int]) -> list[DailyPoint]:
    """Scenarios 1, 2 and 5 for every history size in `sizes` (ascending), on one progressively built target."""
    spark, echo = bench.spark, bench.echo
    job = bench.job("daily", max_window=0)
    naive_path = str(bench.work / "naive" / "target")
    jobs = SparkJobs(spark)
    points: list[DailyPoint] = []
    for number in sizes:
        echo(f"  D = {number}: bringing the deltainc target to day {number - 1} (one run, untimed)")
        started = time.perf_counter()
        bench.run(job, number - 1)
        build_s = time.perf_counter() - started
        echo(f"    set-up {build_s:.1f} s")

        before = snapshot(bench, job)
        if number == sizes[0]:
            # Warm the JVM and deltainc's code paths, so that the smallest size is not timed cold.
            started = time.perf_counter()
            bench.daily(job, number)
            echo(f"    warm-up: one untimed daily run, {time.perf_counter() - started:.2f} s")
        phases: list[dict[str, float]] = []
        daily = bench.measure(
            f"deltainc daily run, day {number}",
            partial(profiled_daily, bench, job, number, phases),
            setup=_restorer(bench, before),
            counter=jobs,
        )
        rerun_day = bench.sources.day(number)
        rerun = bench.measure(f"deltainc rerun, day {number}", partial(_rerun, bench, job, rerun_day), counter=jobs)
        point = DailyPoint(number, build_s, daily, rerun, phases=phases)
        # One more first-time run, untimed, to count its Delta commits per table; then runs with nothing pending.
        restore(bench, before)
        tables = job_tables(bench, job)
        versions = [table_version(spark, p) for p in tables]
        bench.daily(job, number)
        point.commits = [table_version(spark, p) - v for p, v in zip(tables, versions, strict=True)]
        point.nothing_pending = bench.measure(
            f"deltainc run with nothing pending, day {number}", partial(bench.run, job, number), counter=jobs
        )
        target = _read(spark, str(job.target.path))
        point.counts = outcome_counts(target)

        if floor:
            scan_a, scan_b = floor_scans(bench, number)
            point.floor_stats = (scan_stats(spark, scan_a), scan_stats(spark, scan_b))
            point.floor = bench.measure(f"floor read, day {number}", partial(_noop, scan_a, scan_b), counter=jobs)
            point.floor_append = bench.measure(
                f"floor: join day {number} and append, day {number}",
                partial(_join_append, bench, job, number, str(bench.work / "floor_append")),
                counter=jobs,
            )
            last = bench.sources.day(number)
            rows = _read(spark, str(job.target.path)).where(  # the slice a daily run replaces: waiting rows at D-1
                (F.col("RecDate") == F.lit(last - dt.timedelta(days=1))) & (F.col("JoinType") == 5)
            )
            point.floor_target = bench.measure(
                f"floor read + target, day {number}", partial(_noop, scan_a, scan_b, rows), counter=jobs
            )

        if naive:
            last = bench.sources.day(number)
            scan_a, scan_b, output = naive_output(
                spark, bench.sources.path_a, bench.sources.path_b, last, bench.look_back, bench.max_wait
            )
            point.naive_stats = (scan_stats(spark, scan_a), scan_stats(spark, scan_b))
            point.naive = bench.measure(
                f"naive full recompute, days 1..{number}",
                partial(_overwrite, output, naive_path, bench.target_partitioning),
                counter=jobs,
            )
            if number in check_sizes:
                point.naive_check = compare(_read(spark, naive_path), target)
                echo(f"    naive target equals deltainc's target: {point.naive_check.equal} {point.naive_check}")
        points.append(point)
    return points


# --- scenario 3 -------------------------------------------------------------------------------------------


@dataclass
class ReloadResult:
    """Days 1..days in one run (target X) vs. the same days as daily runs (target Y)."""

    days: int
    reload: Measurement  # outputs: tuple of WindowReport
    daily: Measurement  # outputs: list of (seconds, Spark jobs) per daily run
    comparison: Comparison
    counts_x: dict[str, int]
    counts_y: dict[str, int]

    @property
    def per_run(self) -> list[float]:
        """Seconds of each daily run of the last repetition."""
        return [seconds for seconds, _jobs in self.daily.last]

    @property
    def jobs_per_run(self) -> list[int]:
        """Spark jobs of each daily run of the last repetition."""
        return [jobs for _seconds, jobs in self.daily.last]


def reload_phase(bench: Bench, days: int) -> ReloadResult:
    """Scenario 3: one-shot reload (max_window = 0) vs. `days` separate daily runs (max_window = 1)."""
    spark, echo = bench.spark, bench.echo
    one_shot, daily = bench.job("reload_x", max_window=0), bench.job("daily_y", max_window=1)
    jobs = SparkJobs(spark)

    def reload_once() -> tuple[WindowReport, ...]:
        return bench.run(one_shot, days)

    def daily_runs() -> list[tuple[float, int]]:
        runs = []
        for number in range(1, days + 1):
            jobs.begin()
            started = time.perf_counter()
            bench.daily(daily, number)
            runs.append((time.perf_counter() - started, jobs.end()))
            if number % 10 == 0 or number == days:
                echo(f"      daily run {number}/{days}: {runs[-1][0]:.2f} s, {runs[-1][1]} Spark jobs")
        return runs

    reload = bench.measure(
        f"reload of days 1..{days} in one run",
        reload_once,
        setup=lambda _i: _fresh(bench.work / one_shot.name),
        counter=jobs,
    )
    runs = bench.measure(f"{days} daily runs", daily_runs, setup=lambda _i: _fresh(bench.work / daily.name))
    x, y = _read(spark, str(one_shot.target.path)), _read(spark, str(daily.target.path))
    comparison = compare(x, y)
    echo(f"    reload target equals daily target: {comparison.equal} {comparison}")
    return ReloadResult(days, reload, runs, comparison, outcome_counts(x), outcome_counts(y))


# --- scenario 4 -------------------------------------------------------------------------------------------


@dataclass
class StreamResult:
    """Structured Streaming vs. deltainc for the same day, on copies of the sources."""

    day: int
    setup_s: float  # copies, the stream over days 1..D-1, deltainc's target to day D-1 (untimed)
    stream: Measurement  # outputs: dict with batches and input rows
    daily: Measurement  # deltainc first-time daily runs on the copies; outputs: WindowReport
    outcomes: list[tuple[str, int, int, int, int]]  # (outcome, deltainc rows, stream rows, only deltainc, only stream)
    cannot_revise: int  # rows the stream emitted as timed out (final) whose A row deltainc has matched
    late_timeouts: int  # deltainc's rows timing out on day D itself (A.RecDate = D - mw) that the stream still holds
    watermark_delay: str

    @property
    def progress(self) -> dict[str, Any]:
        progress: dict[str, Any] = self.stream.last
        return progress


def _stream_rows(batch: DataFrame, max_wait: int) -> DataFrame:
    """A micro-batch of the stream-stream join in the target's layout: a pair, or an A row that timed out."""
    return batch.select(*_target_columns(F.lit(max_wait), max_wait))


def _start_stream(bench: Bench, path_a: str, path_b: str, target: str, checkpoint: str, delay: str) -> dict[str, Any]:
    """One AvailableNow run of the stream-stream left outer join, MERGEd batch by batch into `target`."""
    spark, lb, mw = bench.spark, bench.look_back, bench.max_wait
    a = (
        spark.readStream.format("delta")
        .load(path_a)
        .select(
            "TrxId",
            "TrxDT",
            "CreditDebit",
            "AmountEuro",
            "AccountName",
            F.col("RecDate").alias("RecDate_A"),
            F.col("RecDate").cast("timestamp").alias("a_ts"),
        )
        .withWatermark("a_ts", delay)
    )
    b = (
        spark.readStream.format("delta")
        .load(path_b)
        .select(
            F.col("TrxId").alias("b_TrxId"),
            "SepaId",
            "CountryCode",
            F.col("RecDate").alias("RecDate_B"),
            F.col("RecDate").cast("timestamp").alias("b_ts"),
        )
        .withWatermark("b_ts", delay)
    )
    condition = F.expr(f"TrxId = b_TrxId AND b_ts >= a_ts - INTERVAL {lb} DAYS AND b_ts <= a_ts + INTERVAL {mw} DAYS")
    joined = a.join(b, condition, "leftOuter")
    identity = (
        "t.TrxId <=> s.TrxId AND t.RecDate_A = s.RecDate_A AND t.SepaId <=> s.SepaId AND t.RecDate_B <=> s.RecDate_B"
    )

    def merge_batch(batch: DataFrame, _batch_id: int) -> None:
        rows = _stream_rows(batch, mw).persist()
        try:
            bounds = rows.agg(F.min("RecDate_A").alias("lo"), F.max("RecDate_A").alias("hi")).first()
            if bounds is None or bounds["lo"] is None:
                return
            prune = f" AND t.RecDate_A >= DATE'{bounds['lo']}' AND t.RecDate_A <= DATE'{bounds['hi']}'"
            (
                DeltaTable.forPath(batch.sparkSession, target)
                .alias("t")
                .merge(rows.alias("s"), identity + prune)
                .whenNotMatchedInsertAll()
                .execute()
            )
        finally:
            rows.unpersist()

    query = (
        joined.writeStream.foreachBatch(merge_batch)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .outputMode("append")
        .start()
    )
    query.awaitTermination()
    failure = query.exception()
    if failure is not None:
        raise RuntimeError(f"streaming query failed: {failure}")
    progress = query.recentProgress
    return {
        "batches": len(progress),
        "input_rows": sum(int(p.get("numInputRows", 0) or 0) for p in progress),
        "watermark": progress[-1].get("eventTime", {}).get("watermark") if progress else None,
    }


def stream_phase(bench: Bench, number: int, delay: str = "0 seconds") -> StreamResult:
    """Scenario 4 for day `number`: the stream and deltainc both first process days 1..D-1, then day D."""
    spark, echo = bench.spark, bench.echo
    folder = bench.work / "stream"
    _fresh(folder)
    path_a, path_b = str(folder / "A"), str(folder / "B")
    target, checkpoint, saved = folder / "stream_target", folder / "checkpoint", folder / "checkpoint_saved"
    job = bench.job("stream_deltainc", max_window=0, path_a=path_a, path_b=path_b)
    previous, today = bench.sources.day(number - 1), bench.sources.day(number)

    echo(f"  copies of A and B with days 1..{number - 1}; the stream and deltainc process them (untimed)")
    started = time.perf_counter()
    copy_days(spark, bench.sources.path_a, path_a, previous)
    copy_days(spark, bench.sources.path_b, path_b, previous)
    bench.run(job, number - 1)
    schema = _read(spark, str(job.target.path)).select(*OUTPUT_COLUMNS).schema
    writer = spark.createDataFrame([], schema).write.format("delta").mode("overwrite")
    if bench.target_partitioning:
        writer = writer.partitionBy(*bench.target_partitioning)
    writer.save(str(target))
    history = _start_stream(bench, path_a, path_b, str(target), str(checkpoint), delay)
    echo(f"    stream over the history: {history}")
    append_day(spark, bench.sources.path_a, path_a, today)
    append_day(spark, bench.sources.path_b, path_b, today)
    shutil.copytree(checkpoint, saved)
    stream_version = table_version(spark, str(target))
    setup_s = time.perf_counter() - started
    echo(f"    set-up {setup_s:.1f} s; day {number} appended to the copies")

    def reset_stream(i: int) -> None:
        if i == 0:
            return
        shutil.rmtree(checkpoint)
        shutil.copytree(saved, checkpoint)
        if table_version(spark, str(target)) != stream_version:
            DeltaTable.forPath(spark, str(target)).restoreToVersion(stream_version)

    stream = bench.measure(
        f"stream AvailableNow, day {number}",
        lambda: _start_stream(bench, path_a, path_b, str(target), str(checkpoint), delay),
        setup=reset_stream,
    )
    echo(f"    stream over day {number}: {stream.last}")
    before = snapshot(bench, job)
    daily = bench.measure(
        f"deltainc daily run on the copies, day {number}",
        lambda: bench.daily(job, number),
        setup=_restorer(bench, before),
        counter=SparkJobs(spark),
    )

    ours = _read(spark, str(job.target.path)).select(*OUTPUT_COLUMNS)
    theirs = _read(spark, str(target)).select(*OUTPUT_COLUMNS)
    counts_ours, counts_theirs = outcome_counts(ours), outcome_counts(theirs)
    only_ours = outcome_counts(ours.exceptAll(theirs))
    only_theirs = outcome_counts(theirs.exceptAll(ours))
    outcomes = [
        (name, counts_ours[name], counts_theirs[name], only_ours[name], only_theirs[name]) for name in OUTCOMES.values()
    ]
    matched_a = ours.where(F.col("JoinType").isin(*_MATCHED)).select("TrxId", "RecDate_A").distinct()
    cannot_revise = theirs.where(F.col("JoinType") == 4).join(matched_a, ["TrxId", "RecDate_A"], "left_semi").count()
    due_today = today - dt.timedelta(days=bench.max_wait)
    late_timeouts = (
        ours.exceptAll(theirs).where((F.col("JoinType") == 4) & (F.col("RecDate_A") == F.lit(due_today))).count()
    )
    return StreamResult(number, setup_s, stream, daily, outcomes, cannot_revise, late_timeouts, delay)
