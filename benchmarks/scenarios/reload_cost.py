"""reload-cost (issue 76, item 1): the yearly reload, as one run from start_date and as `backfill --chunk month`,
against the bare Spark join of the same days, alternately in one process on the same sources.

The bare join: every row of A and B of days 1..D, A LEFT JOIN B on TrxId with B's RecDate in A's window
[A - look back, A + max wait], the arrival difference and the waiting time computed (`scenarios.naive_output`),
written in one overwrite partitioned by A's RecDate (a task per day, so a file per day, as the target's layout
gets). Each run is cut at the window's steps (`on_step`); per stretch the Spark jobs, their stages and tasks,
the tasks' executor CPU seconds and the shuffle bytes (benchmarks.stage_costs), the too-late search's jobs
(group `deltainc-too-late`: beside the write, or after it for a window of several units) apart; and the Delta
commits of the run's tables.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from benchmarks.bench import Bench, job_tables
from benchmarks.data import table_version
from benchmarks.naive_join import naive_output
from benchmarks.outcomes import compare
from benchmarks.stage_costs import JobCost, job_costs, last_job
from benchmarks.timing import fmt_ratio
from deltainc import pipeline
from deltainc.pipeline.job.job_config import JobConfig

__all__ = ["Cost", "bare_join", "one_shot", "monthly", "render", "reload_cost"]

GOAL = (
    "the one-shot reload at most 1.5x the bare join written partitioned by A's RecDate; "
    "the monthly backfill at most 1.3x the one-shot"
)
_STRETCH = {  # the step that ends a stretch -> the stretch's name
    "start": "before a window: job, sources, lock, state",
    "read": "join planned, counted and checked",
    "writing": "lock checked",
    "written": "target write",
    "watermark": "too-late rows kept, run-log commit",
    "end": "after the windows",
}
SEARCH = "too-late search (beside the write, or after it for a window of several units)"
_BENCH_GROUP = "deltainc-reload-cost"


@dataclass
class Cost:
    """One run: wall seconds, Delta commits, and its Spark jobs' costs by stretch."""

    name: str
    seconds: float = 0.0
    commits: int = 0
    windows: int = 0
    stretches: dict[str, list[JobCost]] = field(default_factory=dict)

    @property
    def jobs(self) -> list[JobCost]:
        return [job for jobs in self.stretches.values() for job in jobs]

    @property
    def cpu_s(self) -> float:
        return sum(job.cpu_s for job in self.jobs)


class _Marks:
    """The on_step hook: the highest Spark job id at each step, in order."""

    def __init__(self, bench: Bench) -> None:
        self._spark = bench.spark
        self.at: list[tuple[str, int]] = []

    def __call__(self, step: object) -> None:
        self.at.append((str(step), last_job(self._spark, (_BENCH_GROUP,))))


def _measured(bench: Bench, name: str, body: Callable[[_Marks], int]) -> Cost:
    """Run `body` (it returns the run's Delta commits), its jobs cut at the steps its hook was told."""
    spark = bench.spark
    spark.sparkContext.setJobGroup(_BENCH_GROUP, f"reload-cost: {name}")
    marks = _Marks(bench)
    first = last_job(spark, (_BENCH_GROUP,))
    began = time.perf_counter()
    commits = body(marks)
    seconds = time.perf_counter() - began
    final = last_job(spark, (_BENCH_GROUP,))
    spark.sparkContext.setJobGroup("deltainc-bench-idle", "deltainc benchmark, not measured")
    cost = Cost(name, seconds, commits, sum(1 for step, _ in marks.at if step == "start"))
    edges = [*marks.at, ("end", final)]
    for job in job_costs(spark, first, final):
        stretch = SEARCH if job.group == "deltainc-too-late" else next(
            _STRETCH[step] for step, upto in edges if job.job_id <= upto)  # fmt: skip
        cost.stretches.setdefault(stretch, []).append(job)
    return cost


