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
import os
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyspark.errors.utils as pyspark_errors
from py4j.clientserver import ClientServerConnection
from pyspark.sql import SparkSession

from benchmarks.feature_sources import feature_jobs
from benchmarks.scenarios import SparkJobs, restore, size_options, snapshot, warm_bench
from deltainc.tools.sample_data import SampleSpec

START = dt.date(2024, 1, 1)
OFF = ("spark.sql.adaptive.enabled=false", "spark.sql.codegen.wholeStage=false")


def _pairs(items: list[str]) -> dict[str, str]:
    """KEY=VALUE items as a dict."""
    return dict(item.split("=", 1) for item in items)


@contextmanager
def round_trips() -> Iterator[list[int]]:
    """Counts, in the list it yields, the Py4J commands the driver's Python sends to its JVM (a round trip each)."""
    real, count = ClientServerConnection.send_command, [0]

    def counted(connection: ClientServerConnection, command: str) -> Any:
        count[0] += 1
        return real(connection, command)

    ClientServerConnection.send_command = counted
    try:
        yield count
    finally:
        ClientServerConnection.send_command = real


def _switch(spark: SparkSession, conf: dict[str, str], call_sites: bool, side: str) -> None:
    """Side B's settings on (`conf` in the session, or PySpark's call-site recording), side A's back."""
    if call_sites:
        setattr(pyspark_errors, "_enable_debugging_cache", side == "B")  # noqa: B010 (a module variable typed None)
    for key, value in conf.items():
        if side == "B":
            spark.conf.set(key, value)
        else:
            spark.conf.unset(key)


def measure(
    rows: int, days: int, repeat: int, conf: dict[str, str], call_sites: bool = False, three_sources: bool = False
) -> dict[str, list[float]]:
    """Seconds, Spark jobs and Py4J round trips of the daily run for day `days`, A (deltainc's session) and B (with
    `conf`, or recording call sites); of the left join job, or of feature_sources' three-source job."""
    spec = SampleSpec(start=START, days=days, rows_per_day=rows)
    with warm_bench("deltainc-sql-conf-", spec, shuffle_partitions=8 if three_sources else 2) as (bench, root):
        spark = bench.spark
        job = (
            feature_jobs(bench, spark, spec, root)["three sources"]
            if three_sources
            else bench.job("conf", max_window=0)
        )
        bench.run(job, days - 1)
        before = snapshot(bench, job)
        bench.daily(job, days)  # warm-up
        jobs = SparkJobs(spark)
        found: dict[str, list[float]] = {f"{side} {what}": [] for side in "AB" for what in ("s", "jobs", "trips")}
        for _ in range(repeat):
            for side in ("A", "B"):
                restore(bench, before)
                _switch(spark, conf, call_sites, side)
                jobs.begin()
                with round_trips() as trips:
                    started = time.perf_counter()
                    bench.daily(job, days)
                    found[f"{side} s"].append(time.perf_counter() - started)
                found[f"{side} jobs"].append(jobs.end())
                found[f"{side} trips"].append(trips[0])
        _switch(spark, conf, call_sites, "A")
        return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    size_options(parser, rows=5, days=12, repeat=4)
    parser.add_argument("--conf", action="append", help="KEY=VALUE for side B (default: AQE and codegen off)")
    parser.add_argument("--call-sites", action="store_true", help="B records DataFrame call sites (PySpark's default)")
    parser.add_argument("--three-sources", action="store_true", help="time feature_sources' three-source job")
    args = parser.parse_args()
    conf = _pairs(args.conf or ([] if args.call_sites else list(OFF)))
    found = measure(args.rows_per_day, args.days, args.repeat, conf, args.call_sites, args.three_sources)
    b_is = f"A + {conf}" if conf else "A"
    b_is += " + DataFrame call sites recorded" if args.call_sites else ""
    a, b = (statistics.median(found[f"{side} s"]) for side in ("A", "B"))
    job = "feature_sources' three-source job" if args.three_sources else "a left join job"
    print(f"Daily run of {job} for day {args.days} at {args.rows_per_day} rows/day, {args.repeat} alternated pairs "
          f"(1-minute load average {os.getloadavg()[0]:.2f} at the end); B = {b_is}\n")  # fmt: skip
    print("| side | median s | min-max s | Spark jobs | Py4J round trips |\n|---|---:|---:|---:|---:|")
    for side, median in (("A (deltainc's session)", a), ("B", b)):
        key = side[0]
        low, high = min(found[f"{key} s"]), max(found[f"{key} s"])
        jobs, trips = (statistics.median(found[f"{key} {what}"]) for what in ("jobs", "trips"))
        print(f"| {side} | {median:.2f} | {low:.2f}-{high:.2f} | {jobs:.0f} | {trips:.0f} |")
    print(f"\nB / A: {b / a:.2f}")


if __name__ == "__main__":
    main()
