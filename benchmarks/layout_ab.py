"""The target's layouts side by side: a warm daily run into a target that holds its open rows apart (`IsFinal`)
and into one of the earlier layout, for a day job and an hour job, alternately in one process.

In one warm SparkSession (local[2], 8 shuffle partitions, temporary folders) the sample sources are generated
(`benchmarks.data.ensure_sources`); the hour job reads the same rows with unit i as hour i (RecDate a TIMESTAMP,
sources sorted by it, not partitioned). For each job kind two targets are brought to unit D - 1, one per layout:

- day: `["RecDate", "IsFinal"]` (the default) against `["RecDate"]` (the layout of earlier versions);
- hour: `["IsFinal"]` (the default) against `[]` (earlier versions: not partitioned, files sorted by RecDate).

Then, `--repeat` times, the run for unit D of each layout, in alternating order, each target and state restored
to D - 1 before its run (Delta RESTORE). Each run reports its seconds, its Spark jobs (status tracker) and the
target commit as the run log records it from Delta's operation metrics.

    python -m benchmarks.layout_ab --rows-per-day 2000 --days 40 [--repeat 3]

It prints a Markdown table, the load average during the runs and the goal's verdict (the `layout` scenario of
`python -m benchmarks.run`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from benchmarks.data import Sources
from benchmarks.scenarios import Bench, SparkJobs, restore, size_options, snapshot, warm_bench
from deltainc import pipeline
from deltainc.demo.sample_data import SampleSpec
from deltainc.pipeline.job.job_config import JobConfig

START = dt.date(2025, 1, 1)
HOUR_ZERO = dt.datetime(2025, 1, 1)
LAYOUTS: dict[str, dict[str, list[str]]] = {
    "day": {"IsFinal apart (default)": ["RecDate", "IsFinal"], "earlier (RecDate)": ["RecDate"]},
    "hour": {"IsFinal apart (default)": ["IsFinal"], "earlier (none, sorted)": []},
}


def hour_sources(spark: SparkSession, sources: Sources, root: Path) -> tuple[str, str]:
    """The day sources with unit i as hour i: RecDate a TIMESTAMP, rows sorted by it, not partitioned."""
    paths = []
    for name, path in (("A", sources.path_a), ("B", sources.path_b)):
        frame = spark.read.format("delta").load(path)
        hours = F.datediff(F.col("RecDate"), F.lit(START)) * 3600
        shifted = frame.withColumn("RecDate", F.timestamp_seconds(F.lit(int(HOUR_ZERO.timestamp())) + hours))
        out = str(root / "hour_sources" / name)
        shifted.repartitionByRange(8, "RecDate").write.format("delta").save(out)
        paths.append(out)
    return paths[0], paths[1]


def hour_job(day_job: JobConfig, path_a: str, path_b: str) -> JobConfig:
    """The day job's settings over the hour sources, in hours (start_date, a date, is hour zero's day)."""
    config = day_job.model_dump(mode="json", exclude_unset=True)
    config["source_a"]["path"], config["source_b"]["path"] = path_a, path_b
    config["join"]["time_uom"] = "hour"
    return JobConfig.model_validate(config)


def measure_pairs(
    bench: Bench, jobs: dict[str, JobConfig], until: Any, repeat: int, echo: Callable[[str], None]
) -> dict[str, list[dict[str, Any]]]:
    """Each job run for `until` from its restored state, alternately, `repeat` times."""
    counter = SparkJobs(bench.spark)
    before = {name: snapshot(bench, job) for name, job in jobs.items()}
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in jobs}
    names = list(jobs)
    for number in range(repeat + 1):  # the first round warms up and is not kept
        order = names if number % 2 == 0 else names[::-1]
        for name in order:
            restore(bench, before[name])
            load = os.getloadavg()[0]
            counter.begin()
            started = time.perf_counter()
            windows = pipeline.run(jobs[name], until=until, spark=bench.spark, settings=bench.settings).windows
            seconds = time.perf_counter() - started
            spark_jobs = counter.end()
            record = windows[0].record
            row = {
                "seconds": seconds,
                "spark_jobs": spark_jobs,
                "load": load,
                "files_read_target": record.files_read_target,
                "files_added": record.target_files_added,
                "files_removed": record.target_files_removed,
                "rows_copied": record.target_rows_copied,
                "deletion_vectors": record.target_deletion_vectors,
                "rows_deleted": record.rows_deleted,
            }
            echo(f"{'warm-up' if number == 0 else f'round {number}'}: {name}: {seconds:.2f} s, {spark_jobs} jobs")
            if number:
                results[name].append(row)
        for name in names:
            restore(bench, before[name])
    return results


GOAL = (
    "on the default layout a forward write removes and adds whole files: no row copied, no deletion vector, and "
    "for the day job no file of the target read; at most 12 Spark jobs per window (issue 48)"
)


def _goal(results: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The goal's verdict, judged on the default layout's last run of each job kind."""
    parts = []
    for name, rows in results.items():
        kind, layout = name.split(": ", 1)
        if not layout.startswith("IsFinal"):
            continue
        last = rows[-1]
        whole = last["rows_copied"] == 0 and last["deletion_vectors"] == 0
        whole = whole and (kind != "day" or last["files_read_target"] == 0)
        jobs = statistics.median(r["spark_jobs"] for r in rows)
        parts.append((f"{kind}: whole files {'yes' if whole else 'NO'}, {jobs:.0f} Spark jobs", whole and jobs <= 12))
    verdict = "MET" if parts and all(ok for _text, ok in parts) else "MISSED"
    return [f"Goal: {GOAL}. Measured: {'; '.join(text for text, _ok in parts)}: **{verdict}**."]


