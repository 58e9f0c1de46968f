"""feature-sources: a daily run of a three-source feature job against the three single-source jobs it replaces.

The spine is the generated ledger; the feature sources are the payment engine's records (`left` on TrxId, keys
SepaId, the benchmark's tolerances), the account's risk score and the account's limit (both `asof` on
AccountName, backward on the transaction's time, 30 days back, delivered up to 2 days late). Each single-source
job joins the ledger with one of them as a two-source job with the same settings (no too-late search, as the
feature job has none). Every job is brought to day D - 1, warmed up with one daily run, then the daily runs of
day D are timed alternately on restored tables. A run's *join work* is its run-log row's `join_s` (the join, its
counts and identity check); the rest (lock, state, the target's write, the run log) is its
*fixed cost*. The goal (issue 25): the three-source run costs at most the sum of the three single-source runs'
join work plus one fixed cost. The fixed cost is split further into the target's write (the row's `write_s`,
which grows with the rows the window rewrites) and the bookkeeping around it, so the report shows which part of
it a job with more sources pays more of. The `feature-sources` scenario of `python -m benchmarks.run`.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from benchmarks.bench import Bench, restore, snapshot
from benchmarks.data import table_version
from benchmarks.machine import load_average
from benchmarks.spark_jobs import SparkJobs
from deltainc.demo.demo_features import risk_scores
from deltainc.demo.sample_data import SampleSpec
from deltainc.pipeline.job.job_config import JobConfig

__all__ = ["feature_jobs", "measure", "render"]

ASOF = {"how": "asof", "join_cols": ["AccountName"], "asof_col": "TrxDT", "asof_col_b": "ValidFrom",
        "look_back_time": 30, "max_waiting_time": 2}  # fmt: skip


def _write(frame: DataFrame, path: Path) -> str:
    frame.repartition("RecDate").write.format("delta").partitionBy("RecDate").save(str(path))
    return str(path)


def feature_jobs(bench: Bench, spark: SparkSession, spec: SampleSpec, root: Path) -> dict[str, JobConfig]:
    """The three-source job and the three single-source jobs, over the same tables."""
    risk = _write(risk_scores(spark, spec), root / "risk")
    limits = risk_scores(spark, dataclasses.replace(spec, seed=spec.seed + 1))
    limit = _write(limits.withColumnRenamed("ScoreId", "LimitId").withColumnRenamed("Risk", "Limit"), root / "limit")
    payment = {"how": "left", "join_cols": ["TrxId"], "look_back_time": bench.look_back,
               "max_waiting_time": bench.max_wait}  # fmt: skip

    def place(name: str) -> dict[str, Any]:
        return {"name": name, "start_date": spec.start, "source_a": {"path": bench.sources.path_a},
                "state": {"path": str(root / name / "state")}}  # fmt: skip

    def target(name: str, **keys: Any) -> dict[str, Any]:
        return {"path": str(root / name / "target"), "keys": ["TrxId"], **keys}

    three = {
        **place("three"),
        "features": [
            {"name": "payment", "path": bench.sources.path_b, **payment, "keys": ["SepaId"]},
            {"name": "risk", "path": risk, **ASOF, "columns": ["ScoreId", "Risk"]},
            {"name": "limit", "path": limit, **ASOF, "columns": ["LimitId", "Limit"]},
        ],
        "target": target("three"),
    }
    singles = {
        "payment": (bench.sources.path_b, {**payment, "late_horizon": 0}, ["SepaId"]),
        "risk": (risk, ASOF, ["ScoreId"]),
        "limit": (limit, ASOF, ["LimitId"]),
    }
    jobs = {"three sources": JobConfig.model_validate(three)}
    for name, (path, join, b_keys) in singles.items():
        job = {**place(name), "source_b": {"path": path}, "join": {**join, "include_waiting": True},
               "target": target(name, b_keys=b_keys)}  # fmt: skip
        jobs[f"{name} only"] = JobConfig.model_validate(job)
    return jobs


def measure(bench: Bench) -> dict[str, Any]:
    """Every job's daily run of the bench's last day, timed alternately on restored tables, `bench.repeat` rounds:
    seconds, join work, Spark jobs, Delta commits.

    Example: `lines = render(measure(bench))`.
    """
    spark, spec, root, repeat = bench.spark, bench.sources.spec, bench.work, bench.repeat
    rows, days = spec.rows_per_day, spec.days
    jobs = feature_jobs(bench, spark, spec, root)
    saved = {}
    for job in jobs.values():
        bench.run(job, days - 1)
        saved[job.name] = snapshot(bench, job)
        bench.daily(job, days)  # warm-up
    counter = SparkJobs(spark)
    found: dict[str, list[dict[str, float]]] = {name: [] for name in jobs}
    order = list(jobs)
    for repetition in range(repeat):
        for name in order[repetition % len(order) :] + order[: repetition % len(order)]:
            job = jobs[name]
            restore(bench, saved[job.name])
            before = snapshot(bench, job)
            counter.begin()
            started = time.perf_counter()
            report = bench.daily(job, days)
            total = time.perf_counter() - started
            commits = sum(table_version(spark, path) - version for path, version in before.items())
            found[name].append(
                {
                    "s": total,
                    "join_s": report.record.join_s or 0.0,
                    "write_s": report.record.write_s or 0.0,
                    "rows_written": report.record.rows_inserted + report.record.rows_updated,
                    "rows_deleted": report.record.rows_deleted,
                    "jobs": counter.end(),
                    "commits": commits,
                    "files_read": report.record.files_read_a + report.record.files_read_b,
                }  # fmt: skip
            )
    return {"rows": rows, "days": days, "repeat": repeat, "load": load_average(), "runs": found}


def render(result: dict[str, Any]) -> list[str]:
    """The Markdown report: medians per job and the goal's verdict."""

    def med(name: str, key: str) -> float:
        return float(statistics.median(run[key] for run in result["runs"][name]))

    lines = [
        f"# Three feature sources in one job vs. three single-source jobs (R = {result['rows']:,}, "
        f"D = {result['days']})",
        "",
        f"Medians of {result['repeat']} alternated daily runs of day D on restored tables; 1-minute load average at "
        f"the end {result['load']}.",
        "",
        "| job | daily run (s) | join work (s) | fixed cost (s) | of it: target write (s) | rows written / "
        "deleted | Spark jobs | Delta commits | files read |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in result["runs"]:
        total, join = med(name, "s"), med(name, "join_s")
        lines.append(
            f"| {name} | {total:.2f} | {join:.2f} | {total - join:.2f} | {med(name, 'write_s'):.2f} | "
            f"{med(name, 'rows_written'):,.0f} / {med(name, 'rows_deleted'):,.0f} | {med(name, 'jobs'):.0f} | "
            f"{med(name, 'commits'):.0f} | {med(name, 'files_read'):.0f} |"
        )
    singles = [name for name in result["runs"] if name != "three sources"]
    joins = sum(med(name, "join_s") for name in singles)
    fixed = statistics.median(med(name, "s") - med(name, "join_s") for name in singles)
    three = med("three sources", "s")
    verdict = "met" if three <= joins + fixed else "missed"
    lines += [
        "",
        f"Goal: the three-source run <= the single-source runs' join work ({joins:.2f} s) + one fixed cost (the "
        f"median of theirs, {fixed:.2f} s) = {joins + fixed:.2f} s. Measured {three:.2f} s: **{verdict}**. The three "
        f"single-source runs together take {sum(med(name, 's') for name in singles):.2f} s.",
    ]
    bookkeeping = statistics.median(med(n, "s") - med(n, "join_s") - med(n, "write_s") for n in singles)
    three_write = med("three sources", "write_s")
    writes = " + ".join(f"{med(n, 'write_s'):.2f}" for n in singles)
    lines += [
        "",
        f"Apart from the target's write, the three-source run (join work, bookkeeping) takes {three - three_write:.2f}"
        f" s, against the single-source runs' join work + one bookkeeping (the median of theirs, {bookkeeping:.2f} s) "
        f"= {joins + bookkeeping:.2f} s. The three-source write takes {three_write:.2f} s, the single-source ones "
        f"{writes} s.",
    ]
    return lines