def bare_join(bench: Bench, days: int, path: str) -> Cost:
    """The bare join of days 1..days, overwritten at `path` partitioned by A's RecDate (one commit)."""

    def body(_marks: _Marks) -> int:
        shutil.rmtree(path, ignore_errors=True)
        last = bench.sources.day(days)
        _a, _b, output = naive_output(bench.spark, bench.sources.path_a, bench.sources.path_b, last,
                                      bench.look_back, bench.max_wait)  # fmt: skip
        output.repartition("RecDate_A").write.format("delta").mode("overwrite").partitionBy("RecDate_A").save(path)
        return table_version(bench.spark, path) + 1

    cost = _measured(bench, "bare join", body)
    cost.stretches = {"the join and its partitioned write": cost.jobs}
    return cost


def _fresh_commits(bench: Bench, job: JobConfig) -> int:
    """The commits of a job's tables created by the run (each table's versions 0..v)."""
    paths = [*job_tables(bench, job)]
    if job.target.late_rows_ref is not None and job.target.late_rows_ref.path is not None:
        paths.append(job.target.late_rows_ref.path)
    return sum(table_version(bench.spark, p) + 1 for p in paths if os.path.isdir(os.path.join(p, "_delta_log")))


def one_shot(bench: Bench, job: JobConfig, days: int) -> Cost:
    """One run of `job` (max_window 0) from start_date to day `days`, on a fresh target and state."""

    def body(marks: _Marks) -> int:
        shutil.rmtree(bench.work / job.name, ignore_errors=True)
        pipeline.run(job, until=bench.sources.day(days), spark=bench.spark, settings=bench.settings, on_step=marks)
        return _fresh_commits(bench, job)

    return _measured(bench, "one-shot run", body)


def monthly(bench: Bench, job: JobConfig, days: int) -> Cost:
    """`backfill --chunk month` of days 1..days, on a fresh target and state."""

    def body(marks: _Marks) -> int:
        shutil.rmtree(bench.work / job.name, ignore_errors=True)
        first, last = bench.sources.day(1), bench.sources.day(days)
        pipeline.backfill(job, first, last, "month", bench.spark, bench.settings, on_step=marks)
        return _fresh_commits(bench, job)

    return _measured(bench, "backfill --chunk month", body)


