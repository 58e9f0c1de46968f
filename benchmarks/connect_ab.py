"""A/B: one `deltainc` command as a Spark Connect client of a warm `deltainc serve`, against the same command
starting its own local JVM, both as a whole fresh process on the same job.

Two commands are measured: `run` with nothing pending (all fixed cost) and `run` of one pending day, with
the target and the state put back (copied from a snapshot) before every run, so that each run does the same
work. Pairs alternate (A B A B ...) after one warm-up of each. Prints a Markdown table; `--out` writes it.

    python -m benchmarks.connect_ab [--pairs 5] [--data bench-data/connect] [--out connect.md]
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.small_job import bench_env, job_file
from benchmarks.timing import publish, report_args

DAYS, ROWS_PER_DAY = 10, 2000
PROCESSED = "2025-03-09"  # the snapshot's watermark: one day (2025-03-10) pending


def _prepare(root: Path) -> None:
    """Sources of DAYS days x ROWS_PER_DAY rows and a snapshot of the job processed up to PROCESSED."""
    if (root / "snapshot").is_dir():
        return
    from deltainc.demo.sample_data import SampleSpec, write_sources
    from deltainc.pipeline.controller import run
    from deltainc.pipeline.job.job_file import load_job
    from deltainc.settings import Settings, SparkSettings
    from deltainc.spark import get_spark

    (root / "jobs").mkdir(parents=True, exist_ok=True)
    (root / "jobs" / "trx.toml").write_text(job_file(root))
    settings = Settings(
        spark=SparkSettings(master="local[2]", shuffle_partitions=2), state_dir=root / "state", job_dir=root / "jobs"
    )
    from pyspark.sql import SparkSession

    ours = SparkSession.getActiveSession() is None  # inside benchmarks.run, its session is reused, not stopped
    spark = get_spark(settings)
    spec = SampleSpec(start=dt.date(2025, 3, 1), days=DAYS, rows_per_day=ROWS_PER_DAY, seed=1)
    write_sources(spark, spec, str(root / "a"), str(root / "b"))
    run(load_job(root / "jobs" / "trx.toml"), until=PROCESSED, spark=spark, settings=settings)
    if ours:
        spark.stop()
    (root / "snapshot").mkdir()
    for name in ("target", "state"):
        shutil.copytree(root / name, root / "snapshot" / name)


def _restore(root: Path, processed: bool) -> None:
    """Put the target and state back to the snapshot (`processed`: then run them up to the last day)."""
    source = root / ("done" if processed else "snapshot")
    for name in ("target", "state"):
        shutil.rmtree(root / name, ignore_errors=True)
        shutil.copytree(source / name, root / name)


def _commits(root: Path) -> int:
    """Delta commits so far in the target and the state tables (their logs' JSON files)."""
    return sum(1 for _ in root.glob("target/_delta_log/*.json")) + sum(
        1 for _ in root.glob("state/*/_delta_log/*.json")
    )


def _time(command: list[str], root: Path) -> tuple[float, dict[str, object]]:
    clock = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=bench_env(root), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr[-2000:]}")
    return time.perf_counter() - clock, json.loads(done.stdout)


def _pairs(
    pairs: int, root: Path, before: Callable[[], None], local: list[str], remote: list[str]
) -> tuple[list[float], list[float], tuple[int, int]]:
    """Alternate local (A) and Connect client (B) runs, `before` each; the answers must agree. Returns the
    times and the Delta commits one run of each side made."""
    a_times, b_times = [], []
    commits = (0, 0)
    for i in range(pairs + 1):  # the first pair warms up (file caches, the server's JIT) and is not counted
        before()
        start = _commits(root)
        a, a_doc = _time(local, root)
        a_commits = _commits(root) - start
        before()
        start = _commits(root)
        b, b_doc = _time(remote, root)
        commits = (a_commits, _commits(root) - start)
        assert a_doc.get("watermark") == b_doc.get("watermark"), (a_doc, b_doc)
        assert len(a_doc.get("windows", [])) == len(b_doc.get("windows", []))  # type: ignore[arg-type]
        if i:
            a_times.append(a)
            b_times.append(b)
    return a_times, b_times, commits


def _row(name: str, measured: dict[str, Any]) -> str:
    a, b, commits = measured["local_s"], measured["connect_s"], measured["commits"]
    ratios = sorted(x / y for x, y in zip(a, b, strict=True))
    return (
        f"| {name} | {statistics.median(a):.2f} ({min(a):.2f}-{max(a):.2f}) | "
        f"{statistics.median(b):.2f} ({min(b):.2f}-{max(b):.2f}) | {statistics.median(ratios):.1f}x | "
        f"{commits[0]} / {commits[1]} |"
    )


def measure(data: Path, pairs: int) -> dict[str, Any]:
    """Both commands on both sides, `pairs` alternating pairs each; the samples and the load around them."""
    root = data.absolute()
    _prepare(root)
    from deltainc.connect_server import start_server

    server, url = start_server(root, bench_env(root))
    try:
        command = [sys.executable, "-m", "deltainc", "run", "trx", "--json"]
        remote = [*command, "--remote", url]
        load_before = os.getloadavg()[0]
        daily = _pairs(pairs, root, lambda: _restore(root, False), command, remote)
        if not (root / "done").is_dir():
            _restore(root, False)
            _time(command, root)
            (root / "done").mkdir()
            for name in ("target", "state"):
                shutil.copytree(root / name, root / "done" / name)
        idle = _pairs(pairs, root, lambda: _restore(root, True), command, remote)
        load_after = os.getloadavg()[0]
    finally:
        server.terminate()
        server.wait(timeout=120)
    return {
        "pairs": pairs,
        "load": [load_before, load_after],
        "daily": {"local_s": daily[0], "connect_s": daily[1], "commits": list(daily[2])},
        "nothing_pending": {"local_s": idle[0], "connect_s": idle[1], "commits": list(idle[2])},
    }


def render(measured: dict[str, Any]) -> list[str]:
    """The Markdown table of `measure`'s result."""
    load_before, load_after = measured["load"]
    return [
        f"`python -m benchmarks.connect_ab --pairs {measured['pairs']}` ({os.cpu_count()} cores, load average "
        f"{load_before:.1f} at the start, {load_after:.1f} at the end): the whole `deltainc run trx --json` process "
        f"on {ROWS_PER_DAY:,} rows a day, A starting a local JVM (`local[2]`), B a client of a warm `deltainc "
        "serve` (`local[2]`); alternating pairs after one warm-up pair; target and state copied back before every "
        "run.",
        "",
        "| command | A: own JVM, s (min-max) | B: Connect client, s (min-max) | A/B | Delta commits A / B |",
        "|---|---:|---:|---:|---:|",
        _row("run, one day pending (a daily run)", measured["daily"]),
        _row("run, nothing pending", measured["nothing_pending"]),
        "",
        "Spark jobs are not counted here: a Connect client has no listener of its own (the in-process counts are",
        "in RESULTS.md).",
    ]


def main() -> None:
    args = report_args(__doc__, "--pairs", "bench-data/connect")
    lines = [f"# A command as a Spark Connect client vs with its own JVM ({dt.date.today()})", ""]
    publish(lines + render(measure(args.data, args.pairs)), args.out)


if __name__ == "__main__":
    main()
