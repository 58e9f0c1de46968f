"""What a command costs as a fresh process: the ones that need no JVM, and a Spark start with its jars on disk.

On a small job brought up to date (10 days x 50 rows, every window processed), each command is the real
command line in a new process, as cron or a scheduler starts it: `run` with nothing pending, `status`,
`unlock` (nothing to remove) and `validate` (from the Delta logs), and `validate` of the same job with a
`join_cond` (which only Spark's analyzer resolves, so it starts Spark). Then a Spark start with Delta, from the jar
files an earlier start resolved (what deltainc does) against one that resolves `spark.jars.packages` again
(a fresh jar-list cache), alternating. Medians of `repeat` runs after one warm-up each, as Markdown (the
`fresh-commands` scenario of `python -m benchmarks.run`).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession

from benchmarks.small_job import bench_env, prepare
from benchmarks.timing import Measurement, run_process

__all__ = ["fresh_commands"]

START_SPARK = """
from deltainc.settings import load_settings
from deltainc.spark import get_spark
spark = get_spark(load_settings(spark={"master": "local[2]"}))
assert spark.range(1).count() == 1
"""


def _row(name: str, times: list[float], jvm: str) -> str:
    return f"| {name} | {Measurement(name, times).cell()} | {jvm} |"


def fresh_commands(spark: SparkSession, root: Path, repeat: int) -> list[str]:
    """The report: each command `repeat` times as a fresh process on the job `trx` under `root` (prepared on
    `spark`, once), then the Spark starts.

    Example: `lines = fresh_commands(spark, Path("bench-data/fresh-commands"), 3)`.
    """
    prepare(spark, root, until=None)
    job = (root / "jobs" / "trx.toml").read_text()
    with_cond = job.replace('name = "trx"', 'name = "trx_cond"').replace("/target", "/target_cond")
    (root / "jobs" / "trx_cond.toml").write_text(
        with_cond.replace("[join]\n", '[join]\njoin_cond = "A.RecDate >= B.RecDate - 1"\n')
    )
    cli, env = [sys.executable, "-m", "deltainc"], bench_env(root)
    commands = {
        "`deltainc run trx` (nothing pending)": ([*cli, "run", "trx"], "none"),
        "`deltainc status trx`": ([*cli, "status", "trx"], "none"),
        "`deltainc unlock trx`": ([*cli, "unlock", "trx"], "none"),
        "`deltainc validate trx`": ([*cli, "validate", "trx"], "none"),
        "`deltainc validate trx_cond` (a job with a `join_cond`)": ([*cli, "validate", "trx_cond"], "starts Spark"),
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for command, _jvm in commands.values():
        run_process(command, root, env)  # warm-up: file caches
    for _ in range(repeat):
        for name, (command, _jvm) in commands.items():
            times[name].append(run_process(command, root, env).seconds)
    start = [sys.executable, "-c", START_SPARK]
    on_disk, resolving = [], []
    run_process(start, root, env)  # warm-up: remembers the jar files
    for _ in range(max(3, repeat // 2)):
        on_disk.append(run_process(start, root, env).seconds)
        with tempfile.TemporaryDirectory() as empty:  # no remembered jar list: Spark resolves the packages
            resolving.append(run_process(start, root, {**env, "XDG_CACHE_HOME": empty}).seconds)
    ratios = sorted(a / b for a, b in zip(on_disk, resolving, strict=True))
    return [
        "The whole process of each command, on a job with nothing pending (10 days x 50 rows, all processed), in "
        "turn, after one warm-up each.",
        "",
        "| command | seconds, median [min-max] | JVM |",
        "|---|---|---|",
        *(_row(name, times[name], jvm) for name, (_command, jvm) in commands.items()),
        _row("a Spark start with Delta, jars from disk (`spark.jars`)", on_disk, "starts Spark"),
        _row("a Spark start with Delta, resolving `spark.jars.packages`", resolving, "starts Spark"),
        "",
        f"Jars from disk / resolving, per pair: median {statistics.median(ratios):.3f} "
        f"(min {ratios[0]:.3f}, max {ratios[-1]:.3f}). Spark jobs and Delta commits: none in the first four "
        "commands; `validate` of a job with a `join_cond` starts Spark to resolve it (no Spark job) and commits "
        "nothing.",
    ]
