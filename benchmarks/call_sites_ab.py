"""What does PySpark's recording of DataFrame call sites cost a window's plan? The driver's side only, A/B.

PySpark 4 records the Python call site of every DataFrame call (`spark.python.sql.dataFrameDebugging.enabled`),
which costs Py4J round trips; deltainc's session turns it off. This script prepares feature_sources' jobs (the
three-source job and its three single-source jobs) over generated tables, then for each job builds one daily
window's join and has Spark plan it (`executedPlan`, as the window's persist does), `--repeat` times with the
recording off (A) and on (B), alternately. Nothing runs on the executors, so the times are the driver's work and
vary little. PySpark reads the setting once into a module variable that gates the recording; the script switches
that variable, so one process and one JVM serve both sides.

    python -m benchmarks.call_sites_ab --rows-per-day 200 --days 12 --repeat 8
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import time

import pyspark.errors.utils as pyspark_errors

from benchmarks.feature_sources import START, feature_jobs
from benchmarks.scenarios import size_options, warm_bench
from benchmarks.sql_conf_ab import round_trips
from deltainc.join.time_units import to_index
from deltainc.pipeline.prepared_job import prepare_job
from deltainc.pipeline.window.join import join_window
from deltainc.tools.sample_data import SampleSpec


def measure(rows: int, days: int, repeat: int) -> dict[str, dict[str, list[float]]]:
    """Per job: seconds and Py4J round trips of building and planning the window of day `days`, A and B."""
    spec = SampleSpec(start=START, days=days, rows_per_day=rows)
    with warm_bench("deltainc-call-sites-", spec, shuffle_partitions=8) as (bench, root):
        day = to_index(START + dt.timedelta(days=days - 1))
        found: dict[str, dict[str, list[float]]] = {}
        for name, job in feature_jobs(bench, bench.spark, spec, root).items():
            prepared = prepare_job(job, bench.spark, bench.settings)
            runs = found[name] = {f"{side} {what}": [] for side in "AB" for what in ("s", "trips")}
            for _ in range(repeat):
                for side in "AB":
                    setattr(pyspark_errors, "_enable_debugging_cache", side == "B")  # noqa: B010 (typed None)
                    with round_trips() as trips:
                        started = time.perf_counter()
                        join_window(prepared, day, day).output._jdf.queryExecution().executedPlan()
                        runs[f"{side} s"].append(time.perf_counter() - started)
                    runs[f"{side} trips"].append(trips[0])
        setattr(pyspark_errors, "_enable_debugging_cache", False)  # noqa: B010
        return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    size_options(parser, rows=200, days=12, repeat=8)
    args = parser.parse_args()
    found = measure(args.rows_per_day, args.days, args.repeat)
    print(f"A window's join built and planned (day {args.days}, {args.rows_per_day} rows/day), {args.repeat} "
          "alternated pairs per job; A = deltainc's session (call sites not recorded), B = recorded\n")  # fmt: skip
    print("| job | A median s | B median s | B / A | A round trips | B round trips |\n|---|---:|---:|---:|---:|---:|")
    for name, runs in found.items():
        a, b, trips_a, trips_b = (statistics.median(runs[key]) for key in ("A s", "B s", "A trips", "B trips"))
        print(f"| {name} | {a:.3f} | {b:.3f} | {b / a:.2f} | {trips_a:.0f} | {trips_b:.0f} |")


if __name__ == "__main__":
    main()
