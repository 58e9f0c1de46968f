"""window-phases: where the time and the Spark jobs of one warm daily run go, step by step, next to the floor.

On the harness's small sources and session a left join job (look back 2, wait 11, max_window 0) is brought to
day D - 1; one untimed warm-up daily run and floor run follow, then, alternately and `repeat` times each, with the
job's tables and the floor's table restored (Delta RESTORE) before every run:

- the daily run for day D (`pipeline.run(until=D)`), cut at the steps the pipeline tells its `on_step` hook (a
  window's start, read, writing, written, watermark): each stretch's seconds and the Spark jobs started in it
  (status tracker: the window's own job groups and this thread's), beside the phases its run-log row records
  (`spark_start_s`, `join_s`, `write_s`, `bookkeeping_s`, `duration_s`);
- the floor: read A and B, join day D's window with `deltainc.join.engine.inc_join` (planned), append it to a Delta
  table (written).

Nothing of the package is patched: the stretches come from the hook, the phases from the run log (reading the job
count at each step costs the run a few milliseconds). The `window-phases` scenario of `python -m benchmarks.run`.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass, field

from benchmarks.bench import Bench, restore, snapshot
from benchmarks.data import table_version
from benchmarks.floors import inc_join_window
from benchmarks.spark_jobs import SparkJobs
from benchmarks.timing import Measurement, fmt_ratio
from deltainc.pipeline.job.job_config import JobConfig

__all__ = ["STRETCHES", "RUN_LOG", "Profile", "profile_daily", "profile_floor", "render", "window_phases"]

# The steps on_step tells (deltainc.pipeline.controller.window.Step, compared as text), and the stretches they end.
_STEPS = ("start", "read", "writing", "written", "watermark")
STRETCHES = (
    "before the window: job, sources, lock, state, NULL counts",
    "join, counts and checks (start -> read)",
    "the lock checked (read -> writing)",
    "target write (writing -> written)",
    "too-late search's wait, run-log commit (written -> watermark)",
    "after the window (watermark -> returned)",
)
RUN_LOG = ("spark_start_s", "join_s", "write_s", "bookkeeping_s", "duration_s")  # the run-log row's phases
_FLOOR = ("read A and B, inc_join (planned)", "append (written)")
GOAL = "a warm daily run at most 3 s and 2x the floor, with at most 15 Spark jobs"


@dataclass
class Profile:
    """One run: its wall seconds, its Spark jobs, seconds and jobs per stretch, and its run-log phases (daily)."""

    seconds: float = 0.0
    jobs: int = 0
    stretches: dict[str, tuple[float, int]] = field(default_factory=dict)
    phases: dict[str, float] = field(default_factory=dict)


class _Marks:
    """The on_step hook: the time and the Spark job count at each step of the window (the first of each)."""

    def __init__(self, jobs: SparkJobs) -> None:
        self._jobs = jobs
        self.at: dict[str, tuple[float, int]] = {}

    def __call__(self, step: object) -> None:
        self.at.setdefault(str(step), (time.perf_counter(), self._jobs.now()))


def _cut(begin: float, end: tuple[float, int], names: tuple[str, ...], marks: list[tuple[float, int]]) -> Profile:
    """A run from `begin` to `end` cut at `marks` into the stretches `names`."""
    edges = [(begin, 0), *marks, end]
    stretches = {name: (b[0] - a[0], b[1] - a[1]) for name, a, b in zip(names, edges[:-1], edges[1:], strict=True)}
    return Profile(end[0] - begin, end[1], stretches)


def profile_daily(bench: Bench, job: JobConfig, number: int, jobs: SparkJobs) -> Profile:
    """The daily run for day `number`, cut at its steps, with its run-log row's phases."""
    marks = _Marks(jobs)
    jobs.begin()
    began = time.perf_counter()
    record = bench.daily(job, number, on_step=marks).record
    ended = (time.perf_counter(), jobs.end())
    missing = [step for step in _STEPS if step not in marks.at]
    if missing:
        raise RuntimeError(f"window-phases: on_step did not tell the steps {missing} (told {list(marks.at)})")
    found = _cut(began, ended, STRETCHES, [marks.at[step] for step in _STEPS])
    found.phases = {name: float(getattr(record, name) or 0.0) for name in RUN_LOG}
    return found


def profile_floor(bench: Bench, job: JobConfig, number: int, path: str, jobs: SparkJobs) -> Profile:
    """The floor for day `number`, appended to the Delta table at `path`: planned, then written."""
    jobs.begin()
    began = time.perf_counter()
    output = inc_join_window(bench.spark, job, bench.sources.day(number))
    planned = (time.perf_counter(), jobs.now())
    output.write.format("delta").mode("append").save(path)
    return _cut(began, (time.perf_counter(), jobs.end()), _FLOOR, [planned])


