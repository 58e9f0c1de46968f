"""A daily schedule on sources that get a new day before each run, as in production and in `make demo`.

The other scenarios run on sources that stay as they are, so Spark keeps their Delta snapshots and never pays for a
source's new version. Here, day after day in the harness's warm session, both sources get that day's partitions
appended (`deltainc.demo.sample_data`, the demo's ledger and payments), and then, in alternating order, the demo's
daily job runs (`pipeline.run`, `max_window = 1`) and the floor runs: the day's window joined by `inc_join` over the
two Delta sources and appended to a Delta table of its own. The first `warm` days are not recorded. Each day's
seconds and Spark jobs (every thread's, `SparkJobs`) are kept. The `new-days` scenario of `python -m benchmarks.run`.
"""

from __future__ import annotations

import datetime as dt
import shutil
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks.floors import inc_join_window
from benchmarks.machine import load_average
from benchmarks.spark_jobs import SparkJobs
from benchmarks.timing import measure as timed_once
from deltainc import pipeline
from deltainc.demo.jobs import DEMO_START, demo_job
from deltainc.demo.sample_data import SampleSpec, generate
from deltainc.pipeline.job.job_config import JobConfig

__all__ = ["Day", "append_floor", "measure", "render", "new_days"]


@dataclass(frozen=True)
class Day:
    """One scheduled day: the daily run's and the floor's seconds and Spark jobs, and which ran first."""

    day: str
    run_s: float
    run_jobs: int
    floor_s: float
    floor_jobs: int
    run_first: bool


def _append(frame: DataFrame, day: dt.date, path: Path) -> None:
    frame.where(F.col("RecDate") == F.lit(day)).coalesce(1).write.format("delta").mode("append").partitionBy(
        "RecDate"
    ).save(str(path))


def append_floor(spark: SparkSession, job: JobConfig, day: dt.date, path: Path) -> None:
    """The day's window joined over the Delta sources with inc_join and appended to the Delta table at `path`."""
    inc_join_window(spark, job, day).write.format("delta").mode("append").save(str(path))


def _timed(jobs: SparkJobs, work: Callable[[], object]) -> tuple[float, int]:
    """Seconds and Spark jobs (any thread's) of `work()`, run once."""
    once = timed_once("new-days", work, 1, counter=jobs)
    return once.samples[0], once.counts[0]


def measure(spark: SparkSession, root: Path, rows_per_day: int, days: int, warm: int) -> list[Day]:
    """The schedule's days after the first `warm`, each measured once (see the module's text)."""
    spec = SampleSpec(start=DEMO_START, days=days, rows_per_day=rows_per_day)
    job = demo_job(root, "new_days", 1)
    source_a, source_b = generate(spark, spec, partitions=2)
    source_a, source_b = source_a.persist(StorageLevel.MEMORY_AND_DISK), source_b.persist(StorageLevel.MEMORY_AND_DISK)
    measured: list[Day] = []
    jobs = SparkJobs(spark)
    try:
        for offset in range(days):
            day = spec.start + dt.timedelta(days=offset)
            _append(source_a, day, root / "ledger")
            _append(source_b, day, root / "payments")
            run_first = offset % 2 == 0
            steps: list[tuple[str, Callable[[], object]]] = [
                ("run", partial(pipeline.run, job, spark=spark)),
                ("floor", partial(append_floor, spark, job, day, root / "floor")),
            ]
            timed = {name: _timed(jobs, work) for name, work in (steps if run_first else steps[::-1])}
            if offset >= warm:
                measured.append(Day(day.isoformat(), *timed["run"], *timed["floor"], run_first))
    finally:
        source_a.unpersist()
        source_b.unpersist()
    return measured


def render(measured: list[Day], rows_per_day: int, load: str) -> list[str]:
    """The report: medians [min-max] of the daily run and the floor, their Spark jobs, and the ratio."""

    def spread(values: list[float]) -> str:
        return f"{statistics.median(values):.2f} s [{min(values):.2f}-{max(values):.2f}]"

    runs, floors = [d.run_s for d in measured], [d.floor_s for d in measured]
    ratio = statistics.median(runs) / statistics.median(floors)
    return [
        f"# A daily schedule on sources that get a new day before each run ({rows_per_day} rows a day)",
        "",
        f"{len(measured)} days measured, one daily run and one floor each, alternating which runs first; "
        f"load average {load}.",
        "",
        "| | seconds, median [min-max] | Spark jobs, median [min-max] |",
        "|---|---|---|",
        f"| daily run (`pipeline.run`) | {spread(runs)} | {statistics.median([d.run_jobs for d in measured]):.0f} "
        f"[{min(d.run_jobs for d in measured)}-{max(d.run_jobs for d in measured)}] |",
        f"| floor (join the window, append) | {spread(floors)} | "
        f"{statistics.median([d.floor_jobs for d in measured]):.0f} "
        f"[{min(d.floor_jobs for d in measured)}-{max(d.floor_jobs for d in measured)}] |",
        "",
        f"Daily run / floor: **{ratio:.2f}x** (medians).",
    ]


def new_days(spark: SparkSession, root: Path, rows_per_day: int, days: int, warm: int) -> list[str]:
    """The report of `measure` in the folder `root` (emptied first) on `spark`.

    Example: `lines = new_days(spark, Path("bench-data/new-days"), 200, 16, 4)`.
    """
    if days <= warm:
        raise ValueError(f"new-days: days ({days}) must exceed the days not recorded ({warm})")
    shutil.rmtree(root, ignore_errors=True)
    measured = measure(spark, root, rows_per_day, days, warm)
    return render(measured, rows_per_day, load_average())
