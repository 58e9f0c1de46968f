"""A/B: `deltainc status JOB` answered from the Delta logs (no JVM) against the same command read with Spark.

Both sides are the real command line in a fresh process, on the same job and state: A as shipped, B with the
log reader made to refuse (LogUnreadable), so that the command falls back to Spark exactly as it does for a
catalog table. Pairs alternate (A B A B ...), after one warm-up of each, and the answer of both sides is
checked to be the same. Prints a Markdown table; `--out` also writes it.

    python -m benchmarks.status_ab [--pairs 5] [--data bench-data/status] [--out benchmarks/results/STATUS_AB.md]
"""

from __future__ import annotations

import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.timing import publish, report_args
from deltainc.tools.sample_job import left_job_toml

# The same command, with the log reader refusing so that status reads with Spark.
WITH_SPARK = """
import sys
from deltainc.cli import app as cli
from deltainc.pipeline import log_status

def refuse(*_args, **_kwargs):
    raise log_status.LogUnreadable("benchmark: read with Spark")

log_status.status_from_log = refuse
sys.exit(cli.main(["status", "trx", "--json"]))
"""


def job_file(root: Path) -> str:
    """The benchmarked job `trx`: the sample sources under `root` joined left, one day a window."""
    return left_job_toml(
        "trx", f"{root}/a", f"{root}/b", f"{root}/target", start=dt.date(2025, 3, 1), look_back_time=1,
        max_waiting_time=2, max_window=1,
    )  # fmt: skip


def bench_env(root: Path) -> dict[str, str]:
    """The environment of a benchmarked command: every setting under `root`, none of the caller's."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DELTAINC_", "SPARK_REMOTE"))}
    return {
        **clean,
        "DELTAINC_SETTINGS_FILE": str(root / "no-settings.toml"),
        "DELTAINC_STATE_DIR": str(root / "state"),
        "DELTAINC_JOB_DIR": str(root / "jobs"),
        "DELTAINC_WAREHOUSE_DIR": str(root / "warehouse"),
        "DELTAINC_SPARK_LOG_DIR": str(root / "logs"),
        "DELTAINC_SPARK__MASTER": "local[2]",
        "DELTAINC_SPARK__SHUFFLE_PARTITIONS": "2",
    }


def prepare(root: Path, until: str | None = "2025-03-05") -> None:
    """Sources of 10 days x 50 rows, and a job run up to `until` (by default its first 5 days: 5 windows, 5
    run-log rows; None: every day, so nothing is pending)."""
    if (root / "state" / "runs").is_dir():
        return
    from deltainc.pipeline.controller import run
    from deltainc.pipeline.job.config import load_job
    from deltainc.settings import Settings, SparkSettings
    from deltainc.spark import get_spark
    from deltainc.tools.sample_data import SampleSpec, write_sources

    (root / "jobs").mkdir(parents=True, exist_ok=True)
    (root / "jobs" / "trx.toml").write_text(job_file(root))
    settings = Settings(
        spark=SparkSettings(master="local[2]", shuffle_partitions=2), state_dir=root / "state", job_dir=root / "jobs"
    )
    spark = get_spark(settings)
    write_sources(spark, SampleSpec(start=dt.date(2025, 3, 1), days=10, rows_per_day=50, seed=1),
                  str(root / "a"), str(root / "b"))  # fmt: skip
    run(load_job(root / "jobs" / "trx.toml"), until=until, spark=spark, settings=settings)
    spark.stop()


def _time(command: list[str], root: Path) -> tuple[float, dict[str, object]]:
    clock = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=bench_env(root), capture_output=True, text=True, check=True)
    return time.perf_counter() - clock, json.loads(done.stdout)


def main() -> None:
    args = report_args(__doc__, "--pairs", "bench-data/status")
    root = args.data.absolute()
    prepare(root)
    log_side = [sys.executable, "-m", "deltainc", "status", "trx", "--json"]
    spark_side = [sys.executable, "-c", WITH_SPARK]
    for warm_up in (log_side, spark_side):  # file caches, the Ivy cache
        _time(warm_up, root)
    a_times, b_times = [], []
    for _ in range(args.pairs):
        a, a_doc = _time(log_side, root)
        b, b_doc = _time(spark_side, root)
        assert (a_doc["read_with"], b_doc["read_with"]) == ("delta_log", "spark")
        same = {k: v for k, v in a_doc.items() if k not in ("read_with", "lock")}
        assert same == {k: v for k, v in b_doc.items() if k not in ("read_with", "lock")}, "the answers differ"
        a_times.append(a)
        b_times.append(b)
    ratios = sorted(a / b for a, b in zip(a_times, b_times, strict=True))
    load = os.getloadavg()[0]
    lines = [
        f"# status from the Delta logs vs with Spark ({dt.date.today()}, {os.cpu_count()} cores, "
        f"load average {load:.1f})",
        "",
        f"`python -m benchmarks.status_ab --pairs {args.pairs}`: the whole `deltainc status trx --json` process, "
        "alternating pairs after one warm-up each; both answers checked equal.",
        "",
        "| side | median s | min s | max s |",
        "|---|---:|---:|---:|",
        f"| A: Delta logs, no JVM | {statistics.median(a_times):.2f} | {min(a_times):.2f} | {max(a_times):.2f} |",
        f"| B: Spark | {statistics.median(b_times):.2f} | {min(b_times):.2f} | {max(b_times):.2f} |",
        "",
        f"A/B per pair: median {statistics.median(ratios):.3f} (min {ratios[0]:.3f}, max {ratios[-1]:.3f}); "
        "Spark jobs: A 0, B the session start plus its reads; Delta commits: 0 on both sides.",
    ]
    publish(lines, args.out)


if __name__ == "__main__":
    main()
