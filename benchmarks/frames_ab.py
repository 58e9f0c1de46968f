"""frames-ab: the engine's property-test queries over frames from `createDataFrame` against inline tables.

The engine's property tests (tests/join/test_engine_window_invariance.py) build small A and B frames from rows and
join them once per day of a window, hundreds of queries per test. `spark.createDataFrame(rows)` makes a Python RDD,
so each scan goes through Python workers; `tests/frames.py` makes a SQL inline table the JVM holds. In one warm
session (the suite's worker settings: local[2], 2 shuffle partitions), this runs the same 12 daily windows of a
left and a full outer join (24 queries, as the tests do) over each kind of frame, alternately, `--pairs` times,
and reports the seconds and Spark jobs per round.

    python -m benchmarks.frames_ab --pairs 5
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from benchmarks.report import load_average
from benchmarks.scenarios import SparkJobs
from deltainc import IncJoinSettings, inc_join
from deltainc.settings import Settings, SparkSettings
from deltainc.spark import get_spark

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from frames import frame  # noqa: E402  (tests/frames.py, the suite's helper)

DAY0 = dt.date(2025, 1, 1)
A_SCHEMA, B_SCHEMA = "k int, ia int, RecDate date", "k int, ib int, RecDate date"
Frames = Callable[[SparkSession, list[tuple[int, int, dt.date]], str], DataFrame]


def _rows() -> tuple[list[tuple[int, int, dt.date]], list[tuple[int, int, dt.date]]]:
    """14 A rows over 8 days and their B partners (most of them), late or early by up to a few days."""
    rng = random.Random(1)
    a = [(rng.randint(0, 5), i, DAY0 + dt.timedelta(days=rng.randint(0, 7))) for i in range(14)]
    b = [(k, i, day + dt.timedelta(days=rng.randint(-4, 6))) for k, i, day in a if i % 4 != 3]
    return a, b


def one_round(spark: SparkSession, make: Frames) -> int:
    """The rows of 12 daily windows of a left and a full outer join over frames made by `make`."""
    a, b = _rows()
    df_a, df_b = make(spark, a, A_SCHEMA), make(spark, b, B_SCHEMA)
    options = IncJoinSettings(include_waiting=True, enforce_sliding_join_window=True, b_waits_for_a=True)
    rows = 0
    for how in ("left", "full_outer"):
        for offset in range(12):
            day = DAY0 + dt.timedelta(days=offset)
            rows += len(inc_join(df_a, df_b, how, ["k"], None, 2, 3, day, day, options).collect())
    return rows


def _create_data_frame(spark: SparkSession, rows: list[tuple[int, int, dt.date]], schema: str) -> DataFrame:
    return spark.createDataFrame(rows, schema)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.frames_ab", description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="deltainc-frames-ab-"))
    spark_settings = SparkSettings(master="local[2]", shuffle_partitions=2, ui_enabled=False, log_level="ERROR")
    spark = get_spark(
        Settings(spark=spark_settings, warehouse_dir=scratch, state_dir=scratch / "_deltainc"),
        extra_conf={"spark.default.parallelism": "2"},
    )
    sides: dict[str, Frames] = {"createDataFrame": _create_data_frame, "inline table (tests/frames.py)": frame}
    counts = {name: one_round(spark, make) for name, make in sides.items()}  # warm-up, and the same rows each way
    if len(set(counts.values())) != 1:
        raise SystemExit(f"the two kinds of frame gave different rows: {counts}")
    seconds: dict[str, list[float]] = {name: [] for name in sides}
    jobs: dict[str, list[int]] = {name: [] for name in sides}
    counter = SparkJobs(spark)  # one counter: each measurement is a job group of its own
    for _ in range(args.pairs):
        for name, make in sides.items():
            counter.begin()
            started = time.perf_counter()
            one_round(spark, make)
            seconds[name].append(time.perf_counter() - started)
            jobs[name].append(counter.end())
    print(f"24 daily-window joins ({counts[next(iter(sides))]} rows), {args.pairs} alternated pairs, one session;")
    print(f"1-minute load average at the end: {load_average()}\n")
    print("| frames | median s | min-max s | Spark jobs |\n|---|---:|---:|---:|")
    for name in sides:
        low, high = min(seconds[name]), max(seconds[name])
        print(f"| {name} | {statistics.median(seconds[name]):.2f} | {low:.2f}-{high:.2f} | {jobs[name][-1]} |")
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
