"""A/B: how long a second `deltainc run JOB` takes to exit 3 while another run holds the job's lock.

A, as shipped: the command takes the lock before it starts Spark (`hold_lock` in `pipeline.write_command`,
delta-rs), so it is refused before a JVM exists. B, the order before issue 47: the same command with `hold_lock`
made a no-op, so it starts Spark, prepares the job and finds the lock only where the windows begin
(`controller._execute`). The lock is held by this process (live, on this host) on the status benchmark's job with
five days pending; both sides must exit 3 naming the holder. Pairs alternate (A B A B ...) after one warm-up each.
Prints a Markdown table; `--out` also writes it.

    python -m benchmarks.lock_first_ab [--pairs 3] [--data DIR] [--out benchmarks/results/LOCK_FIRST_AB.md]
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.small_job import bench_env, prepare
from benchmarks.timing import publish, report_args

# The same command with the lock taken where it was before: after Spark started and the job was prepared.
LOCK_LATE = """
import contextlib, sys
from deltainc import pipeline
from deltainc.cli import app as cli
from deltainc.pipeline.from_delta_logs import commands

@contextlib.contextmanager
def late(*_args, **_kwargs):
    yield None

commands.hold_lock = late
sys.exit(cli.main(["run", "trx"]))
"""


def _time(command: list[str], root: Path, holder: str) -> float:
    clock = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=bench_env(root), capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - clock
    assert done.returncode == 3 and f"is locked by run {holder}" in done.stderr, done.stderr[-2000:]
    return seconds


def main() -> None:
    args = report_args(__doc__, "--pairs", "bench-data/status")
    root = args.data.absolute()
    prepare(root)
    from deltainc.pipeline.from_delta_logs.commands import hold_lock
    from deltainc.settings import Settings

    first = [sys.executable, "-m", "deltainc", "run", "trx"]
    late = [sys.executable, "-c", LOCK_LATE]
    settings = Settings(state_dir=root / "state", job_dir=root / "jobs")
    with hold_lock("trx", settings) as lease:  # the run that holds the lock: this process
        for warm_up in (first, late):  # file caches, the Ivy cache
            _time(warm_up, root, lease.run_id)
        a_times, b_times = [], []
        for _ in range(args.pairs):
            a_times.append(_time(first, root, lease.run_id))
            b_times.append(_time(late, root, lease.run_id))
    ratios = sorted(a / b for a, b in zip(a_times, b_times, strict=True))
    load = os.getloadavg()[0]
    lines = [
        f"# a second run refused: lock first vs lock after Spark ({dt.date.today()}, {os.cpu_count()} cores, "
        f"load average {load:.1f} at the end)",
        "",
        f"`python -m benchmarks.lock_first_ab --pairs {args.pairs}`: the whole `deltainc run trx` process until it "
        "exits 3, while this process holds the job's lock; alternating pairs after one warm-up each.",
        "",
        "| side | median s | min s | max s |",
        "|---|---:|---:|---:|",
        f"| A: lock first (no JVM) | {statistics.median(a_times):.2f} | {min(a_times):.2f} | {max(a_times):.2f} |",
        f"| B: lock after Spark | {statistics.median(b_times):.2f} | {min(b_times):.2f} | {max(b_times):.2f} |",
        "",
        f"A/B per pair: median {statistics.median(ratios):.3f} (min {ratios[0]:.3f}, max {ratios[-1]:.3f}). "
        "Spark jobs: A none (no JVM), B the session start and the job's preparation; Delta commits: none on either "
        "side (the lock's compare and swap is refused before it commits).",
    ]
    publish(lines, args.out)


if __name__ == "__main__":
    main()
