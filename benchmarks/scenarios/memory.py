"""Bounded memory (issue 80): a year's backfill by month as a fresh process, and a warm session running daily
windows back to back; each window's seconds, the driver's heap after it and the session's persisted RDDs.

The `memory` scenario of `python -m benchmarks.run` runs, over the command line's sources (100,000 rows a day over
365 days by default), `python -m benchmarks.scenarios.memory` as a fresh process: the monthly backfill of the whole
history with deltainc's default session (`local[*]`, no memory setting: the driver gets its default share of the
machine) and again with `spark.driver.memory = 1g`, then a warm session that backfills all but the last days and
runs those (60, or half of --days when fewer) a window each, as `deltainc serve` runs window after window. The
child reads the heap and the persisted RDDs through Spark's own monitoring endpoints (benchmarks.spark_memory), so
its session has the UI on; it prints one JSON line a window.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.bench import Bench
from benchmarks.small_job import bench_env
from benchmarks.spark_memory import broadcasts, heap, persisted_rdds, probe_conf, retained_heap
from benchmarks.timing import run_process

__all__ = ["Window", "Run", "measure", "render", "child"]

MB = 1024 * 1024
_MARK = "MEMORY "  # the child's lines the parent reads


@dataclass(frozen=True)
class Window:
    """One window of a child: its place, its dates, its seconds, the heap after it (bytes) and the RDDs left."""

    number: int
    window: str
    seconds: float
    heap_used: int
    heap_old: int
    heap_retained: int  # used just after a full collection: what the session still holds
    rdds: int  # persisted by deltainc's windows (Delta's own snapshot caches apart)
    delta_states: int  # Delta's cached snapshot states: one table version's (two RDDs) per table it scanned
    broadcasts: tuple[str, ...]  # the size each broadcast of the window sent


@dataclass(frozen=True)
class Run:
    """A child's run: what it was, its driver's heap limit, the persisted RDDs before, and its windows."""

    name: str
    driver_memory: str
    rdds_before: int
    windows: tuple[Window, ...]
    wall_s: float


def _ours(rdds: list[str]) -> int:
    """The persisted RDDs that are not Delta's cache of a table's snapshot ("Delta Table State #v - path")."""
    return sum(1 for name in rdds if not name.startswith("Delta Table State"))


def _job_file(bench: Bench, name: str) -> Path:
    """The benchmark's left job over the bench's sources as a job file (target and state under work/name)."""
    job = bench.job(name, max_window=31)
    path = bench.work / name / f"{name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'name = "{name}"\nstart_date = {job.start_date}\nmax_window = 31\n'
        f'[source_a]\npath = "{bench.sources.path_a}"\n[source_b]\npath = "{bench.sources.path_b}"\n'
        f'[join]\nhow = "left"\njoin_cols = ["TrxId"]\nlook_back_time = {bench.look_back}\n'
        f"max_waiting_time = {bench.max_wait}\ninclude_waiting = true\n"
        f'[target]\npath = "{bench.work / name / "target"}"\nkeys = ["TrxId"]\nb_keys = ["SepaId"]\n'
        f'[state]\npath = "{bench.work / name / "state"}"\n'
    )
    return path


def _child(bench: Bench, name: str, args: list[str]) -> Run:
    """`python -m benchmarks.scenarios.memory` with `args` as a fresh process on deltainc's default session."""
    root = bench.work / name
    env = {**bench_env(root), "DELTAINC_SPARK__MASTER": "local[*]"}  # the shipped settings' master
    env.pop("DELTAINC_SPARK__SHUFFLE_PARTITIONS")
    env.pop("SPARK_DRIVER_MEMORY", None)
    repo = str(Path(__file__).resolve().parents[2])  # the child runs in `root`: it finds `benchmarks` here
    env["PYTHONPATH"] = repo + (f":{env['PYTHONPATH']}" if env.get("PYTHONPATH") else "")
    done = run_process([sys.executable, "-m", "benchmarks.scenarios.memory", *args], root, env)
    lines = [json.loads(line[len(_MARK) :]) for line in done.stdout.splitlines() if line.startswith(_MARK)]
    start = lines[0]
    windows = tuple(
        Window(
            w["number"],
            w["window"],
            w["seconds"],
            w["heap"]["used"],
            w["heap"]["old"],
            w["retained"],
            _ours(w["rdds"]),
            len(w["rdds"]) - _ours(w["rdds"]),
            tuple(b["size"] for b in w["broadcasts"]),
        )  # fmt: skip
        for w in lines[1:]
    )
    return Run(name, start["driver_memory"], _ours(start["rdds"]), windows, done.seconds)


def measure(bench: Bench, warm_days: int) -> list[Run]:
    """The monthly backfill twice (default session, then 1g), then the warm session's `warm_days` daily windows."""
    spec = bench.sources.spec
    first, last = spec.start, bench.sources.day(spec.days)
    runs = []
    for name, memory in (("memory-default", None), ("memory-1g", "1g")):
        job = _job_file(bench, name)
        args = [str(job), "--start", str(first), "--end", str(last), *(["--driver-memory", memory] if memory else [])]
        bench.echo(f"memory: {name}")
        runs.append(_child(bench, name, args))
    job = _job_file(bench, "memory-warm")
    daily_from = last - dt.timedelta(days=warm_days - 1)
    bench.echo(f"memory: warm, {warm_days} daily windows")
    runs.append(_child(bench, "memory-warm", [str(job), "--start", str(first), "--end", str(last), "--daily-from",
                                       str(daily_from)]))  # fmt: skip
    return runs


