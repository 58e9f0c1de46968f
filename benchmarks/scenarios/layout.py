"""The target's layouts side by side: a warm daily run into a target that holds its open rows apart (`IsFinal`)
and into one of the earlier layout, for a day job and an hour job, alternately in the harness's session.

On the harness's small sample sources (`benchmarks.data.ensure_sources`), the hour job reads the same rows with
unit i as hour i (RecDate a TIMESTAMP, sources sorted by it, not partitioned). For each job kind two targets are
brought to unit D - 1, one per layout:

- day: `["RecDate", "IsFinal"]` (the default) against `["RecDate"]` (the layout of earlier versions);
- hour: `["IsFinal"]` (the default) against `[]` (earlier versions: not partitioned, files sorted by RecDate).

Then, `repeat` times, the run for unit D of each layout, in alternating order, each target and state restored
to D - 1 before its run (Delta RESTORE). Each run reports its seconds, its Spark jobs (status tracker) and the
target commit as the run log records it from Delta's operation metrics. A Markdown table, the load average during
the runs and the goal's verdict (the `layout` scenario of `python -m benchmarks.run`).
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from benchmarks.bench import Bench, restore, snapshot
from benchmarks.data import Sources
from benchmarks.spark_jobs import SparkJobs
from deltainc import pipeline
from deltainc.pipeline.job.job_config import JobConfig

__all__ = ["LAYOUTS", "hour_sources", "hour_job", "measure", "render"]

LAYOUTS: dict[str, dict[str, list[str]]] = {
    "day": {"IsFinal apart (default)": ["RecDate", "IsFinal"], "earlier (RecDate)": ["RecDate"]},
    "hour": {"IsFinal apart (default)": ["IsFinal"], "earlier (none, sorted)": []},
}


def hour_sources(spark: SparkSession, sources: Sources, root: Path) -> tuple[str, str]:
    """The day sources with unit i as hour i: RecDate a TIMESTAMP, rows sorted by it, not partitioned."""
    paths = []
    for name, path in (("A", sources.path_a), ("B", sources.path_b)):
        frame = spark.read.format("delta").load(path)
        hours = F.datediff(F.col("RecDate"), F.lit(sources.spec.start)) * 3600
        shifted = frame.withColumn("RecDate", F.timestamp_seconds(F.lit(int(_hour_zero(sources).timestamp())) + hours))
        out = str(root / "hour_sources" / name)
        shifted.repartitionByRange(8, "RecDate").write.format("delta").save(out)
        paths.append(out)
    return paths[0], paths[1]


def _hour_zero(sources: Sources) -> dt.datetime:
    """Hour 0 of the hour sources: midnight of the day sources' first day."""
    return dt.datetime.combine(sources.spec.start, dt.time())


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
        f"R = {meta['rows']:,}, D = {meta['days']}, {meta['repeat']} rounds; Spark {meta['spark']}; left join, look "
        f"back 2, wait 11, one unit per run; load average (1 min) {meta['load']} during the runs.",
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


def measure(shared: Bench, kinds: tuple[str, ...] = ("day", "hour")) -> list[str]:
    """Every layout's run of unit D per job kind, alternately on restored tables, on the bench's sources and
    session; the report.

    Example: `lines = measure(bench)`.
    """
    spark, sources, root, echo = shared.spark, shared.sources, shared.work, shared.echo
    days = sources.spec.days
    hour_zero = _hour_zero(sources)
    results: dict[str, list[dict[str, Any]]] = {}
    loads: list[float] = []
    for kind in kinds:
        jobs: dict[str, JobConfig] = {}
        bench = shared
        for number, (layout, partition_by) in enumerate(LAYOUTS[kind].items()):
            bench = replace(shared, work=root / kind / str(number), partition_by=tuple(partition_by))
            job = bench.job(f"{kind}_{number}", max_window=0)
            if kind == "hour":
                job = hour_job(job, *hour_sources(spark, sources, root / kind / str(number)))
            last = hour_zero + dt.timedelta(hours=days - 2) if kind == "hour" else sources.day(days - 1)
            pipeline.run(job, until=last, spark=spark, settings=bench.settings)
            jobs[f"{kind}: {layout}"] = job
        until = hour_zero + dt.timedelta(hours=days - 1) if kind == "hour" else sources.day(days)
        measured = measure_pairs(bench, jobs, until, shared.repeat, echo)
        results.update(measured)
        loads += [r["load"] for runs in measured.values() for r in runs]
    meta = {"rows": sources.spec.rows_per_day, "days": days, "repeat": shared.repeat, "spark": spark.version,
            "load": f"{min(loads):.1f}-{max(loads):.1f}"}  # fmt: skip
    return render(results, meta)
