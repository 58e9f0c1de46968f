"""A chain of two jobs run day by day as fresh processes (issue 63): one `python -m deltainc run` for the chain
against `python -m deltainc run trx` and `python -m deltainc run trx_scored`, each job in a process of its own.

trx joins the sample ledger (A) with the payment engine (B), left on TrxId (look back 2, wait 11 days); trx_scored,
the demo's second step, takes trx's final matched payments and adds the account's risk score as of the transaction
(a feature job on trx's target, as-of on AccountName). The sources get a new day before each scheduled day, as in
production. The history is caught up untimed; then each day: the day appended to A and B, the jobs' tables copied
aside, the chain's process and the two jobs' processes run in alternating order, the tables copied back between the
two. Each process is timed whole, its Spark jobs counted from its event log, its Delta commits from the tables' logs,
and its Spark start taken from the run log. The `chain` scenario of `python -m benchmarks.run`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks.machine import load_average
from benchmarks.small_job import counted_process, delta_commits
from deltainc.demo.demo_features import risk_scores
from deltainc.demo.jobs import left_job_toml
from deltainc.demo.sample_data import SampleSpec, generate

__all__ = ["Day", "measure", "render", "chain_runs"]

START = dt.date(2025, 3, 1)
JOBS = ("trx", "trx_scored")
TABLES = ("target_trx", "target_trx_scored", "state")  # what a run writes: copied aside and back
COUNTED = ("rows_same_time", "rows_a_late", "rows_b_late", "rows_a_timed_out", "rows_a_waiting", "rows_provisional")


@dataclass(frozen=True)
class Run:
    """One process: whole seconds, Spark jobs, Delta commits, and what its run-log rows say (per job)."""

    seconds: float
    spark_jobs: int
    commits: int
    spark_start_s: float  # the run log's Spark start (the command's first window)
    windows_s: float  # the run log's windows, Spark's start included (the rest is the process around them)
    counts: dict[str, dict[str, int]]  # job -> the run-log row's outcome counts


@dataclass(frozen=True)
class Day:
    """One scheduled day: the chain in one process, and each job in its own."""

    day: str
    chain_first: bool
    chain: Run
    trx: Run
    scored: Run
    load: float  # the 1-minute load average as the day began

    @property
    def budget_s(self) -> float:
        """The goal's bound: the two jobs' daily runs, each without its Spark start, plus one Spark start."""
        runs = self.trx.seconds - self.trx.spark_start_s + self.scored.seconds - self.scored.spark_start_s
        return runs + max(self.trx.spark_start_s, self.scored.spark_start_s)


def job_files(root: Path) -> None:
    """trx and trx_scored in root/jobs."""
    jobs = root / "jobs"
    jobs.mkdir(parents=True, exist_ok=True)
    trx = left_job_toml(
        "trx", f"{root}/a", f"{root}/b", f"{root}/target_trx", start=START, look_back_time=2, max_waiting_time=11
    )
    (jobs / "trx.toml").write_text(trx)
    (jobs / "trx_scored.toml").write_text(
        "\n".join(
            [
                'name = "trx_scored"', f"start_date = {START}",
                "[source_a]", 'job = "trx"', 'where = "JoinType IN (1, 2, 3)"',  # matched: same_time, a_late, b_late
                "[join]", 'alias_a = "Trx"',
                "[[features]]", 'name = "risk"', f'path = "{root}/risk_scores"', 'how = "asof"',
                'join_cols = ["AccountName"]', 'asof_col = "TrxDT"', 'asof_col_b = "ValidFrom"',
                "look_back_time = 30", "max_waiting_time = 2", 'columns = ["ScoreId", "Risk"]',
                "[target]", f'path = "{root}/target_trx_scored"', 'keys = ["TrxId", "SepaId", "RecDate_A"]',
            ]
        ) + "\n"
    )  # fmt: skip


def _append(frame: DataFrame, first: dt.date, last: dt.date, path: Path) -> None:
    """Days [first, last] of `frame` appended to the Delta table at `path`, one file a day."""
    days = frame.where(F.col("RecDate").between(F.lit(first), F.lit(last)))
    days.coalesce(1).write.format("delta").mode("append").partitionBy("RecDate").save(str(path))


def _last_rows(root: Path) -> dict[str, dict[str, Any]]:
    """Each job's newest run-log row, for the jobs that have one (delta-rs: no JVM)."""
    from deltainc.pipeline.state.model import state_paths
    from deltainc.pipeline.state.store import read_runs

    if not (root / "state" / "runs").is_dir():
        return {}
    newest = {job: read_runs(state_paths(str(root / "state")), job, limit=1) for job in JOBS}
    return {job: rows[0] for job, rows in newest.items() if rows}


def _process(root: Path, *jobs: str) -> Run:
    """`python -m deltainc run [JOB]` as a fresh process: the chain without JOB."""
    before_commits, before = delta_commits(root), _last_rows(root)
    command = [sys.executable, "-m", "deltainc", "run", *jobs]
    seconds, spark_jobs, _ = counted_process(command, root, root / "events")
    rows = {job: row for job, row in _last_rows(root).items() if row["run_id"] != before.get(job, {}).get("run_id")}
    if set(rows) != set(jobs or JOBS):
        raise RuntimeError(f"chain benchmark: {' '.join(command)} ran {sorted(rows)}, not {jobs or JOBS}")
    start = sum(float(row["spark_start_s"] or 0.0) for row in rows.values())
    windows = sum(float(row["duration_s"]) for row in rows.values())
    counts = {job: {name: int(row[name] or 0) for name in COUNTED} for job, row in rows.items()}
    return Run(seconds, spark_jobs, delta_commits(root) - before_commits, start, windows, counts)


