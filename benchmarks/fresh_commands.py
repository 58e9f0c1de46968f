"""What a command costs as a fresh process: the ones that need no JVM, and a Spark start with its jars on disk.

On a small job brought up to date (10 days x 50 rows, every window processed), each command is the real
command line in a new process, as cron or a scheduler starts it: `run` with nothing pending, `status`,
`unlock` (nothing to remove) and `validate` (from the Delta logs), and `validate` of the same job with a
`join_cond` (which only Spark's analyzer resolves, so it starts Spark). Then a Spark start with Delta, from the jar
files an earlier start resolved (what deltainc does) against one that resolves `spark.jars.packages` again
(a fresh jar-list cache), alternating. Medians of `--repeat` runs after one warm-up each; Markdown on stdout.

    python -m benchmarks.fresh_commands [--repeat 5] [--data bench-data/fresh] \
        [--out fresh.md]
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.small_job import bench_env, prepare
from benchmarks.timing import publish, report_args

START_SPARK = """
from deltainc.settings import load_settings
from deltainc.spark import get_spark
spark = get_spark(load_settings(spark={"master": "local[2]"}))
assert spark.range(1).count() == 1
"""


def _seconds(command: list[str], root: Path, env: dict[str, str] | None = None) -> float:
    clock = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=env or bench_env(root), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr[-2000:]}")
    return time.perf_counter() - clock


def _row(name: str, times: list[float], jvm: str) -> str:
    return f"| {name} | {statistics.median(times):.2f} | {min(times):.2f} | {max(times):.2f} | {jvm} |"


def main() -> None:
    args = report_args(__doc__, "--repeat", "bench-data/fresh")
    root = args.data.absolute()
    prepare(root, until=None)
    job = (root / "jobs" / "trx.toml").read_text()
    with_cond = job.replace('name = "trx"', 'name = "trx_cond"').replace("/target", "/target_cond")
    (root / "jobs" / "trx_cond.toml").write_text(
        with_cond.replace("[join]\n", '[join]\njoin_cond = "A.RecDate >= B.RecDate - 1"\n')
    )
    cli = [sys.executable, "-m", "deltainc"]
    commands = {
        "`deltainc run trx` (nothing pending)": ([*cli, "run", "trx"], "none"),
        "`deltainc status trx`": ([*cli, "status", "trx"], "none"),
        "`deltainc unlock trx`": ([*cli, "unlock", "trx"], "none"),
        "`deltainc validate trx`": ([*cli, "validate", "trx"], "none"),
        "`deltainc validate trx_cond` (a job with a `join_cond`)": ([*cli, "validate", "trx_cond"], "starts Spark"),
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for command, _jvm in commands.values():
        _seconds(command, root)  # warm-up: file caches
    for _ in range(args.repeat):
        for name, (command, _jvm) in commands.items():
            times[name].append(_seconds(command, root))
    start = [sys.executable, "-c", START_SPARK]
    on_disk, resolving = [], []
    _seconds(start, root)  # warm-up: remembers the jar files
    for _ in range(max(3, args.repeat // 2)):
        on_disk.append(_seconds(start, root))
        with tempfile.TemporaryDirectory() as empty:  # no remembered jar list: Spark resolves the packages
            resolving.append(_seconds(start, root, {**bench_env(root), "XDG_CACHE_HOME": empty}))
    ratios = sorted(a / b for a, b in zip(on_disk, resolving, strict=True))
    lines = [
        f"# Commands as fresh processes ({dt.date.today()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f})",
        "",
        f"`python -m benchmarks.fresh_commands --repeat {args.repeat}`: the whole process of each command, on a job "
        "with nothing pending (10 days x 50 rows, all processed), in turn, after one warm-up each.",
        "",
        "| command | median s | min s | max s | JVM |",
        "|---|---:|---:|---:|---|",
        *(_row(name, times[name], jvm) for name, (_command, jvm) in commands.items()),
        _row("a Spark start with Delta, jars from disk (`spark.jars`)", on_disk, "starts Spark"),
        _row("a Spark start with Delta, resolving `spark.jars.packages`", resolving, "starts Spark"),
        "",
        f"Jars from disk / resolving, per pair: median {statistics.median(ratios):.3f} "
        f"(min {ratios[0]:.3f}, max {ratios[-1]:.3f}). Spark jobs and Delta commits: none in the first four "
        "commands; `validate` of a job with a `join_cond` starts Spark to resolve it (no Spark job) and commits "
        "nothing.",
    ]
    publish(lines, args.out)


if __name__ == "__main__":
    main()
