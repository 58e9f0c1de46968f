"""Fixed cost of a daily run (R = 2,000 rows/day), on deltainc's session and on a session with Delta's defaults.

Users often bring their own session (a notebook, a cluster) built only with Delta's defaults
(`configure_spark_with_delta_pip`). Each session needs its own JVM (one SparkContext per JVM, and the two differ in
settings a running session cannot change), so the harness (`fixed-cost`, `run_pairs`) starts one child process per
session, alternately (A B B A ...), and each child, in its warm session: generates the small sources, brings the
job to day D - 1 (untimed), does one untimed warm-up daily run, then times the daily run for day D (restored
between repetitions) and a run with nothing pending. It prints JSON; the harness renders the medians. The child is
the only use of `python -m benchmarks.scenarios.fixed_cost KIND ROWS DAYS REPEAT`.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.bench import Bench, restore, snapshot
from benchmarks.data import bench_settings, ensure_sources, table_version
from benchmarks.spark_jobs import SparkJobs
from benchmarks.timing import run_process
from deltainc import pipeline
from deltainc.demo.sample_data import SampleSpec
from deltainc.settings import Settings
from deltainc.spark import delta_packages, get_spark

SESSIONS = ("deltainc", "delta-defaults")
START = dt.date(2024, 1, 1)


def _session(kind: str, settings: Settings) -> Any:
    if kind == "deltainc":
        return get_spark(settings)
    from delta import configure_spark_with_delta_pip
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("delta-defaults")
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.jars.packages", delta_packages())  # what configure_spark_with_delta_pip adds, cached
    )
    spark = configure_spark_with_delta_pip(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def child(kind: str, rows: int, days: int, repeat: int) -> dict[str, Any]:
    """Measure in this process, on a session of `kind`."""
    logging.getLogger("deltainc").setLevel(logging.WARNING)
    root = Path(tempfile.mkdtemp(prefix=f"deltainc-session-{kind}-"))
    settings = bench_settings(root, shuffle_partitions=8)
    spark = _session(kind, settings)
    try:
        sources = ensure_sources(spark, root, SampleSpec(start=START, days=days, rows_per_day=rows))
        bench = Bench(spark, settings, sources, root / "work", 1, 0.0, 2, 11, None, lambda _m: None)
        job = bench.job("fixed", max_window=0)
        paths = [str(job.target.path), f"{job.state.path}/runs", f"{job.state.path}/locks"]
        bench.run(job, days - 1)
        before = snapshot(bench, job)
        bench.daily(job, days)  # warm-up
        jobs = SparkJobs(spark)
        daily: list[float] = []
        daily_jobs: list[int] = []
        commits: list[int] = []
        for _ in range(repeat):
            restore(bench, before)
            versions = [table_version(spark, p) for p in paths]
            jobs.begin()
            started = time.perf_counter()
            bench.daily(job, days)
            daily.append(time.perf_counter() - started)
            daily_jobs.append(jobs.end())
            commits = [table_version(spark, p) - v for p, v in zip(paths, versions, strict=True)]
        idle: list[float] = []
        idle_jobs: list[int] = []
        for _ in range(repeat):
            jobs.begin()
            started = time.perf_counter()
            result = pipeline.run(job, until=bench.sources.day(days), spark=spark, settings=settings)
            idle.append(time.perf_counter() - started)
            idle_jobs.append(jobs.end())
            assert result.nothing_pending
        conf = {k: _conf(spark, k) for k in _KEYS}
        return {
            "session": kind,
            "daily_s": daily,
            "daily_jobs": daily_jobs,
            "commits": commits,
            "nothing_pending_s": idle,
            "nothing_pending_jobs": idle_jobs,
            "conf": conf,
        }
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)


def _conf(spark: Any, key: str) -> str:
    """The session's value of `key`, or its default as Spark states it."""
    try:
        return str(spark.conf.get(key))
    except Exception:  # a key without a value and without a default
        return "(unset)"


_KEYS = (
    "spark.sql.shuffle.partitions",
    "spark.databricks.delta.snapshotPartitions",
    "spark.sql.adaptive.enabled",
    "spark.ui.enabled",
)


def run_pairs(pairs: int, rows: int, days: int, repeat: int) -> dict[str, list[dict[str, Any]]]:
    """Run the children alternately; their JSON results per session."""
    results: dict[str, list[dict[str, Any]]] = {kind: [] for kind in SESSIONS}
    for pair in range(pairs):
        order = SESSIONS if pair % 2 == 0 else SESSIONS[::-1]
        for kind in order:
            command = [sys.executable, "-m", "benchmarks.scenarios.fixed_cost", kind, str(rows), str(days), str(repeat)]
            done = run_process(command)
            results[kind].append(json.loads(done.stdout.strip().splitlines()[-1]))
    return results


def render(results: dict[str, list[dict[str, Any]]], rows: int, days: int) -> list[str]:
    """A Markdown table: one row per session."""
    lines = [
        f"Fixed cost: R = {rows:,} rows/day, the daily run for day {days} in a warm session (after one untimed "
        "warm-up run), each session in its own process, started alternately. Median [min-max] over all samples.",
        "",
        "| session | daily run | Spark jobs | commits target / run log / lock | nothing pending | Spark jobs | "
        "shuffle partitions | Delta snapshotPartitions |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kind, runs in results.items():
        daily = [s for r in runs for s in r["daily_s"]]
        idle = [s for r in runs for s in r["nothing_pending_s"]]
        jobs = statistics.median(j for r in runs for j in r["daily_jobs"])
        idle_jobs = statistics.median(j for r in runs for j in r["nothing_pending_jobs"])
        conf = runs[-1]["conf"]
        lines.append(
            f"| {kind} | {statistics.median(daily):.2f} s [{min(daily):.2f}-{max(daily):.2f}] n={len(daily)} | "
            f"{jobs:.0f} | {' / '.join(map(str, runs[-1]['commits']))} | "
            f"{statistics.median(idle):.2f} s [{min(idle):.2f}-{max(idle):.2f}] | {idle_jobs:.0f} | "
            f"{conf['spark.sql.shuffle.partitions']} | {conf['spark.databricks.delta.snapshotPartitions']} |"
        )
    return lines


if __name__ == "__main__":
    kind, rows, days, repeat = sys.argv[1], *(int(value) for value in sys.argv[2:5])
    print(json.dumps(child(kind, rows, days, repeat)))
