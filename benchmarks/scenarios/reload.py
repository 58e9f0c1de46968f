"""The `reload` scenario: days 1..R in one run (max_window = 0) vs. R daily runs (max_window = 1), and whether both
targets are equal."""

from __future__ import annotations

import time
from dataclasses import dataclass

from benchmarks.bench import Bench, fresh, read_delta
from benchmarks.outcomes import Comparison, compare, outcome_counts
from benchmarks.spark_jobs import SparkJobs
from benchmarks.timing import Measurement
from deltainc.pipeline.controller.plan import WindowReport

__all__ = ["ReloadResult", "reload_phase"]


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
        setup=lambda _i: fresh(bench.work / one_shot.name),
        counter=jobs,
    )
    runs = bench.measure(f"{days} daily runs", daily_runs, setup=lambda _i: fresh(bench.work / daily.name))
    x, y = read_delta(spark, str(one_shot.target.path)), read_delta(spark, str(daily.target.path))
    comparison = compare(x, y)
    echo(f"    reload target equals daily target: {comparison.equal} {comparison}")
    return ReloadResult(days, reload, runs, comparison, outcome_counts(x), outcome_counts(y))
