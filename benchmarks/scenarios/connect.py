"""A/B: one `deltainc` command as a Spark Connect client of a warm `deltainc serve`, against the same command
starting its own local JVM, both as a whole fresh process on the same job.

Two commands are measured: `run` with nothing pending (all fixed cost) and `run` of one pending day, with
the target and the state put back (copied from a snapshot) before every run, so that each run does the same
work. Pairs alternate (A B A B ...) after one warm-up of each. The `connect` scenario of `python -m benchmarks.run`
(Spark 4): the job is prepared on the harness's session, each command timed whole as a fresh process.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from benchmarks.small_job import bench_env, delta_commits, prepare
from benchmarks.timing import run_process

ROWS_PER_DAY = 2000
PROCESSED = "2025-03-09"  # the snapshot's watermark: one day (2025-03-10) pending


def _prepare(spark: SparkSession, root: Path) -> None:
    """The small job at ROWS_PER_DAY rows a day, processed up to PROCESSED on `spark`, and a snapshot of it."""
    if (root / "snapshot").is_dir():
        return
    prepare(spark, root, until=PROCESSED, rows_per_day=ROWS_PER_DAY)
    (root / "snapshot").mkdir()
    for name in ("target", "state"):
        shutil.copytree(root / name, root / "snapshot" / name)


def _restore(root: Path, processed: bool) -> None:
    """Put the target and state back to the snapshot (`processed`: then run them up to the last day)."""
    source = root / ("done" if processed else "snapshot")
    for name in ("target", "state"):
        shutil.rmtree(root / name, ignore_errors=True)
        shutil.copytree(source / name, root / name)


def _time(command: list[str], root: Path) -> tuple[float, dict[str, object]]:
    done = run_process(command, root, bench_env(root))
    return done.seconds, json.loads(done.stdout)


def _pairs(
    pairs: int, root: Path, before: Callable[[], None], local: list[str], remote: list[str]
) -> tuple[list[float], list[float], tuple[int, int]]:
    """Alternate local (A) and Connect client (B) runs, `before` each; the answers must agree. Returns the
    times and the Delta commits one run of each side made."""
    a_times, b_times = [], []
    commits = (0, 0)
    for i in range(pairs + 1):  # the first pair warms up (file caches, the server's JIT) and is not counted
        before()
        start = delta_commits(root)
        a, a_doc = _time(local, root)
        a_commits = delta_commits(root) - start
        before()
        start = delta_commits(root)
        b, b_doc = _time(remote, root)
        commits = (a_commits, delta_commits(root) - start)
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


def measure(spark: SparkSession, data: Path, pairs: int) -> dict[str, Any]:
    """Both commands on both sides, `pairs` alternating pairs each, on a job under `data` prepared on `spark`; the
    samples and the load around them."""
    root = data.absolute()
    _prepare(spark, root)
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
        f"{measured['pairs']} pairs ({os.cpu_count()} cores, load average "
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
