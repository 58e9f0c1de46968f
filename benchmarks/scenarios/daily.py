"""The `daily`, `growth` and `floor` scenarios, one measurement for all three (see benchmarks/README.md): one deltainc
target is brought to "watermark at day D-1" for each history size D (a one-shot `pipeline.run(until=D-1)`, untimed),
then the daily run for day D is timed (first-time runs, the target and watermark restored between repetitions), next
to `pipeline.rerun` of day D, the naive full recompute over days 1..D and the read-only floor of day D.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from functools import partial

from pyspark.sql import functions as F

from benchmarks.bench import Bench, job_tables, read_delta, restore, restorer, snapshot
from benchmarks.data import table_version
from benchmarks.floors import floor_scans, join_append, read_all
from benchmarks.naive_join import naive_output, overwrite
from benchmarks.outcomes import Comparison, compare, outcome_counts
from benchmarks.spark_jobs import SparkJobs
from benchmarks.timing import Measurement
from deltainc import pipeline
from deltainc.pipeline.controller.plan import WindowReport
from deltainc.pipeline.delta.spark_counts import ScanStats, scan_stats
from deltainc.pipeline.job.job_config import JobConfig

__all__ = ["PHASES", "DailyPoint", "daily_phase", "profiled_daily"]

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


# --- daily, growth and floor, measured at once ----------------------------------------------------------------


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
            setup=restorer(bench, before),
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
        target = read_delta(spark, str(job.target.path))
        point.counts = outcome_counts(target)

        if floor:
            scan_a, scan_b = floor_scans(bench, number)
            point.floor_stats = (scan_stats(spark, scan_a), scan_stats(spark, scan_b))
            point.floor = bench.measure(f"floor read, day {number}", partial(read_all, scan_a, scan_b), counter=jobs)
            point.floor_append = bench.measure(
                f"floor: join day {number} and append, day {number}",
                partial(join_append, bench, job, number, str(bench.work / "floor_append")),
                counter=jobs,
            )
            last = bench.sources.day(number)
            rows = read_delta(spark, str(job.target.path)).where(  # the slice a daily run replaces: waiting rows at D-1
                (F.col("RecDate") == F.lit(last - dt.timedelta(days=1))) & (F.col("JoinType") == 5)
            )
            point.floor_target = bench.measure(
                f"floor read + target, day {number}", partial(read_all, scan_a, scan_b, rows), counter=jobs
            )

        if naive:
            last = bench.sources.day(number)
            scan_a, scan_b, output = naive_output(
                spark, bench.sources.path_a, bench.sources.path_b, last, bench.look_back, bench.max_wait
            )
            point.naive_stats = (scan_stats(spark, scan_a), scan_stats(spark, scan_b))
            point.naive = bench.measure(
                f"naive full recompute, days 1..{number}",
                partial(overwrite, output, naive_path, bench.target_partitioning),
                counter=jobs,
            )
            if number in check_sizes:
                point.naive_check = compare(read_delta(spark, naive_path), target)
                echo(f"    naive target equals deltainc's target: {point.naive_check.equal} {point.naive_check}")
        points.append(point)
    return points