def _median(costs: list[Cost], value: Callable[[Cost], float]) -> float:
    values = sorted(value(c) for c in costs)
    return (
        values[len(values) // 2] if len(values) % 2 else (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2
    )


def _table(runs: list[Cost]) -> list[str]:
    """The last run's stretches: Spark jobs, stages, tasks, CPU seconds, shuffle MB read and written."""
    last = runs[-1]
    lines = ["| stretch | Spark jobs | stages | tasks | task CPU s | shuffle read MB | shuffle write MB |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, jobs in last.stretches.items():
        lines.append(
            f"| {name} | {len(jobs)} | {sum(j.stages for j in jobs)} | {sum(j.tasks for j in jobs)} | "
            f"{sum(j.cpu_s for j in jobs):.1f} | {sum(j.shuffle_read for j in jobs) / 1e6:.0f} | "
            f"{sum(j.shuffle_write for j in jobs) / 1e6:.0f} |"
        )
    return lines


def _top_jobs(cost: Cost, count: int = 8) -> list[str]:
    lines = [
        "| job | stretch | stages | tasks | task CPU s | shuffle write MB | label |",
        "|---|---|---|---|---|---|---|",
    ]
    ranked = sorted(((j, s) for s, jobs in cost.stretches.items() for j in jobs), key=lambda p: -p[0].cpu_s)
    for job, stretch in ranked[:count]:
        lines.append(f"| {job.job_id} | {stretch} | {job.stages} | {job.tasks} | {job.cpu_s:.1f} | "
                     f"{job.shuffle_write / 1e6:.0f} | {job.label.replace('|', '/')} |")  # fmt: skip
    return lines


def render(runs: dict[str, list[Cost]], meta: dict[str, str]) -> list[str]:
    """The Markdown report: medians of seconds and CPU, ratios, Spark jobs and commits, then each run by stretch."""
    bare, shot, month = runs["bare"], runs["one-shot"], runs["monthly"]
    wall = {k: _median(v, lambda c: c.seconds) for k, v in runs.items()}
    cpu = {k: _median(v, lambda c: c.cpu_s) for k, v in runs.items()}
    lines = [
        f"R = {meta['rows']} rows a day x {meta['days']} days; left join, look back {meta['look_back']}, wait "
        f"{meta['max_wait']}; {meta['rounds']} rounds, the three runs alternating (order reversed every other "
        f"round), each on fresh tables. Medians. 1-minute load average during the runs: {meta['load']} (the machine "
        "is shared: prefer the CPU seconds and the counts to wall seconds).",
        "",
        "| run | wall s | task CPU s | Spark jobs | Delta commits | windows | wall / bare | CPU / bare |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for key, label in (("bare", "bare join, partitioned by A's RecDate"), ("one-shot", "one-shot run"),
                       ("monthly", "backfill --chunk month")):  # fmt: skip
        costs = runs[key]
        lines.append(
            f"| {label} | {wall[key]:.1f} | {cpu[key]:.1f} | {len(costs[-1].jobs)} | {costs[-1].commits} | "
            f"{costs[-1].windows} | {fmt_ratio(wall[key] / wall['bare'])} | {fmt_ratio(cpu[key] / cpu['bare'])} |"
        )
    lines += [
        "",
        f"Monthly / one-shot: wall {fmt_ratio(wall['monthly'] / wall['one-shot'])}, CPU "
        f"{fmt_ratio(cpu['monthly'] / cpu['one-shot'])}. Targets equal (one-shot vs monthly): {meta['equal']}.",
        f"Goal: {GOAL}: one-shot {fmt_ratio(wall['one-shot'] / wall['bare'])} wall, monthly/one-shot "
        f"{fmt_ratio(wall['monthly'] / wall['one-shot'])} wall.",
    ]
    for title, costs in (("Bare join", bare), ("One-shot run", shot), ("backfill --chunk month", month)):
        lines += ["", f"{title}, by stretch (last round):", "", *_table(costs), "", "Its costliest jobs:", "",
                  *_top_jobs(costs[-1])]  # fmt: skip
    return lines


def reload_cost(bench: Bench, days: int) -> list[str]:
    """The report over days 1..days of the bench's sources, `bench.repeat` rounds (at least 2: alternation).

    Example: `lines = reload_cost(bench, 365)`.
    """
    shot_job, month_job = bench.job("reload_cost_x", max_window=0), bench.job("reload_cost_m", max_window=31)
    bare_path = str(bench.work / "reload_cost_bare")
    runs: dict[str, list[Cost]] = {"bare": [], "one-shot": [], "monthly": []}
    do = {
        "bare": lambda: bare_join(bench, days, bare_path),
        "one-shot": lambda: one_shot(bench, shot_job, days),
        "monthly": lambda: monthly(bench, month_job, days),
    }
    loads: list[float] = []
    rounds = max(2, bench.repeat)
    for number in range(rounds):
        order = list(do) if number % 2 == 0 else list(reversed(do))
        for key in order:
            loads.append(os.getloadavg()[0])
            cost = do[key]()
            runs[key].append(cost)
            bench.echo(f"    reload-cost round {number + 1}: {key} {cost.seconds:.1f} s, CPU {cost.cpu_s:.1f} s, "
                       f"{len(cost.jobs)} jobs, {cost.commits} commits")  # fmt: skip
    read = bench.spark.read.format("delta")
    equal = compare(read.load(str(shot_job.target.path)), read.load(str(month_job.target.path)))
    meta = {"rows": f"{bench.sources.spec.rows_per_day:,}", "days": str(days), "look_back": str(bench.look_back),
            "max_wait": str(bench.max_wait), "rounds": str(rounds), "load": f"{min(loads):.1f}-{max(loads):.1f}",
            "equal": f"{equal.equal} ({equal})"}  # fmt: skip
    return render(runs, meta)
