"""A small job brought up to date, and the environment of a `deltainc` command run on it as a fresh process.

The scenarios that time whole command lines (`fresh-commands`, `connect`) start `python -m deltainc ...` as cron or
a scheduler would: every setting under one folder, none of the caller's. This module writes that job (`trx`: the
sample sources joined left, one day a window) and runs it up to a day on the harness's session, once per folder.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path

from pyspark.sql import SparkSession

from benchmarks.timing import run_process
from deltainc.demo.jobs import left_job_toml
from deltainc.demo.sample_data import SampleSpec, write_sources
from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.job.job_config import load_job
from deltainc.settings import Settings, SparkSettings

__all__ = ["START", "job_file", "bench_env", "counted_process", "prepare", "delta_commits"]

REPO = Path(__file__).resolve().parents[1]

START = dt.date(2025, 3, 1)


def job_file(root: Path) -> str:
    """The job file of `trx`: the sample sources under `root` joined left, look back 1, wait 2, one day a window.

    Example: `(root / "jobs" / "trx.toml").write_text(job_file(root))`.
    """
    return left_job_toml(
        "trx", f"{root}/a", f"{root}/b", f"{root}/target", start=START, look_back_time=1, max_waiting_time=2,
        max_window=1,
    )  # fmt: skip


def bench_env(root: Path) -> dict[str, str]:
    """The environment of a timed command: every deltainc setting under `root`, none of the caller's (no
    DELTAINC_* variable, no SPARK_REMOTE), Spark on two local cores.

    Example: `subprocess.run([sys.executable, "-m", "deltainc", "status", "trx"], env=bench_env(root), cwd=root)`.
    """
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


def _event_env(root: Path, events: Path) -> dict[str, str]:
    """bench_env's settings, this checkout's packages first, and Spark's event log in `events` (jobs counted)."""
    env = bench_env(root)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    conf = {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": events.absolute().as_uri(),
        "spark.eventLog.compress": "false",  # plain JSON lines, one file
        "spark.eventLog.rolling.enabled": "false",
    }
    env["DELTAINC_SPARK__CONF"] = json.dumps(conf)
    return env


def counted_process(command: list[str], root: Path, events: Path, ok: tuple[int, ...] = (0,)) -> tuple[float, int, str]:
    """Run `command` in `root` as a fresh process with bench_env's settings: its wall seconds, its Spark jobs (from
    its Spark event log, kept in `events`) and its stdout.

    Example: `seconds, jobs, out = counted_process([sys.executable, "-m", "deltainc", "run"], root, root / "ev")`.
    """
    shutil.rmtree(events, ignore_errors=True)
    events.mkdir(parents=True)
    done = run_process(command, root, _event_env(root, events), ok)
    jobs = sum(f.read_text().count('"Event":"SparkListenerJobStart"') for f in events.rglob("*") if f.is_file())
    return done.seconds, jobs, done.stdout


def prepare(spark: SparkSession, root: Path, until: str | None = "2025-03-05", rows_per_day: int = 50) -> None:
    """Sources of 10 days x `rows_per_day` rows under `root` and the job `trx` run up to `until` on `spark` (by
    default its first 5 days: 5 windows, 5 run-log rows; None: every day, so nothing is pending). Does nothing if the
    job has run there before.

    Example: `prepare(spark, Path("bench-data/fresh-commands"), until=None)`.
    """
    if (root / "state" / "runs").is_dir():
        return
    (root / "jobs").mkdir(parents=True, exist_ok=True)
    (root / "jobs" / "trx.toml").write_text(job_file(root))
    settings = Settings(
        spark=SparkSettings(master="local[2]", shuffle_partitions=2), state_dir=root / "state", job_dir=root / "jobs"
    )
    spec = SampleSpec(start=START, days=10, rows_per_day=rows_per_day, seed=1)
    write_sources(spark, spec, str(root / "a"), str(root / "b"))
    run(load_job(root / "jobs" / "trx.toml"), until=until, spark=spark, settings=settings)


def delta_commits(root: Path) -> int:
    """Delta commits so far in the targets (`target*`) and the state tables under `root` (their logs' JSON files)."""
    return sum(1 for _ in root.glob("target*/_delta_log/*.json")) + sum(
        1 for _ in root.glob("state/*/_delta_log/*.json")
    )
