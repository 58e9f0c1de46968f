"""The too-late search's cost: a warm daily run with the search (the job's default `late_horizon`) against the same
run without it (`late_horizon = 0`), alternately in one process on restored tables.

Issue 48 moved the search's A side from the sources to the target: a B row of the window is too late when its keys
match an A row the target holds as final (timed out, or matched by other B rows) whose sliding join window closed
before the B row arrived. The search joins the target's final rows dated `[s - late_horizon, s - 1]`, and the
window's own output, with the window's B rows; it starts once the window's output is computed, beside the write.

Each sample restores the target, the run log and the lock table to the same versions (Delta RESTORE), then runs
`pipeline.run(job, until=day D)`; the two variants alternate (search, off, off, search, ...) after one untimed run
of each, so that the machine's load falls on both alike. Spark jobs are counted over every thread (the search runs
in one of its own); the files the search reads are counted from the Delta logs over the ranges it prunes to. The
`too-late` scenario of `python -m benchmarks.run`.
"""

from __future__ import annotations

import datetime as dt
import statistics
import time
from typing import Any

from benchmarks.bench import Bench, restore, snapshot
from benchmarks.data import table_version
from benchmarks.machine import load_average
from benchmarks.spark_jobs import SparkJobs
from deltainc.pipeline.delta.delta_log_stats import files_in_units
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.time_units import to_index

__all__ = ["VARIANTS", "search_files", "measure", "render"]

VARIANTS = ("search", "off")


def search_files(job: JobConfig, day: dt.date) -> tuple[int, int, int]:
    """Files the search reads on the daily window `day`: of the target (its rows dated `[s - h, s - 1]`), of B
    (the window), and their MiB together, from the Delta logs.

    Example: `target_files, b_files, mib = search_files(job, dt.date(2024, 2, 9))`.
    """
    s = to_index(day, job.join.time_uom)
    inc, uom, horizon = job.join.inc_col, job.join.time_uom, job.join.horizon
    if horizon == 0 or job.source_b is None or job.source_b.path is None or job.target.path is None:
        return 0, 0, 0
    target = files_in_units(job.target.path, inc, uom, s - horizon, s - 1)
    b = files_in_units(job.source_b.path, inc, uom, s, s)
    return target[0], b[0], (target[1] + b[1]) // 2**20


def _sample(bench: Bench, job: JobConfig, day: int, tables: list[str], jobs: SparkJobs) -> dict[str, Any]:
    """One daily run of `job` for day `day`: seconds, Spark jobs of every thread, commits per table, too-late rows."""
    before = [table_version(bench.spark, p) for p in tables]
    jobs.begin()
    started = time.perf_counter()
    record = bench.daily(job, day).record
    seconds = time.perf_counter() - started
    spark_jobs = jobs.end()
    after = [table_version(bench.spark, p) for p in tables]
    commits = [a - b for a, b in zip(after, before, strict=True)]
    return {"seconds": seconds, "spark_jobs": spark_jobs, "commits": commits, "too_late": record.rows_too_late}


def measure(bench: Bench) -> dict[str, Any]:
    """Both variants' daily run of the bench's last day, alternately on restored tables, `bench.repeat` rounds after
    a warm-up.

    Example: `lines = render(measure(bench))`.
    """
    rows, days, repeat = bench.sources.spec.rows_per_day, bench.sources.spec.days, bench.repeat
    job = bench.job("too_late", max_window=0)
    off = job.model_copy(update={"join": job.join.model_copy(update={"late_horizon": 0})})
    variants = {"search": job, "off": off}
    load_start = load_average()
    bench.run(job, days - 1)
    versions = snapshot(bench, job)
    tables = list(versions)
    jobs = SparkJobs(bench.spark)
    samples: dict[str, list[dict[str, Any]]] = {name: [] for name in VARIANTS}
    for name in VARIANTS:  # one untimed run each: the first run of a code path compiles its plans
        restore(bench, versions)
        _sample(bench, variants[name], days, tables, jobs)
    for number in range(repeat):
        for name in VARIANTS if number % 2 == 0 else VARIANTS[::-1]:
            restore(bench, versions)
            samples[name].append(_sample(bench, variants[name], days, tables, jobs))
            bench.echo(f"    too-late: round {number + 1}: {name}: {samples[name][-1]}")
    files = search_files(job, bench.sources.day(days))
    return {"rows": rows, "days": days, "repeat": repeat, "horizon": job.join.horizon, "files": files,
            "load": (load_start, load_average()), "samples": samples}  # fmt: skip


def render(result: dict[str, Any]) -> list[str]:
    """The Markdown report: per variant the seconds, Spark jobs, commits and too-late rows; the search's cost."""
    lines = [
        f"# The too-late search's cost in a daily run (R = {result['rows']:,}, D = {result['days']})",
        "",
        f"A left join (look back 2, wait 11, late_horizon {result['horizon']}, counted, no "
        f"late_rows table), day D timed, {result['repeat']} alternating rounds after one warm-up each; load average "
        f"{result['load'][0]} at the start, {result['load'][1]} at the end.",
        "",
        "| variant | seconds median [min-max] | Spark jobs (all threads) | commits target / run log / lock | "
        "rows_too_late |",
        "|---|---|---|---|---|",
    ]
    medians = {}
    for name, runs in result["samples"].items():
        secs = [r["seconds"] for r in runs]
        medians[name] = statistics.median(secs)
        commits = " / ".join(str(int(statistics.median(r["commits"][i] for r in runs))) for i in range(3))
        lines.append(
            f"| {name} | {medians[name]:.2f} s [{min(secs):.2f}-{max(secs):.2f}] n={len(secs)} | "
            f"{statistics.median(r['spark_jobs'] for r in runs):.0f} | {commits} | {runs[-1]['too_late']} |"
        )
    target, b, mib = result["files"]
    cost = (
        f"The search's cost over a run without it: {medians['search'] - medians['off']:+.2f} s (difference of "
        f"medians; search / off = {medians['search'] / medians['off']:.2f}x). It reads {target} files of the target "
        f"and {b} of B ({mib} MiB), no file of source A."
    )
    return [*lines, "", cost]
