"""Daily runs at the end of a long history on the two kinds of sources (issue 62): sources that got the day's
partitions just before the run, as in production, and sources that did not change since the last run, as in the
`floor` scenario (whose target and state are RESTOREd between repetitions).

On a working copy of the command line's sources (days 1..N-k, one file per RecDate partition), the job is brought to
day N-k by one untimed run (kept beside the sources, RESTOREd when a later run reuses it). Then, for each of the
last k days: both sources get the day's partitions (one file each, untimed); the daily run and the floor run in
alternating order ("new day"); the job's tables and the floor's are RESTOREd to before those runs and the two run
again in the other order ("unchanged": the sources are as the previous run saw them; both sides start from a table
just RESTOREd). The floor is what any incremental job must do:
the day's window joined by `inc_join` over the two Delta sources, read as a user would, appended to a Delta table.
The first day is a warm-up and not recorded. Each sample keeps its seconds, Spark jobs (every thread's), Delta
commits and, for the run, its run-log phases and files read.
The `source-kinds` scenario of `python -m benchmarks.run`.
"""

from __future__ import annotations

import json
import shutil
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path

from benchmarks.bench import Bench, job_tables, restore, snapshot
from benchmarks.data import append_day, copy_days, table_version
from benchmarks.machine import load_average
from benchmarks.scenarios.new_days import append_floor
from benchmarks.spark_jobs import SparkJobs
from deltainc.pipeline.job.job_config import JobConfig

__all__ = ["Sample", "measure", "render", "source_kinds"]

KINDS = ("new day", "unchanged")


@dataclass(frozen=True)
class Sample:
    """One timed call: which kind of sources, which day, the daily run or the floor, and what it cost."""

    kind: str
    day: str
    what: str  # "run" or "floor"
    first: bool  # ran first of its day's pair
    seconds: float
    jobs: int
    commits: int  # Delta commits: the run's on the target, run log and lock; the floor's on its table
    phases: dict[str, float] = field(default_factory=dict)  # the run's: outside the window, join, write, bookkeeping
    files: dict[str, int] = field(default_factory=dict)  # the run's files read of A, B and the target


def _versions(bench: Bench, paths: list[str]) -> int:
    """The sum of the tables' latest versions, a table not made yet counting -1: its first commit is version 0."""
    return sum(table_version(bench.spark, p) if (Path(p) / "_delta_log").is_dir() else -1 for p in paths)


def _timed(jobs: SparkJobs, work: Callable[[], object]) -> tuple[float, int, object]:
    jobs.begin()
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, jobs.end(), result


def prepared(bench: Bench, last_days: int) -> tuple[Bench, JobConfig]:
    """The bench working in `--data`/source-kinds-<N-k> (kept between runs, beside the sources) and its job over
    copies of days 1..N-k of A and B, brought to day N-k by one run, untimed; a later run with the same sources and
    `last_days` finds it there and RESTOREs its five tables to the versions they had when it was made."""
    spark, sources = bench.spark, bench.sources
    first = sources.spec.days - last_days + 1
    home = replace(bench, work=Path(sources.path_a).parent.parent / f"source-kinds-{first - 1}")
    path_a, path_b = str(home.work / "A"), str(home.work / "B")
    job = home.job("source-kinds", max_window=0, path_a=path_a, path_b=path_b)
    marker, key = home.work / "_prepared.json", {"spec": sources.spec.days, "rows": sources.spec.rows_per_day}
    kept = json.loads(marker.read_text()) if marker.is_file() else {}
    if kept.get("key") == key:
        restore(home, kept["versions"])
        return home, job
    shutil.rmtree(home.work, ignore_errors=True)
    bench.echo(f"  copying days 1..{first - 1} of A and B, and bringing the job to day {first - 1} (untimed, kept)")
    copy_days(spark, sources.path_a, path_a, sources.day(first - 1))
    copy_days(spark, sources.path_b, path_b, sources.day(first - 1))
    home.run(job, first - 1)
    versions = {**snapshot(home, job), path_a: table_version(spark, path_a), path_b: table_version(spark, path_b)}
    marker.write_text(json.dumps({"key": key, "versions": versions}))
    return home, job


