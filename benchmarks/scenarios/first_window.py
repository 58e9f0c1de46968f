"""A new job's first window: what every test that runs one window, and every new job's first run, pays.

In the harness's warm session, `repeat` times and alternately: a new job (the sample sources' left join over
`days` days of `rows_per_day` rows, one window over them all, a target and state of its own) runs its first window
(`pipeline.run`), and the floor does the same work by hand: the window joined by `inc_join` over the two Delta
sources and written to a new Delta table. Each side starts from new tables (written untimed, before it), after one
untimed warm-up of each. Reported: seconds, Spark jobs (every thread's, `SparkJobs`) and the Delta commits of the
target. The `first-window` scenario of `python -m benchmarks.run`.
"""

from __future__ import annotations

import datetime as dt
import shutil
import statistics
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from pyspark.sql import SparkSession

from benchmarks.machine import load_average
from benchmarks.spark_jobs import SparkJobs
from benchmarks.timing import measure as timed_once
from deltainc import inc_join, pipeline
from deltainc.demo.sample_data import SampleSpec, write_sources
from deltainc.pipeline.job.job_config import JobConfig

__all__ = ["Sample", "measure", "render", "first_window"]

START = dt.date(2025, 3, 1)


@dataclass(frozen=True)
class Sample:
    """One side's one repetition: its seconds, Spark jobs and the commits of the table it created."""

    side: str  # "first window" or "floor"
    seconds: float
    jobs: int
    commits: int


def _job(root: Path, spec: SampleSpec) -> JobConfig:
    return JobConfig.model_validate(
        {
            "name": "first",
            "start_date": spec.start,
            "max_window": 0,
            "source_a": {"path": str(root / "a")},
            "source_b": {"path": str(root / "b")},
            "join": {
                "how": "left",
                "join_cols": ["TrxId"],
                "look_back_time": 1,
                "max_waiting_time": 4,
                "include_waiting": True,
            },  # fmt: skip
            "target": {"path": str(root / "target"), "keys": ["TrxId"], "b_keys": ["SepaId"]},
            "state": {"path": str(root / "state")},
        }
    )


def _floor(spark: SparkSession, job: JobConfig, spec: SampleSpec) -> None:
    """The window joined with inc_join over the two Delta sources, written to a new Delta table."""
    assert job.source_b is not None and job.join.how is not None
    a = spark.read.format("delta").load(str(job.source_a.path))
    b = spark.read.format("delta").load(str(job.source_b.path))
    join, last = job.join, spec.start + dt.timedelta(days=spec.days - 1)
    out = inc_join(a, b, job.outcome_kind, list(join.join_cols), None, join.look_back_time, join.max_waiting_time,
                   spec.start, last, join.engine_settings(job.target.b_keys))  # fmt: skip
    out.write.format("delta").mode("append").save(str(job.target.path))


def _commits(job: JobConfig) -> int:
    return sum(1 for _ in Path(str(job.target.path), "_delta_log").glob("*.json"))


def measure(spark: SparkSession, root: Path, repeat: int, days: int = 3, rows_per_day: int = 20) -> list[Sample]:
    """`repeat` rounds of both sides (first window, floor; then the other order), after one warm-up of each."""
    spec = SampleSpec(start=START, days=days, rows_per_day=rows_per_day, seed=7)
    jobs = SparkJobs(spark)
    samples: list[Sample] = []
    for number in range(repeat + 1):
        for side in ("first window", "floor") if number % 2 == 0 else ("floor", "first window"):
            folder = root / f"{number}-{side.replace(' ', '_')}"
            shutil.rmtree(folder, ignore_errors=True)
            write_sources(spark, spec, str(folder / "a"), str(folder / "b"))
            job = _job(folder, spec)
            work = partial(_floor, spark, job, spec) if side == "floor" else partial(pipeline.run, job, spark=spark)
            once = timed_once(side, work, 1, counter=jobs)
            if number > 0:  # round 0 warms both up
                samples.append(Sample(side, once.samples[0], once.counts[0], _commits(job)))
    return samples


def render(samples: list[Sample], load: str) -> list[str]:
    """The Markdown table: each side's median seconds, range, Spark jobs and target commits; and their ratio."""
    lines = [
        f"Load average at the end: {load}.",
        "",
        "| side | median s | range s | Spark jobs | target commits |",
        "|---|---|---|---|---|",
    ]
    medians = {}
    for side in ("first window", "floor"):
        mine = [s for s in samples if s.side == side]
        medians[side] = statistics.median(s.seconds for s in mine)
        low, high = min(s.seconds for s in mine), max(s.seconds for s in mine)
        jobs = statistics.median(s.jobs for s in mine)
        lines.append(f"| {side} | {medians[side]:.2f} | {low:.2f}-{high:.2f} | {jobs:.0f} | {mine[-1].commits} |")
    lines += ["", f"First window / floor: {medians['first window'] / medians['floor']:.2f}x."]
    return lines


def first_window(spark: SparkSession, root: Path, repeat: int) -> list[str]:
    """The scenario's report. Example: `lines = first_window(spark, Path("bench-data/work/first-window"), 3)`."""
    samples = measure(spark, root, repeat)
    return render(samples, load_average())
