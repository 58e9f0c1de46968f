"""Does a Spark SQL setting make a small daily run cheaper? One warm session, one job, two sets of settings.

At the sizes of the test suite (a few rows a day) a daily run is mostly Spark's per-query and per-job cost. This
script brings a left join job (look back 2, wait 11, max_window 0) over the sample sources to day D - 1, does one
untimed warm-up daily run, then times the daily run for day D `--repeat` times under each set of session
settings, alternately (A B A B ...), the job's tables restored (Delta RESTORE) before every run. A is the session
as deltainc builds it; B adds `--conf KEY=VALUE` (default: adaptive execution and whole-stage code generation
off). Both are session settings, so one process and one JVM serve both sides.

    python -m benchmarks.sql_conf_ab --rows-per-day 5 --days 12 --repeat 4
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.data import bench_settings, ensure_sources
from benchmarks.scenarios import Bench, SparkJobs, restore, snapshot
from deltainc.spark import get_spark
from deltainc.tools.sample_data import SampleSpec

START = dt.date(2024, 1, 1)
OFF = ("spark.sql.adaptive.enabled=false", "spark.sql.codegen.wholeStage=false")


def _pairs(items: list[str]) -> dict[str, str]:
    """KEY=VALUE items as a dict."""
    return dict(item.split("=", 1) for item in items)


def measure(rows: int, days: int, repeat: int, conf: dict[str, str]) -> dict[str, list[float]]:
    """Seconds and Spark jobs of the daily run for day `days`, A (deltainc's session) and B (with `conf`)."""
    logging.getLogger("deltainc").setLevel(logging.WARNING)
    root = Path(tempfile.mkdtemp(prefix="deltainc-sql-conf-"))
    settings = bench_settings(root, shuffle_partitions=2)
    spark = get_spark(settings)
    try:
        sources = ensure_sources(spark, root, SampleSpec(start=START, days=days, rows_per_day=rows))
        bench = Bench(spark, settings, sources, root / "work", 1, 0.0, 2, 11, None, lambda _m: None)
        job = bench.job("conf", max_window=0)
        bench.run(job, days - 1)
        before = snapshot(bench, job)
        bench.daily(job, days)  # warm-up
        jobs = SparkJobs(spark)
        found: dict[str, list[float]] = {"A s": [], "B s": [], "A jobs": [], "B jobs": []}
        for _ in range(repeat):
            for side in ("A", "B"):
                restore(bench, before)
                for key, value in conf.items():
                    if side == "B":
                        spark.conf.set(key, value)
                    else:
                        spark.conf.unset(key)
                jobs.begin()
                started = time.perf_counter()
                bench.daily(job, days)
                found[f"{side} s"].append(time.perf_counter() - started)
                found[f"{side} jobs"].append(jobs.end())
        return found
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows-per-day", type=int, default=5)
    parser.add_argument("--days", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--conf", action="append", help="KEY=VALUE for side B (default: AQE and codegen off)")
    args = parser.parse_args()
    conf = _pairs(args.conf or list(OFF))
    found = measure(args.rows_per_day, args.days, args.repeat, conf)
    a, b = (statistics.median(found[f"{side} s"]) for side in ("A", "B"))
    print(f"Daily run for day {args.days} at {args.rows_per_day} rows/day, {args.repeat} alternated pairs "
          f"(1-minute load average {os.getloadavg()[0]:.2f} at the end); B = A + {conf}\n")  # fmt: skip
    print("| side | median s | min-max s | Spark jobs |\n|---|---:|---:|---:|")
    for side, median in (("A (deltainc's session)", a), ("B", b)):
        key = side[0]
        low, high = min(found[f"{key} s"]), max(found[f"{key} s"])
        print(f"| {side} | {median:.2f} | {low:.2f}-{high:.2f} | {statistics.median(found[f'{key} jobs']):.0f} |")
    print(f"\nB / A: {b / a:.2f}")


if __name__ == "__main__":
    main()