def render(results: dict[str, list[dict[str, Any]]], meta: dict[str, Any]) -> list[str]:
    """The Markdown report: a row per job kind and layout (medians of the seconds, the last run's commit), the goal."""
    lines = [
        "# The target's layouts: a warm daily run, open rows apart (IsFinal) or not",
        "",
        f"`python -m benchmarks.layout_ab --rows-per-day {meta['rows']} --days {meta['days']} "
        f"--repeat {meta['repeat']}`; Spark {meta['spark']}, local[2], 8 shuffle partitions; left join, look back 2, "
        f"wait 11, one unit per run; load average (1 min) {meta['load']} during the runs.",
        "",
        "| job | layout | median s | runs (s) | Spark jobs | target files read | files added / removed | "
        "rows copied | deletion vectors | rows deleted |",
        "|---|---|---:|---|---:|---:|---|---:|---:|---:|",
    ]
    for name, rows in results.items():
        kind, layout = name.split(": ", 1)
        last = rows[-1]
        runs = ", ".join(f"{r['seconds']:.2f}" for r in rows)
        lines.append(
            f"| {kind} | {layout} | {statistics.median(r['seconds'] for r in rows):.2f} | "
            f"{runs} | "
            f"{', '.join(str(r['spark_jobs']) for r in rows)} | {last['files_read_target']} | "
            f"{last['files_added']} / {last['files_removed']} | {last['rows_copied']} | {last['deletion_vectors']} | "
            f"{last['rows_deleted']} |"
        )
    return [*lines, "", *_goal(results)]


def measure(rows: int, days: int, repeat: int, kinds: list[str]) -> tuple[dict[str, list[dict[str, Any]]], str, str]:
    """Every layout's run of unit D per job kind, alternately on restored tables; the runs, Spark's version and the
    range of the load average."""

    def echo(message: str) -> None:
        print(f"layout_ab: {message}", file=sys.stderr, flush=True)

    spec = SampleSpec(start=START, days=days, rows_per_day=rows)
    results: dict[str, list[dict[str, Any]]] = {}
    loads: list[float] = []
    with warm_bench("deltainc-layout-ab-", spec, shuffle_partitions=8) as (shared, root):
        spark, sources = shared.spark, shared.sources
        for kind in kinds:
            jobs: dict[str, JobConfig] = {}
            bench = shared
            for number, (layout, partition_by) in enumerate(LAYOUTS[kind].items()):
                bench = replace(shared, work=root / kind / str(number), partition_by=tuple(partition_by), echo=echo)
                job = bench.job(f"{kind}_{number}", max_window=0)
                if kind == "hour":
                    job = hour_job(job, *hour_sources(spark, sources, root / kind / str(number)))
                last = HOUR_ZERO + dt.timedelta(hours=days - 2) if kind == "hour" else sources.day(days - 1)
                pipeline.run(job, until=last, spark=spark, settings=bench.settings)
                jobs[f"{kind}: {layout}"] = job
            until = HOUR_ZERO + dt.timedelta(hours=days - 1) if kind == "hour" else sources.day(days)
            measured = measure_pairs(bench, jobs, until, repeat, echo)
            results.update(measured)
            loads += [r["load"] for runs in measured.values() for r in runs]
        return results, spark.version, f"{min(loads):.1f}-{max(loads):.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.layout_ab", description=__doc__.splitlines()[0])
    size_options(parser, rows=2000, days=40, repeat=3)
    parser.add_argument("--kinds", default="day,hour", help="day, hour or both (default)")
    args = parser.parse_args(argv)
    results, spark, load = measure(args.rows_per_day, args.days, args.repeat, args.kinds.split(","))
    meta = {"rows": args.rows_per_day, "days": args.days, "repeat": args.repeat, "spark": spark, "load": load}
    print("\n".join(render(results, meta)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
