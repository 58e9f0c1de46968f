"""`deltainc explain` on a job of a year of history (issue 64): the bench's sources (100,000 rows a day over 365 days
by default), the target built untimed by monthly windows and then the last `daily_days` days one window a day (so
that a key there has a day-by-day history), the target without a change data feed (the history from the commits).

Four keys are explained, each in the warm bench session (`explain_key`, the library call the command makes) and
once as a fresh process (`python -m deltainc explain JOB TrxId=N`, a JVM started): a row that timed out in the
daily days, a row matched in the middle of the year (a monthly window), a row still waiting on the last day, and a
key nowhere. For each: seconds, Spark jobs, the target's Delta commits (0: explain writes nothing), the files read
of each table as explain reports them, and the commits its history read. The `explain` scenario of
`python -m benchmarks.run`.
"""

from __future__ import annotations

import datetime as dt
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import functions as F

from benchmarks.bench import Bench
from benchmarks.machine import load_average
from benchmarks.small_job import bench_env, counted_process
from benchmarks.spark_jobs import SparkJobs
from benchmarks.timing import run_process
from deltainc import pipeline
from deltainc.join.options import JoinType
from deltainc.pipeline.delta.sources import latest_commit
from deltainc.pipeline.explain.key import KeyExplanation, explain_key
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.state.from_delta_log import read_state_from_log
from deltainc.pipeline.state.model import state_paths
from deltainc.spark_compat import spark_major
from deltainc.time_units import to_index

__all__ = ["Sample", "build", "measure", "render", "explain_time"]


@dataclass(frozen=True)
class Sample:
    """One key explained: its kind, TrxId, the warm seconds and Spark jobs of each repetition, the fresh process's
    seconds and Spark jobs, the target commits meanwhile, and what explain said it read."""

    kind: str
    trx: int
    warm_s: tuple[float, ...]
    warm_jobs: tuple[int, ...]
    fresh_s: float
    fresh_jobs: int
    client_s: float | None  # as a Spark Connect client of a warm `deltainc serve` (Spark 4), None elsewhere
    commits: int
    files: dict[str, int | None]
    history: int
    history_read: str
    outcome: str


def _job_file(job: JobConfig, path: Path) -> Path:
    """`job` as a job file for the fresh process."""
    join, target = job.join, job.target
    path.write_text(
        f'name = "{job.name}"\nstart_date = {job.start_date}\nmax_window = 1\n'
        f'[source_a]\npath = "{job.source_a.path}"\n[source_b]\npath = "{job.source_b.path if job.source_b else ""}"\n'
        f'[join]\nhow = "left"\njoin_cols = ["TrxId"]\nlook_back_time = {join.look_back_time}\n'
        f"max_waiting_time = {join.max_waiting_time}\ninclude_waiting = true\n"
        f'[target]\npath = "{target.path}"\nkeys = ["TrxId"]\nb_keys = ["SepaId"]\n'
        f'[state]\npath = "{job.state_path(Path("unused"))}"\n'
    )
    return path


def build(bench: Bench, daily_days: int) -> JobConfig:
    """The job `explain` over the bench's sources, run to the last day: monthly windows, then `daily_days` daily
    ones. Kept between runs: a job whose watermark is the last day is not built again."""
    job = bench.job("explain", max_window=1)
    spec = bench.sources.spec
    last = bench.sources.day(spec.days)
    state = read_state_from_log(state_paths(job.state_path(bench.settings.state_dir)), job.name)
    if state.watermark == to_index(last):
        return job
    first_daily = bench.sources.day(spec.days - daily_days + 1)
    started = time.perf_counter()
    before = first_daily - dt.timedelta(days=1)
    pipeline.backfill(job, spec.start, before, chunk="month", spark=bench.spark, settings=bench.settings)
    pipeline.run(job, until=last, spark=bench.spark, settings=bench.settings)
    bench.echo(f"explain: the target built in {time.perf_counter() - started:.0f} s")
    return job