def render(runs: list[Run]) -> list[str]:
    """Each run's windows: seconds, heap used and old generation after it, RDDs left; the goals' numbers."""
    lines: list[str] = []
    for run in runs:
        windows = run.windows if run.name != "memory-warm" else run.windows[-_warm_count(run) :]
        seconds = [w.seconds for w in windows]
        median = statistics.median(seconds) if seconds else 0.0
        worst = max((s / median for s in seconds[1:]), default=0.0) if median else 0.0
        lines += [
            f"# {run.name} (driver memory {run.driver_memory}; {run.wall_s:.0f} s as a whole process)",
            "",
            f"Windows after the first: at most {worst:.2f}x the median window ({median:.1f} s); RDDs deltainc "
            f"left persisted before the run {run.rdds_before}, after each window {sorted({w.rdds for w in windows})} "
            f"(Delta's cached snapshot states apart: {sorted({w.delta_states for w in windows})}).",
        ]
        retained = [w.heap_retained for w in windows]
        if retained:
            lines.append(
                f"Heap retained after a full collection: {min(retained) / MB:.0f}-{max(retained) / MB:.0f} MB over "
                f"the windows (largest / smallest {max(retained) / max(1, min(retained)):.2f}x)."
            )
        if run.name == "memory-warm" and len(windows) >= 5:
            lines.append(
                f"Heap after the last window / after the fifth: retained "
                f"{windows[-1].heap_retained / windows[4].heap_retained:.2f}x; used before the collection "
                f"{windows[-1].heap_used / windows[4].heap_used:.2f}x (a sawtooth between collections)."
            )
        lines += ["", "| # | window | s | heap used MB | old gen MB | retained MB | RDDs | Delta states | "
                  "broadcasts (data size) |", "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
        lines += [f"| {w.number} | {w.window} | {w.seconds:.1f} | {w.heap_used / MB:.0f} | {w.heap_old / MB:.0f} | "
                  f"{w.heap_retained / MB:.0f} | {w.rdds} | {w.delta_states} | "
                  f"{len(w.broadcasts)}: {'; '.join(w.broadcasts)[:200]} |" for w in windows]  # fmt: skip
        lines.append("")
    return lines


def _warm_count(run: Run) -> int:
    """The daily windows of the warm run (its windows after the backfill's)."""
    return sum(1 for w in run.windows if w.number == 0)


def _emit(record: dict[str, Any]) -> None:
    print(_MARK + json.dumps(record), flush=True)


def child(argv: list[str] | None = None) -> None:
    """The fresh process: backfill JOB by month from --start (to the day before --daily-from, when given; then a
    window a day to --end), one JSON line before and one after each window."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("job", type=Path)
    parser.add_argument("--start", required=True)
    parser.add_argument("--end", required=True)
    parser.add_argument("--chunk", default="month")
    parser.add_argument("--driver-memory", help="spark.driver.memory (default: deltainc's default)")
    parser.add_argument("--daily-from", help="backfill to the day before, then run a window a day")
    parser.add_argument("--run-from", help="backfill to the day before, then one `run` to --end (its max_window)")
    args = parser.parse_args(argv)

    from deltainc import pipeline
    from deltainc.settings import load_settings
    from deltainc.spark import get_spark

    conf = {**probe_conf(), **({"spark.driver.memory": args.driver_memory} if args.driver_memory else {})}
    found = load_settings()  # the environment's (the parent's bench_env): master, state, warehouse
    settings = found.model_copy(update={"spark": found.spark.model_copy(update={"conf": {**found.spark.conf, **conf}})})
    spark = get_spark(settings)
    memory = spark.sparkContext.getConf().get("spark.driver.memory", "1g")
    _emit({"driver_memory": memory, "rdds": persisted_rdds(spark), "heap": heap(spark)})
    clock, seen = [time.perf_counter()], [broadcasts(spark, -1)[0]]

    def after(number: int, window: str) -> None:
        seconds = time.perf_counter() - clock[0]
        seen[0], sent = broadcasts(spark, seen[0])
        used = heap(spark)  # before the collection below: the sawtooth as the window left it
        _emit({"number": number, "window": window, "seconds": seconds, "heap": used, "retained": retained_heap(spark),
               "rdds": persisted_rdds(spark), "broadcasts": sent})  # fmt: skip
        clock[0] = time.perf_counter()

    end = dt.date.fromisoformat(args.end)
    daily_from = dt.date.fromisoformat(args.daily_from) if args.daily_from else None
    run_from = dt.date.fromisoformat(args.run_from) if args.run_from else None
    backfill_end = min(d - dt.timedelta(days=1) for d in (daily_from, run_from, end + dt.timedelta(days=1)) if d)
    pipeline.backfill(args.job, args.start, backfill_end, args.chunk, spark, settings,
                      on_progress=lambda number, _total, _report, window: after(number, str(window)))  # fmt: skip
    if run_from is not None:  # one command of several windows
        pipeline.run(args.job, until=end, spark=spark, settings=settings,
                     on_window=lambda report: after(-1, str(report.window)))  # fmt: skip
    day = daily_from
    while day is not None and day <= end:
        pipeline.run(args.job, until=day, spark=spark, settings=settings)
        after(0, str(day))  # 0: a daily window of the warm session
        day += dt.timedelta(days=1)


if __name__ == "__main__":
    child()
