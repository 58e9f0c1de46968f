"""A/B of the too-late search: A rows from the target (today) against the old search over both sources.

The old search (deltainc up to commit 3fb0239, reproduced below as `_old_rows`) read A over `late_horizon`
units and B over `late_horizon + look_back_time` units before the window, found the A rows that matched nothing
in their sliding join window (a left anti join) and joined them with the window's B rows; it ran in a second
thread from the window's start, beside the join and the write. The new one joins the target's final A rows
before the window, plus the window's own output, with the window's B rows; it starts once the output is
computed, beside the write. A third variant turns the search off (`late_horizon = 0`) for reference.

Each sample restores the target, the run log and the lock table to the same versions (Delta RESTORE), then
runs `pipeline.run(job, until=day D)`; the variants alternate in one process (A B C, C B A, ...), so that the
machine's load drifts over all of them alike. The old variant is put back in this process only, by wrapping
two functions of `deltainc.pipeline.window.run` (nothing in the package changes):

- `_null_keys`, which the window called right after it started the old search, submits the old search first;
- `search_too_late` (called after the output is computed) returns that search instead of starting the new one.

Spark jobs are counted over every thread (the job group of the measuring thread, plus the jobs started without a
group meanwhile: the search's thread). The files each search reads are counted from the Delta logs for the
ranges it prunes to (the tables are partitioned by RecDate, so that is what Delta's partition pruning keeps).

    python -m benchmarks.ab_too_late --rows-per-day 2000 --days 40 --repeat 3
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from benchmarks.data import ensure_sources, table_version
from benchmarks.report import load_average, machine_info
from benchmarks.scenarios import Bench, restore, snapshot
from deltainc.join.engine import JoinSpec, read_units, unit_time
from deltainc.join.match_condition import match_condition, side_column
from deltainc.join.unit_columns import UNIT
from deltainc.join.windows import Window, to_index
from deltainc.pipeline.delta.log_stats import files_in_units
from deltainc.pipeline.job.config import JobConfig
from deltainc.pipeline.job.join_plan import Identity
from deltainc.pipeline.prepared_job import PreparedJob
from deltainc.pipeline.state.store import state_paths
from deltainc.pipeline.window import run as window_run
from deltainc.pipeline.window.too_late_writes import LateRows
from deltainc.settings import Settings, SparkSettings
from deltainc.spark import get_spark
from deltainc.tools.sample_data import SampleSpec

START = dt.date(2024, 1, 1)
VARIANTS = ("new", "old", "off")


def _old_rows(
    df_a: DataFrame, df_b: DataFrame, spec: JoinSpec, identity: Identity, a_keys: list[str], b_keys: list[str], h: int
) -> DataFrame:
    """The old search's rows: B rows of the window matching an A row that matched no B row in its sliding join
    window (A read in [s - h, e - mw - 1], B in [s - h - lb, e])."""
    assert spec.start is not None and spec.end is not None
    s, e, lb, mw = spec.start, spec.end, spec.look_back_time, spec.max_waiting_time
    alias_a, alias_b = spec.settings.alias_a, spec.settings.alias_b
    a = read_units(df_a, spec, s - h, e - mw - 1).alias(alias_a)
    b_all = read_units(df_b, spec, s - h - lb, e)

    def col_a(name: str) -> Column:
        return side_column(alias_a, name)

    def col_b(name: str) -> Column:
        return side_column(alias_b, name)

    timed_out = a.join(b_all.alias(alias_b), match_condition(spec, UNIT), "left_anti").alias(alias_a)
    arrived = b_all.where(F.col(UNIT) >= F.lit(s)).alias(alias_b)
    delay = col_b(UNIT) - col_a(UNIT)
    pairs = timed_out.join(arrived, match_condition(spec, None) & (delay > F.lit(mw)) & (delay <= F.lit(h)))
    columns: dict[str, Column] = {name: col_a(src) for src, name in zip(a_keys, identity.a_keys, strict=True)}
    columns[identity.a_rec] = col_a(spec.settings.inc_col_name)
    for src, name in zip(b_keys, identity.b_keys, strict=True):
        columns.setdefault(name, col_b(src))
    if identity.b_rec is not None:
        columns.setdefault(identity.b_rec, col_b(spec.settings.inc_col_name))
    columns[spec.layout.inc_col] = unit_time(col_b(UNIT), spec.settings.time_uom)
    columns["TooLateBy"] = (delay - F.lit(mw)).cast("int")
    return pairs.select(*[column.alias(name) for name, column in columns.items()])


def _old_count(prepared: PreparedJob, window: Window) -> LateRows | None:
    """The old `count_too_late` (count only: the benchmark's job keeps no late_rows table)."""
    job, search = prepared.job, prepared.join.late_search
    if search is None:
        return None
    spec = replace(search.spec, start=window.start, end=window.end)
    keys, b_keys = list(job.target.keys), list(job.target.b_keys)
    df_a = prepared.join.frames["source_a"]
    return LateRows(_old_rows(df_a, search.rows, spec, prepared.identity, keys, b_keys, search.horizon).count(), None)


@contextmanager
def old_search(pool: ThreadPoolExecutor) -> Iterator[None]:
    """Inside: windows search their too-late rows the old way, started where the old window started it."""
    null_keys, search = window_run._null_keys, getattr(window_run, "search_too_late")  # noqa: B009
    started: list[Future[LateRows | None]] = []

    def first_the_search(prepared: PreparedJob, window: Window) -> tuple[int | None, int | None]:
        started.append(pool.submit(_old_count, prepared, window))
        return null_keys(prepared, window)

    def the_old_one(*_args: Any) -> Future[LateRows | None]:
        return started.pop()

    setattr(window_run, "_null_keys", first_the_search)  # noqa: B010 - a module's function, in this process only
    setattr(window_run, "search_too_late", the_old_one)  # noqa: B010
    try:
        yield
    finally:
        setattr(window_run, "_null_keys", null_keys)  # noqa: B010
        setattr(window_run, "search_too_late", search)  # noqa: B010


class AllJobs:
    """Spark jobs started between begin() and end() in any thread: those of the job group set in this thread,
    plus those started without a group meanwhile (a thread of the pipeline's own, such as the search's)."""

    def __init__(self, spark: SparkSession) -> None:
        self._context, self._number, self._group, self._loose = spark.sparkContext, 0, "", set[int]()

    def begin(self) -> None:
        self._number += 1
        self._group = f"deltainc-ab-too-late-{self._number}"
        self._loose = set(self._context.statusTracker().getJobIdsForGroup(None))
        self._context.setJobGroup(self._group, "deltainc benchmark measurement")

    def end(self) -> int:
        tracker = self._context.statusTracker()
        grouped = len(tracker.getJobIdsForGroup(self._group))
        loose = len(set(tracker.getJobIdsForGroup(None)) - self._loose)
        self._context.setJobGroup("deltainc-ab-idle", "deltainc benchmark, not measured")
        return grouped + loose


def search_files(job: JobConfig, day: dt.date, variant: str) -> tuple[int, int, int]:
    """Files the variant's search reads on the daily window `day` (A or target, B, and their MiB), from the logs."""
    s = e = to_index(day, job.join.time_uom)
    h, lb, mw, inc, uom = job.join.horizon, job.join.look_back_time, job.join.max_waiting_time, "RecDate", "day"
    path_a, path_b, target = job.source_a.path, job.source_b.path if job.source_b else None, job.target.path
    assert path_a is not None and path_b is not None and target is not None
    if variant == "old":
        a = files_in_units(path_a, inc, uom, s - h, e - mw - 1)
        b = files_in_units(path_b, inc, uom, s - h - lb, e)
    elif variant == "new":
        a = files_in_units(target, inc, uom, s - h, s - 1)
        b = files_in_units(path_b, inc, uom, s, e)
    else:
        a = b = (0, 0)
    return a[0], b[0], (a[1] + b[1]) // 2**20


def measure_once(
    bench: Bench, job: JobConfig, day: int, tables: list[str], jobs: AllJobs, variant: str, pool: ThreadPoolExecutor
) -> dict[str, Any]:
    """One daily run of `job` for day `day` with the variant's search: seconds, Spark jobs, commits, too-late rows."""
    before = [table_version(bench.spark, p) for p in tables]
    if variant == "off":
        job = job.model_copy(update={"join": job.join.model_copy(update={"late_horizon": 0})})
    jobs.begin()
    started = time.perf_counter()
    if variant == "old":
        with old_search(pool):
            report = bench.daily(job, day).record
    else:
        report = bench.daily(job, day).record
    seconds = time.perf_counter() - started
    spark_jobs = jobs.end()
    after = [table_version(bench.spark, p) for p in tables]
    return {
        "seconds": seconds,
        "spark_jobs": spark_jobs,
        "commits": [a - b for a, b in zip(after, before, strict=True)],
        "too_late": report.rows_too_late,
        "files": search_files(job, bench.sources.day(day), variant),
    }


def render(args: argparse.Namespace, samples: dict[str, list[dict[str, Any]]], load: tuple[str, str]) -> str:
    """The results as Markdown."""
    lines = [
        "# A/B: the too-late search, A rows from the target against the old search over both sources",
        "",
        f"Run {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC with "
        f"`python -m benchmarks.ab_too_late {' '.join(sys.argv[1:])}`; R = {args.rows_per_day} rows/day, "
        f"D = {args.days} days of history, day D timed, a left join (look back {args.look_back}, wait "
        f"{args.max_wait}, late_horizon the default {2 * args.max_wait}, counted, no late_rows table), "
        f"{args.repeat} alternating rounds; load average {load[0]} at start, {load[1]} at end (other developers' "
        f"runs on the same cores); {machine_info().get('nproc (usable / online)', '?')} cores.",
        "",
        "| variant | seconds median [min-max] | Spark jobs (all threads) | commits target / run log / lock | "
        "rows_too_late | search reads: files of A (old) or target (new) / files of B (MiB) |",
        "|---|---|---|---|---|---|",
    ]
    for name, runs in samples.items():
        secs = [r["seconds"] for r in runs]
        commits = " / ".join(str(int(statistics.median(r["commits"][i] for r in runs))) for i in range(3))
        files = runs[-1]["files"]
        lines.append(
            f"| {name} | {statistics.median(secs):.2f} s [{min(secs):.2f}-{max(secs):.2f}] n={len(secs)} | "
            f"{statistics.median(r['spark_jobs'] for r in runs):.0f} | {commits} | {runs[-1]['too_late']} | "
            f"{files[0]} / {files[1]} ({files[2]} MiB) |"
        )
    new, old, off = (statistics.median(r["seconds"] for r in samples[v]) for v in VARIANTS)
    lines += [
        "",
        f"new / old = {new / old:.2f}x; the search's cost over `off`: new {new - off:+.2f} s, old {old - off:+.2f} s "
        "(differences of medians).",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows-per-day", type=int, default=2000)
    parser.add_argument("--days", type=int, default=40, help="days of history D; day D is the timed run")
    parser.add_argument("--repeat", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--max-wait", type=int, default=11)
    parser.add_argument("--look-back", type=int, default=2)
    parser.add_argument("--data", type=Path, default=Path("bench-data"))
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/AB_TOO_LATE.md"))
    args = parser.parse_args(argv)
    logging.getLogger("deltainc").setLevel(logging.WARNING)
    load_start = load_average()
    data = args.data.absolute()
    work = data / "work_ab_too_late"
    settings = Settings(
        spark=SparkSettings(master="local[2]", app_name="deltainc-ab", shuffle_partitions=8, log_level="ERROR"),
        warehouse_dir=work / "warehouse",
        state_dir=work / "_deltainc",
    )
    spark = get_spark(settings)
    spec = SampleSpec(start=START, days=args.days, rows_per_day=args.rows_per_day)
    sources = ensure_sources(spark, data, spec)
    bench = Bench(spark, settings, sources, work, 1, 0.0, args.look_back, args.max_wait, None, print)
    job = bench.job(f"ab_{dt.datetime.now():%H%M%S}", max_window=0)
    print(f"set-up: one-shot run of days 1..{args.days - 1}", flush=True)
    bench.run(job, args.days - 1)
    paths = state_paths(job.state_path(settings.state_dir))
    tables = [str(job.target.path), paths.runs, paths.locks]
    versions = snapshot(bench, job)
    samples: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    jobs = AllJobs(spark)
    warm: Callable[[str], None] = lambda v: print(f"  warm-up {v}", flush=True)  # noqa: E731
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="old-too-late") as pool:
        for variant in VARIANTS:  # one untimed run each: the first run of a code path compiles its plans
            warm(variant)
            restore(bench, versions)
            measure_once(bench, job, args.days, tables, jobs, variant, pool)
        for round_ in range(args.repeat):
            for variant in VARIANTS if round_ % 2 == 0 else VARIANTS[::-1]:
                restore(bench, versions)
                sample = measure_once(bench, job, args.days, tables, jobs, variant, pool)
                samples[variant].append(sample)
                print(
                    f"  {variant:4s} round {round_ + 1}: {sample['seconds']:.2f} s, {sample['spark_jobs']} Spark jobs, "
                    f"too late {sample['too_late']}, files {sample['files']}",
                    flush=True,
                )
    text = render(args, samples, (load_start, load_average()))
    args.out.write_text(text)
    print(text)
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