def _median(values: list[float] | list[int]) -> float:
    return float(statistics.median(values)) if values else 0.0


def _table(names: tuple[str, ...], runs: list[Profile], warm: Profile) -> list[str]:
    """Seconds and Spark jobs per stretch: medians over `runs`, and the warm-up run's."""
    lines = ["| stretch | s | Spark jobs | warm-up s | warm-up jobs |", "|---|---|---|---|---|"]
    for name in names:
        seconds = [run.stretches[name][0] for run in runs]
        jobs = [run.stretches[name][1] for run in runs]
        lines.append(
            f"| {name} | {_median(seconds):.2f} | {_median(jobs):.0f} | {warm.stretches[name][0]:.2f} | "
            f"{warm.stretches[name][1]} |"
        )
    return lines


def render(
    daily: list[Profile], floor: list[Profile], warm: tuple[Profile, Profile], meta: dict[str, str]
) -> list[str]:
    """The Markdown report: the totals, the daily run by stretch and by its run-log phases, the floor, the goal."""
    runs = Measurement("daily", [p.seconds for p in daily])
    floors = Measurement("floor", [p.seconds for p in floor])
    ratio = runs.median / floors.median
    jobs = _median([p.jobs for p in daily])
    met = runs.median <= 3 and ratio <= 2 and jobs <= 15
    lines = [
        f"R = {meta['rows']} rows a day, day {meta['days']}; left join, look back 2, wait 11, max_window 0, brought to "
        f"day D - 1; one untimed warm-up daily run and floor run, then {len(daily)} of each alternately, the tables "
        "restored before each. Medians; Spark jobs from the status tracker (the window's job groups and this "
        f"thread's). 1-minute load average during the runs: {meta['load']}.",
        "",
        f"- daily run: {runs.cell()}, Spark jobs {_median([p.jobs for p in daily]):.0f}",
        f"- floor (read, inc_join, append): {floors.cell()}, Spark jobs {_median([p.jobs for p in floor]):.0f}",
        f"- daily / floor: {fmt_ratio(ratio)}; warm-up runs: daily {warm[0].seconds:.2f} s, {warm[0].jobs} jobs; "
        f"floor {warm[1].seconds:.2f} s, {warm[1].jobs} jobs (it created its table)",
        "",
        "Daily run, by the steps `on_step` tells:",
        "",
        *_table(STRETCHES, daily, warm[0]),
        "",
        "Daily run, by its run-log row (bookkeeping: the window's duration less the other phases):",
        "",
        "| run-log column | s |",
        "|---|---|",
        *(f"| `{name}` | {Measurement(name, [p.phases[name] for p in daily]).cell()} |" for name in RUN_LOG),
        "",
        "Floor:",
        "",
        *_table(_FLOOR, floor, warm[1]),
        "",
        f"Goal: {GOAL}. Measured {runs.median:.2f} s, {fmt_ratio(ratio)}, {jobs:.0f} Spark jobs: "
        f"**{'MET' if met else 'MISSED'}**.",
    ]
    return lines


def window_phases(bench: Bench) -> list[str]:
    """The report on the bench's sources (its last day is D), `bench.repeat` daily and floor runs, alternating.

    Example: `lines = window_phases(bench)`.
    """
    days = bench.sources.spec.days
    job = bench.job("window_phases", max_window=0)
    bench.run(job, days - 1)
    before = snapshot(bench, job)
    jobs = SparkJobs(bench.spark)
    floor_path = str(bench.work / "floor")
    warm = (profile_daily(bench, job, days, jobs), profile_floor(bench, job, days, floor_path, jobs))
    floor_version = table_version(bench.spark, floor_path)
    daily: list[Profile] = []
    floor: list[Profile] = []
    loads: list[float] = []
    for number in range(bench.repeat):
        for kind in ("daily", "floor") if number % 2 == 0 else ("floor", "daily"):
            loads.append(os.getloadavg()[0])
            if kind == "daily":
                restore(bench, before)
                daily.append(profile_daily(bench, job, days, jobs))
            else:
                restore(bench, {floor_path: floor_version})
                floor.append(profile_floor(bench, job, days, floor_path, jobs))
            done = (daily if kind == "daily" else floor)[-1]
            bench.echo(f"    window-phases: round {number + 1}: {kind} {done.seconds:.2f} s, {done.jobs} jobs")
    meta = {"rows": f"{bench.sources.spec.rows_per_day:,}", "days": str(days),
            "load": f"{min(loads):.1f}-{max(loads):.1f}"}  # fmt: skip
    return render(daily, floor, warm, meta)