def measure(bench: Bench, last_days: int) -> list[Sample]:
    """The samples of the last `last_days` days of the bench's history (the first a warm-up, not kept)."""
    bench, job = prepared(bench, last_days)
    spark, sources = bench.spark, bench.sources
    path_a, path_b, floor = str(job.source_a.path), str(job.source_b.path), str(bench.work / "floor")  # type: ignore[union-attr]
    shutil.rmtree(floor, ignore_errors=True)
    first = sources.spec.days - last_days + 1
    tables, jobs, samples = job_tables(bench, job), SparkJobs(spark), []
    for offset, number in enumerate(range(first, sources.spec.days + 1)):
        day = sources.day(number)
        append_day(spark, sources.path_a, path_a, day)
        append_day(spark, sources.path_b, path_b, day)
        # Both sides repeat on the same restored state: the job's tables and the floor's (a table RESTOREd in this
        # session has its Delta snapshot rebuilt on its next use; restoring one side only would charge that to it).
        before = {**snapshot(bench, job), **({floor: table_version(spark, floor)} if Path(floor).exists() else {})}
        for k, kind in enumerate(KINDS):
            if kind == "unchanged":
                restore(bench, before)
            order = ("run", "floor") if (offset + k) % 2 == 0 else ("floor", "run")
            for position, what in enumerate(order):
                watched = tables if what == "run" else [floor]
                versions = _versions(bench, watched)
                work = (
                    partial(bench.daily, job, number)
                    if what == "run"
                    else partial(append_floor, spark, job, day, Path(floor))
                )
                seconds, count, report = _timed(jobs, work)
                commits = _versions(bench, watched) - versions
                phases: dict[str, float] = {}
                files: dict[str, int] = {}
                if what == "run":
                    record = report.record  # type: ignore[attr-defined]
                    phases = {
                        "outside the window": seconds - record.duration_s,
                        "spark start": record.spark_start_s or 0.0,
                        "join": record.join_s or 0.0,
                        "write": record.write_s or 0.0,
                        "bookkeeping": record.bookkeeping_s or 0.0,
                    }
                    files = {"A": record.files_read_a, "B": record.files_read_b, "target": record.files_read_target}
                bench.echo(f"    {day} {kind:9} {what:5} {seconds:6.2f} s {count:3} jobs {commits} commits")
                if offset > 0:
                    samples.append(Sample(kind, day.isoformat(), what, position == 0, seconds, count, commits,
                                          phases, files))  # fmt: skip
    return samples


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def render(samples: list[Sample], rows_per_day: int, days: int, load: str) -> list[str]:
    """The report: per kind of sources, the run's and the floor's medians, their ratio, Spark jobs, commits, and
    where the run's time goes."""
    lines = [
        f"# Daily runs on sources that get a new day and on sources that do not change ({rows_per_day:,} rows a day, "
        f"{days} days of history)",
        "",
        f"{len({s.day for s in samples})} days measured, each on both kinds, run and floor alternating; "
        f"load average {load}.",
        "",
        "| sources | run s, median [min-max] | floor s, median [min-max] | run / floor | Spark jobs run / floor "
        "| Delta commits run | run: outside the window / join / write / bookkeeping s | files read A / B / target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kind in KINDS:
        runs = [s for s in samples if s.kind == kind and s.what == "run"]
        floors = [s for s in samples if s.kind == kind and s.what == "floor"]
        if not runs or not floors:
            continue
        r, f = [s.seconds for s in runs], [s.seconds for s in floors]
        phase = " / ".join(f"{_median([s.phases[p] for s in runs]):.2f}"
                           for p in ("outside the window", "join", "write", "bookkeeping"))  # fmt: skip
        files = " / ".join(f"{_median([s.files[t] for s in runs]):.0f}" for t in ("A", "B", "target"))
        lines.append(
            f"| {kind} | {_median(r):.2f} [{min(r):.2f}-{max(r):.2f}] | {_median(f):.2f} [{min(f):.2f}-{max(f):.2f}] "
            f"| **{_median(r) / _median(f):.2f}x** | {_median([s.jobs for s in runs]):.0f} / "
            f"{_median([s.jobs for s in floors]):.0f} | {_median([s.commits for s in runs]):.0f} | {phase} | {files} |"
        )
    lines += ["", "By which ran first of its pair (medians, seconds; Spark jobs in brackets):", ""]
    lines += ["| sources | run first: run | then floor | floor first: floor | then run |", "|---|---|---|---|---|"]
    for kind in KINDS:

        def cell(what: str, first: bool, kind: str = kind) -> str:
            chosen = [s for s in samples if s.kind == kind and s.what == what and s.first == first]
            return f"{_median([s.seconds for s in chosen]):.2f} ({_median([s.jobs for s in chosen]):.0f})"

        lines.append(f"| {kind} | {cell('run', True)} | {cell('floor', False)} | {cell('floor', True)} "
                     f"| {cell('run', False)} |")  # fmt: skip
    return lines


def source_kinds(bench: Bench, last_days: int, raw: Path | None = None) -> list[str]:
    """The report of `measure` over the bench's sources, the samples written as JSON to `raw` when given.

    Example: `lines = source_kinds(bench, 6)` measures days N-4..N after one warm-up day.
    """
    if last_days < 2 or last_days >= bench.sources.spec.days:
        raise ValueError(f"source-kinds: last days ({last_days}) must be at least 2 and fewer than the history's days")
    samples = measure(bench, last_days)
    if raw is not None:
        raw.write_text(json.dumps([asdict(s) for s in samples], indent=1))
    return render(samples, bench.sources.spec.rows_per_day, bench.sources.spec.days, load_average())