def _keys(bench: Bench, job: JobConfig, daily_days: int) -> list[tuple[str, int]]:
    """A TrxId of each kind, read from the target (untimed)."""
    target = bench.spark.read.format("delta").load(job.target.path)
    spec = bench.sources.spec
    daily_from = bench.sources.day(spec.days - daily_days + 3)
    middle = bench.sources.day(spec.days // 2)

    def first(where: str, day_from: dt.date, day_to: dt.date) -> int:
        rows = target.where(where).where(F.col("RecDate").between(day_from, day_to)).agg(F.min("TrxId")).first()
        if rows is None or rows[0] is None:
            raise RuntimeError(f"explain: no row with {where} between {day_from} and {day_to}")
        return int(rows[0])

    last = bench.sources.day(spec.days)
    return [
        ("timed out (daily days)", first(f"JoinType = {int(JoinType.A_TIMED_OUT)}", daily_from, last)),
        ("matched (mid-year, a monthly window)", first(f"JoinType = {int(JoinType.B_LATE)}", middle, middle)),
        ("waiting (last day)", first(f"JoinType = {int(JoinType.A_WAITING)}", last, last)),
        ("nowhere", 0),
    ]


def measure(bench: Bench, daily_days: int) -> list[Sample]:
    """Each key explained `bench.repeat` times warm (keys alternated), then once each as a fresh process."""
    job = build(bench, daily_days)
    keys = _keys(bench, job, daily_days)
    jobs = SparkJobs(bench.spark)
    warm: dict[int, list[tuple[float, int]]] = {trx: [] for _, trx in keys}
    found: dict[int, KeyExplanation] = {}
    version = latest_commit(bench.spark, job.target)["version"]  # type: ignore[index]
    for _ in range(bench.repeat):
        for _, trx in keys:
            jobs.begin()
            started = time.perf_counter()
            found[trx] = explain_key(job, {"TrxId": str(trx)}, bench.spark, bench.settings)
            warm[trx].append((time.perf_counter() - started, jobs.end()))
    root = bench.work / "explain"
    path = _job_file(job, root / "explain.toml")
    commands = {trx: [sys.executable, "-m", "deltainc", "explain", str(path), f"TrxId={trx}"] for _, trx in keys}
    client = _as_clients(root, commands) if spark_major() >= 4 else {}
    samples = []
    for kind, trx in keys:
        seconds, spark_jobs, _ = counted_process(commands[trx], root, root / "events", ok=(0, 1))  # 1: nowhere
        commits = latest_commit(bench.spark, job.target)["version"] - version  # type: ignore[index]
        explained = found[trx]
        outcome = "; ".join(explained.reasons)
        samples.append(Sample(kind, trx, tuple(s for s, _ in warm[trx]), tuple(j for _, j in warm[trx]), seconds,
                              spark_jobs, client.get(trx), commits, explained.files, len(explained.history),
                              explained.history_read, outcome))  # fmt: skip
    return samples


def _as_clients(root: Path, commands: dict[int, list[str]]) -> dict[int, float]:
    """Each command as a fresh process, a Spark Connect client of one `deltainc serve` (started here, after one
    untimed client call that warms it): its wall seconds."""
    from deltainc.connect_server import start_server

    server, url = start_server(root, bench_env(root))
    try:
        first = next(iter(commands.values()))
        run_process([*first, "--remote", url], root, bench_env(root), ok=(0, 1))
        return {trx: run_process([*command, "--remote", url], root, bench_env(root), ok=(0, 1)).seconds
                for trx, command in commands.items()}  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=120)


def render(samples: list[Sample], rows_per_day: int, days: int, daily_days: int, load: str) -> list[str]:
    """The Markdown section: a row per key, and the goal's verdict."""
    lines = [
        f"{rows_per_day:,} rows a day per source over {days} days; the target built by monthly windows, then the last "
        f"{daily_days} days a window a day; no change data feed (the history from the commits). Load average at the "
        f"end: {load}.",
        "",
        "| key | TrxId | warm s (median, n) | Spark jobs | fresh process s | its Spark jobs | Connect client s | "
        "target commits | files read: A / B / target / history | history | why |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in samples:
        files = " / ".join("-" if s.files.get(t) is None and t != "source_b" else str(s.files.get(t, 0))
                           for t in ("source_a", "source_b", "target", "target history"))  # fmt: skip
        lines.append(
            f"| {s.kind} | {s.trx} | {statistics.median(s.warm_s):.2f} ({len(s.warm_s)}) | {max(s.warm_jobs)} | "
            f"{s.fresh_s:.1f} | {s.fresh_jobs} | {'-' if s.client_s is None else f'{s.client_s:.1f}'} | "
            f"{s.commits} | {files} | {s.history} commit(s): {s.history_read} | "
            f"{s.outcome} |"
        )
    worst = max(max(s.warm_s) for s in samples)
    fresh = max(s.fresh_s for s in samples)
    clients = [s.client_s for s in samples if s.client_s is not None]
    as_client = f", the slowest Connect client {max(clients):.1f} s" if clients else ""
    met = [name for name, value in (("warm", worst), ("as a fresh process", fresh), ("as a Connect client",
           max(clients) if clients else None)) if value is not None and value <= 10]  # fmt: skip
    lines += ["", f"Goal (at most 10 s on 2 cores): the slowest warm call {worst:.2f} s, the slowest fresh process "
              f"{fresh:.1f} s (a JVM started){as_client}: met {', '.join(met) or 'nowhere'}."]  # fmt: skip
    return lines


def explain_time(bench: Bench, daily_days: int = 30) -> list[str]:
    """The `explain` scenario's section over `bench`'s sources."""
    samples = measure(bench, daily_days)
    spec = bench.sources.spec
    return render(samples, spec.rows_per_day, spec.days, daily_days, load_average())