def _aside(root: Path) -> None:
    """The jobs' tables copied to root/aside."""
    shutil.rmtree(root / "aside", ignore_errors=True)
    for name in TABLES:
        shutil.copytree(root / name, root / "aside" / name)


def _restore(root: Path) -> None:
    """The jobs' tables put back as `_aside` copied them."""
    for name in TABLES:
        shutil.rmtree(root / name)
        shutil.copytree(root / "aside" / name, root / name)


def measure(spark: SparkSession, root: Path, rows_per_day: int, history: int, days: int) -> list[Day]:
    """`history` days caught up by one chain process (untimed), then `days` scheduled days measured."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    spec = SampleSpec(start=START, days=history + days, rows_per_day=rows_per_day, seed=63)
    a, b = (frame.persist(StorageLevel.MEMORY_AND_DISK) for frame in generate(spark, spec, partitions=2))
    risk_scores(spark, spec).write.format("delta").partitionBy("RecDate").save(str(root / "risk_scores"))
    job_files(root)
    last_history = START + dt.timedelta(days=history - 1)
    _append(a, START, last_history, root / "a")
    _append(b, START, last_history, root / "b")
    _process(root)  # the history, unrecorded
    measured = []
    for offset in range(days):
        day, load = last_history + dt.timedelta(days=offset + 1), os.getloadavg()[0]
        _append(a, day, day, root / "a")
        _append(b, day, day, root / "b")
        _aside(root)
        chain_first = offset % 2 == 0
        if chain_first:
            chain = _process(root)
            _restore(root)
        trx, scored = _process(root, "trx"), _process(root, "trx_scored")
        if not chain_first:
            _restore(root)
            chain = _process(root)
        if chain.counts != {**trx.counts, **scored.counts}:
            raise RuntimeError(f"chain benchmark, {day}: the chain's rows {chain.counts} differ from the jobs' alone")
        measured.append(Day(day.isoformat(), chain_first, chain, trx, scored, load))
        print(f"chain: {json.dumps(_summary(measured[-1]))}", file=sys.stderr, flush=True)
    a.unpersist()
    b.unpersist()
    return measured


def _summary(day: Day) -> dict[str, Any]:
    return {"day": day.day, "chain_s": day.chain.seconds, "trx_s": day.trx.seconds, "scored_s": day.scored.seconds}


def _median(values: list[float]) -> float:
    return statistics.median(values)


def render(measured: list[Day], rows_per_day: int, history: int, load: tuple[str, str]) -> list[str]:
    """The report: a row per day, then the medians against the goal (issue 63)."""
    lines = [
        f"# A chain of two jobs run day by day as fresh processes ({rows_per_day} ledger rows a day)",
        "",
        f"{history} days of history caught up first (not counted); then {len(measured)} days, each appended to the "
        "sources, then `python -m deltainc run` (the chain: trx, then trx_scored on trx's final rows) and the two "
        "jobs each as `python -m deltainc run JOB`, alternating which goes first, on the same tables (copied back "
        f"between them; the outcome counts of their run-log rows compared equal). Load average {load[0]} before, "
        f"{load[1]} after.",
        "",
        "Each process: whole seconds (its Spark start / its windows, both from the run log) and Spark jobs / Delta "
        "commits.",
        "",
        "| day | first | chain | jobs / commits | trx alone | jobs / commits | trx_scored alone | jobs / commits "
        "| bound: runs + one start | chain / bound | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for d in measured:
        cells = [f"{r.seconds:.1f} ({r.spark_start_s:.1f} / {r.windows_s:.1f}) | {r.spark_jobs} / {r.commits}"
                 for r in (d.chain, d.trx, d.scored)]  # fmt: skip
        lines.append(
            f"| {d.day} | {'chain' if d.chain_first else 'jobs'} | {' | '.join(cells)} | {d.budget_s:.1f} | "
            f"{d.chain.seconds / d.budget_s:.2f}x | {d.load:.1f} |"
        )
    chain, bound = _median([d.chain.seconds for d in measured]), _median([d.budget_s for d in measured])
    apart = _median([d.trx.seconds + d.scored.seconds for d in measured])
    ratio = chain / bound
    lines += [
        "",
        f"Medians: the chain {chain:.1f} s in one process; the two jobs {apart:.1f} s in two; the bound (the two "
        f"jobs' runs without their Spark starts, plus one start) {bound:.1f} s.",
        "",
        f"- The chain's daily run at most the sum of its jobs' daily runs plus one Spark start: **{ratio:.2f}x** the "
        f"bound ({'MET' if ratio <= 1.0 else 'MISSED'}).",
    ]
    return lines


def chain_runs(spark: SparkSession, root: Path, rows_per_day: int, history: int, days: int) -> list[str]:
    """The report of `measure` under `root` (emptied first), with the load average before and after.

    Example: `lines = chain_runs(spark, Path("bench-data/chain"), 2000, 20, 6)`.
    """
    before = load_average()
    measured = measure(spark, root.absolute(), rows_per_day, history, days)
    return render(measured, rows_per_day, history, (before, load_average()))
