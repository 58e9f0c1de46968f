"""How often does a session compile the same query stage again? Spark's compiled-code cache, counted.

Spark compiles each query stage to Java bytecode (whole-stage code generation) and keeps the compiled classes in a
cache of `spark.sql.codegen.cache.maxEntries` entries (Spark's default 100; deltainc's session 5,000). This script
starts one session with `--entries` (default: deltainc's), runs a left join job's daily windows for days 1..D, then
the same windows again for a second job over the same sources, and reports per pass the stages compiled and the
time Spark's own histogram gives them. The setting is fixed when the JVM starts, so each size is its own process:

    python -m benchmarks.codegen_cache --entries 100
    python -m benchmarks.codegen_cache
"""

from __future__ import annotations

import argparse
import datetime as dt
import time

from benchmarks.scenarios import size_options, warm_bench
from deltainc.tools.sample_data import SampleSpec

START = dt.date(2024, 1, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.codegen_cache", description=__doc__.splitlines()[0])
    size_options(parser, rows=5, days=12, repeat=2)
    parser.add_argument("--entries", type=int, help="spark.sql.codegen.cache.maxEntries (default: deltainc's)")
    args = parser.parse_args(argv)
    spec = SampleSpec(start=START, days=args.days, rows_per_day=args.rows_per_day)
    extra = {} if args.entries is None else {"spark.sql.codegen.cache.maxEntries": str(args.entries)}
    with warm_bench("deltainc-codegen-", spec, shuffle_partitions=2, extra_conf=extra) as (bench, _root):
        jvm = bench.spark._jvm
        assert jvm is not None
        histogram = jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME()
        entries = bench.spark.conf.get("spark.sql.codegen.cache.maxEntries")
        print(f"{args.days} daily windows at {args.rows_per_day} rows a day, {args.repeat} passes (a new job each), "
              f"spark.sql.codegen.cache.maxEntries = {entries}\n")  # fmt: skip
        print(
            "| pass | wall s | stages compiled | compile ms (Spark's histogram: mean x count) |\n|---|---:|---:|---:|"
        )
        for number in range(1, args.repeat + 1):
            job = bench.job(f"pass{number}", max_window=1)
            count, total = histogram.getCount(), histogram.getSnapshot().getMean() * histogram.getCount()
            started = time.perf_counter()
            for day in range(1, args.days + 1):
                bench.daily(job, day)
            seconds = time.perf_counter() - started
            compiled = histogram.getCount() - count
            ms = histogram.getSnapshot().getMean() * histogram.getCount() - total
            print(f"| {number} | {seconds:.1f} | {compiled} | {ms:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
