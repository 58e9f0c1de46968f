"""A/B of the forward write: replaceWhere (one overwrite of the two slices) vs. one Delta MERGE.

Both variants process the same daily window from the same restored state, in one process, alternating
(A B, B A, A B, ...), so that the machine's load drifts over both alike. The job is the benchmark's job with
the default target layout (partitioned by the output RecDate, deletion vectors on), brought to
"watermark at day D - 1" by one untimed one-shot run. Reported per variant: seconds (median [min-max]),
Spark jobs, Delta commits per table, and what the target commit did (rows, files added / removed, rows
copied, deletion vectors, target files read); and whether both variants leave the same target.

    python -m benchmarks.ab_forward_write --rows-per-day 100000 --days 365 --repeat 4
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from benchmarks.data import ensure_sources, table_version
from benchmarks.report import load_average, machine_info
from benchmarks.scenarios import Bench, SparkJobs, restore, snapshot
from deltainc.pipeline.job.config import JobConfig
from deltainc.pipeline.state.store import state_paths
from deltainc.settings import Settings, SparkSettings
from deltainc.spark import get_spark
from deltainc.tools.sample_data import SampleSpec

START = dt.date(2024, 1, 1)
VARIANTS = ("replace_where", "merge")


def _fingerprint(spark: SparkSession, path: str) -> tuple[int, int]:
    """(rows, sum of row hashes) of a table: equal for equal multisets of rows, in one Spark job."""
    frame = spark.read.format("delta").load(path)
    row = frame.agg(F.count(F.lit(1)), F.sum(F.hash(*[F.col(f"`{c}`") for c in sorted(frame.columns)]))).first()
    return (int(row[0]), int(row[1] or 0)) if row is not None else (0, 0)


def _variant(job: JobConfig, how: str) -> JobConfig:
    return job.model_copy(update={"target": job.target.model_copy(update={"forward_write": how})})


def measure_once(bench: Bench, job: JobConfig, day: int, tables: list[str], jobs: SparkJobs) -> dict[str, Any]:
    """One daily run of `job` for day `day`: seconds, Spark jobs, commits per table, the target commit."""
    before = [table_version(bench.spark, p) for p in tables]
    jobs.begin()
    started = time.perf_counter()
    report = bench.daily(job, day).record
    seconds = time.perf_counter() - started
    spark_jobs = jobs.end()
    after = [table_version(bench.spark, p) for p in tables]
    return {
        "seconds": seconds,
        "spark_jobs": spark_jobs,
        "commits": [a - b for a, b in zip(after, before, strict=True)],
        "inserted": report.rows_inserted,
        "updated": report.rows_updated,
        "deleted": report.rows_deleted,
        "files_added": report.target_files_added,
        "files_removed": report.target_files_removed,
        "rows_copied": report.target_rows_copied,
        "deletion_vectors": report.target_deletion_vectors,
        "target_files_read": report.files_read_target,
        "target_bytes_read": report.bytes_read_target,
        "fingerprint": _fingerprint(bench.spark, str(job.target.path)),
    }


def _median(samples: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(s[key] for s in samples))


def render(args: argparse.Namespace, samples: dict[str, list[dict[str, Any]]], load: tuple[str, str]) -> str:
    """The results as Markdown."""
    lines = [
        "# A/B: the forward write, replaceWhere vs. one MERGE",
        "",
        f"Run {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC with "
        f"`python -m benchmarks.ab_forward_write {' '.join(sys.argv[1:])}`; "
        f"R = {args.rows_per_day} rows/day, D = {args.days} days of history, day D timed, "
        f"{args.repeat} alternating pairs; load average {load[0]} at start, {load[1]} at end; "
        f"{machine_info().get('nproc (usable / online)', '?')} cores.",
        "",
        "Each sample restores the target, the run log and the lock table to the same versions (Delta RESTORE), "
        "then runs `pipeline.run(job, until=day D)` with `[target] forward_write` set to the variant.",
        "",
        "| variant | seconds median [min-max] | Spark jobs | commits target / run log / lock | rows inserted / "
        "deleted | files added / removed | rows copied | deletion vectors | target files read |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, runs in samples.items():
        secs = [r["seconds"] for r in runs]
        commits = " / ".join(str(int(statistics.median(r["commits"][i] for r in runs))) for i in range(3))
        last = runs[-1]
        lines.append(
            f"| {name} | {statistics.median(secs):.2f} s [{min(secs):.2f}-{max(secs):.2f}] n={len(secs)} | "
            f"{_median(runs, 'spark_jobs'):.0f} | {commits} | {last['inserted']} / {last['deleted']} | "
            f"{last['files_added']} / {last['files_removed']} | {last['rows_copied']} | {last['deletion_vectors']} | "
            f"{last['target_files_read']} ({last['target_bytes_read'] / 2**20:.1f} MiB) |"
        )
    a, b = (statistics.median(r["seconds"] for r in samples[v]) for v in VARIANTS)
    prints = {v: {tuple(r["fingerprint"]) for r in samples[v]} for v in VARIANTS}
    same = len(prints[VARIANTS[0]] | prints[VARIANTS[1]]) == 1
    lines += [
        "",
        f"merge / replace_where = {b / a:.2f}x (ratio of medians). Both variants leave the same target "
        f"(row count and sum of row hashes, every sample): {'yes' if same else 'NO'}.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows-per-day", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=365, help="days of history D; day D is the timed run")
    parser.add_argument("--repeat", type=int, default=4, help="alternating pairs (default 4)")
    parser.add_argument("--max-wait", type=int, default=11)
    parser.add_argument("--look-back", type=int, default=2)
    parser.add_argument("--data", type=Path, default=Path("bench-data"))
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/AB_FORWARD_WRITE.md"))
    args = parser.parse_args(argv)
    logging.getLogger("deltainc").setLevel(logging.WARNING)
    load_start = load_average()
    data = args.data.absolute()
    work = data / "work_ab"
    settings = Settings(
        spark=SparkSettings(
            master="local[2]",
            app_name="deltainc-ab",
            shuffle_partitions=8,
            log_level="ERROR",
            conf={"spark.driver.memory": "4g"},
        ),
        warehouse_dir=work / "warehouse",
        state_dir=work / "_deltainc",
    )
    spark = get_spark(settings)
    spec = SampleSpec(start=START, days=args.days, rows_per_day=args.rows_per_day)
    sources = ensure_sources(spark, data, spec)
    bench = Bench(spark, settings, sources, work, 1, 0.0, args.look_back, args.max_wait, None, print)
    job = bench.job(f"ab_{dt.datetime.now():%H%M%S}", max_window=0)
    print(f"set-up: one-shot run of days 1..{args.days - 1}", flush=True)
    bench.run(job, args.days - 1)
    paths = state_paths(job.state_path(settings.state_dir))
    tables = [str(job.target.path), paths.runs, paths.locks]
    versions = snapshot(bench, job)
    samples: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    jobs = SparkJobs(spark)  # one counter: each measurement gets a job group of its own
    for pair in range(args.repeat):
        order = VARIANTS if pair % 2 == 0 else VARIANTS[::-1]
        for how in order:
            restore(bench, versions)
            sample = measure_once(bench, _variant(job, how), args.days, tables, jobs)
            samples[how].append(sample)
            print(
                f"  {how:13s} pair {pair + 1}: {sample['seconds']:.2f} s, {sample['spark_jobs']} Spark jobs, "
                f"commits {sample['commits']}",
                flush=True,
            )
    text = render(args, samples, (load_start, load_average()))
    args.out.write_text(text)
    print(text)
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
