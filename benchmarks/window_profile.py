"""Where the time and the Spark jobs of one warm daily `deltainc` run go, step by step, next to the floor.

In one warm SparkSession (local[2], 8 shuffle partitions, temporary folders) this script generates the sources
(`benchmarks.data.ensure_sources`), brings a left join job (look back 2, wait 11, max_window 0) to day D - 1 as
`benchmarks.session_ab` does, runs one untimed warm-up daily run for day D and one untimed floor run, and then,
alternately and `--repeat` times each (the job's tables and the floor table restored before every run):

- the daily run for day D (`pipeline.run(until=D)`), profiled: module functions of the pipeline are wrapped in
  this process only (nothing in the package changes) and the pipeline's `on_step` hook marks the window's steps;
  every second of the run is attributed to the innermost wrapped call active at the time ("self" time, so the
  rows add up to the run's wall time), with the Spark jobs started meanwhile (job ids from the DAGScheduler's
  counter, their call site and description from Spark's status store);
- the floor: read A and B, join day D's window with `deltainc.join.engine.inc_join`, append it to a Delta table.

Finally one more daily run and floor run, untimed, with every py4j call traced: each Spark job is attributed to
the Python line (in deltainc, or here) whose call into pyspark started it.

    python -m benchmarks.window_profile --rows-per-day 2000 --days 40 [--repeat 3] [--json out.json]
        [--versus spark.sql.adaptive.enabled=false]

`--versus KEY=VALUE` also times daily runs with that Spark SQL setting set in the session while they run, alternated
with the others on the same restored state (e.g. adaptive execution off: 12-18 Spark jobs instead of 24 at 2,000 rows
a day, but a median 3.71 s against 3.36 s on 2026-11-26, benchmarks/DECISIONS.md). Each job is named
by the Delta operation that started it (from its SQL execution's JVM stack) and, when the too-late search started
it, says so (deltainc labels the search's jobs with the group `deltainc-too-late`).

It prints a Markdown report; `--json` also writes the raw measurements.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import logging
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

from pyspark.sql import SparkSession

import deltainc
from benchmarks.data import ensure_sources, table_version
from benchmarks.scenarios import Bench, inc_join_window, restore, snapshot
from deltainc.demo.sample_data import SampleSpec
from deltainc.pipeline import controller, prepared_job
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds import two_source_join
from deltainc.pipeline.state import lease, lock, store
from deltainc.pipeline.target import forward_write, slices
from deltainc.pipeline.window import run as window_run
from deltainc.pipeline.window import target_writes
from deltainc.settings import Settings, SparkSettings
from deltainc.spark import get_spark
from deltainc.spark_compat import session_conf

START = dt.date(2024, 1, 1)
ROOT = "pipeline.run (self)"
FLOOR_ROOT = "floor (self)"
_REPO = str(Path(__file__).resolve().parent.parent) + os.sep
_LIBRARIES = (f"{os.sep}pyspark{os.sep}", f"{os.sep}py4j{os.sep}", f"{os.sep}delta{os.sep}")
_OWN = os.path.dirname(deltainc.__file__) + os.sep  # its pipeline/delta/ is deltainc's code, not delta-spark's


# --- Spark's jobs --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobInfo:
    """One Spark job as the status store has it: its call site (short form), description, run time, tasks."""

    id: int
    name: str
    description: str | None
    ms: int | None
    tasks: int


class Jobs:
    """The driver's job counter (synchronous: the DAGScheduler's next job id) and the status store's job data."""

    def __init__(self, spark: SparkSession) -> None:
        self._context: Any = spark.sparkContext._jsc.sc()
        self._session: Any = spark._jsparkSession
        self._dag: Any = self._context.dagScheduler()

    def next_id(self) -> int:
        """The id the next job will get: jobs started between two reads are the ids in between."""
        return int(self._dag.nextJobId())

    def details(self, first: int, after: int) -> dict[int, JobInfo]:
        """The jobs with ids in [first, after), once the listener bus has delivered their events."""
        self._context.listenerBus().waitUntilEmpty()
        store = self._context.statusStore()
        found: dict[int, JobInfo] = {}
        for job_id in range(first, after):
            try:
                data = store.job(job_id)
            except Exception:  # evicted from the store (spark.ui.retainedJobs), or never posted
                found[job_id] = JobInfo(job_id, "?", None, None, 0)
                continue
            described = data.description()
            submitted, completed = data.submissionTime(), data.completionTime()
            ms = None
            if submitted.isDefined() and completed.isDefined():
                ms = int(completed.get().getTime() - submitted.get().getTime())
            text = described.get() if described.isDefined() else None
            found[job_id] = JobInfo(
                job_id, str(data.name()), None if text is None else str(text), ms, int(data.numTasks())
            )
        origins = self._origins(first, after)
        searched = {job_id for job_id in found if _group(store, job_id) == "deltainc-too-late"}
        return {
            job_id: replace(
                info,
                description=("too-late search: " if job_id in searched else "")
                + (origins.get(job_id) or info.description or "(no description)"),
            )
            for job_id, info in found.items()
        }

    def _origins(self, first: int, after: int) -> dict[int, str]:
        """What started each job, named from its SQL execution: the Delta operation in the execution's JVM stack
        (a scan's file listing, a replaceWhere's files to remove, a commit, a snapshot's state), or the
        execution's own description (a Python call site such as `collect at .../merge.py:40`)."""
        store = self._session.sharedState().statusStore()
        named: dict[int, str] = {}
        executions = store.executionsList().iterator()
        while executions.hasNext():
            execution = executions.next()
            ids = execution.jobs().keysIterator()
            jobs = []
            while ids.hasNext():
                job_id = int(ids.next())
                if first <= job_id < after:
                    jobs.append(job_id)
            if jobs:
                what = _delta_operation(str(execution.details()), str(execution.physicalPlanDescription()))
                for job_id in jobs:
                    named[job_id] = what or str(execution.description())
        return named


_DELTA_OPERATIONS = (  # a frame of the execution's JVM stack -> what it does, the most specific first
    ("WriteIntoDelta.removeFiles", "Delta: the files a replaceWhere removes"),
    ("doCommitRetryIteratively", "Delta: the commit (conflict check, post-commit state)"),
    ("ScanWithDeletionVectors", "Delta: the files of a scan (deletion-vector check)"),
    ("PrepareDeltaScan", "Delta: the files of a scan (partition and data skipping)"),
    ("Checkpoints", "Delta: a checkpoint"),
)


def _group(store: Any, job_id: int) -> str | None:
    """The job group a job ran in (deltainc labels the too-late search's jobs `deltainc-too-late`)."""
    try:
        group = store.job(job_id).jobGroup()
    except Exception:  # evicted from the store
        return None
    return str(group.get()) if group.isDefined() else None


def _delta_operation(details: str, plan: str) -> str | None:
    """The Delta operation an SQL execution belongs to, from its JVM stack (`details`) or its plan; None for a
    query of the caller's own (its description names the Python call site)."""
    for frame, what in _DELTA_OPERATIONS:
        if frame in details:
            return what
    if "_delta_log" in plan and "checkpoint" in plan:
        return "Delta: a snapshot's state (checkpoint and log read)"
    return None


# --- the timeline: self time and jobs per innermost wrapped call ---------------------------------------------


@dataclass
class Segment:
    """A stretch of a run during which `path` (the wrapped calls active, outermost first) did not change."""

    path: str
    seconds: float
    first_job: int
    after_job: int  # exclusive

    @property
    def jobs(self) -> int:
        return self.after_job - self.first_job


class Timeline:
    """Cuts a run into segments at every entry to and exit from a wrapped call, and at every step mark."""

    def __init__(self, jobs: Jobs) -> None:
        self._jobs = jobs
        self._thread: threading.Thread | None = None
        self._stack: list[str] = []
        self._step: str | None = None
        self._since = 0.0
        self._job = 0
        self.segments: list[Segment] = []
        self.started = 0.0
        self.first_job = 0

    @property
    def active(self) -> bool:
        return self._thread is threading.current_thread()

    @property
    def path(self) -> str:
        """The active wrapped calls, outermost first (the root only when nothing else is active)."""
        return " > ".join(self._stack[1:] or self._stack)

    @contextmanager
    def recording(self, root: str) -> Iterator[None]:
        """Record the block, `root` being the name of its own time outside any wrapped call."""
        self.segments, self._stack, self._step = [], [root], None
        self._thread = threading.current_thread()
        self.first_job = self._job = self._jobs.next_id()
        self.started = self._since = time.perf_counter()
        try:
            yield
        finally:
            self._cut()
            self._thread = None

    def _cut(self) -> None:
        now, job = time.perf_counter(), self._jobs.next_id()
        path = self.path
        if self._step is not None and self._stack[-1] == "process_window":
            path += f" [after step {self._step!r}]"
        if now > self._since or job > self._job:
            self.segments.append(Segment(path, now - self._since, self._job, job))
        self._since, self._job = time.perf_counter(), job

    def enter(self, label: str) -> None:
        self._cut()
        self._stack.append(label)

    def exit(self) -> None:
        self._cut()
        self._stack.pop()

    def step(self, name: str) -> None:
        """The pipeline's on_step hook (a window_run.Step, a str enum: kept as its text, 'start' not its repr)."""
        if self.active:
            self._cut()
            self._step = str(name)


Label = str | Callable[..., str]


def wrap(timeline: Timeline, module: ModuleType | type, name: str, label: Label) -> Callable[[], None]:
    """Replace `module.name` by a wrapper that marks its calls on the timeline; returns the undo."""
    original = getattr(module, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not timeline.active:
            return original(*args, **kwargs)
        timeline.enter(label if isinstance(label, str) else label(*args, **kwargs))
        try:
            return original(*args, **kwargs)
        finally:
            timeline.exit()

    setattr(module, name, wrapper)
    return lambda: setattr(module, name, original)


def _role(_spark: Any, _ref: Any, role: str) -> str:
    return f"read_source({role})"


def _null_inc_role(_ref: Any, role: str, _frame: Any, inc: str) -> str:
    return f"NULL {inc} count ({role}: Delta log, else count_null_inc)"


# (module, attribute, label). The names are looked up where the caller looks them up (`from x import f` binds f
# in the caller's module), so that the pipeline's own calls go through the wrappers. A forward window's write
# (`FORWARD.write`, held by a frozen WriteMode) is not wrapped itself: write_window holds it, the names it
# calls are wrapped in forward_write, and those they call in slices.
WRAPPED: tuple[tuple[ModuleType | type, str, Label], ...] = (
    (controller, "open_job", "open_job"),
    (prepared_job, "prepare_job", "prepare_job"),
    (prepared_job, "read_source", _role),
    (two_source_join, "plan_join", "plan_join (validate)"),
    (prepared_job, "read_state", "read_state"),
    (prepared_job, "check_unchanged", "check_unchanged"),
    (controller, "_latest_available", "latest RecDate (_latest_available)"),
    (controller, "latest_unit", "latest_unit (Spark, where a Delta log does not answer)"),
    (lease, "ensure_state_tables", "lock: ensure_state_tables"),
    (lease, "acquire", "lock: acquire (delta-rs MERGE into locks)"),
    (lease, "start_heartbeat", "lock: start_heartbeat"),
    (lease, "release_lock", "lock: release_lock"),
    (lock.Heartbeat, "end", "lock: heartbeat end"),
    (store, "read_state", "read_state (again)"),
    (controller, "begin", "begin"),
    (window_run, "_null_inc", _null_inc_role),
    (window_run, "count_null_inc", "count_null_inc"),
    (window_run, "_null_keys", "NULL join keys (_null_keys)"),
    (window_run, "fitted", "target's columns (fitted)"),
    (controller, "check_unchanged", "check_unchanged (under the lock)"),
    (controller, "process_window", "process_window"),
    (window_run, "join_window", "join_window"),
    (two_source_join, "read_sources", "read_sources"),
    (two_source_join, "join_prepared", "join_prepared (plan)"),
    (window_run, "_scanned", "files read (_scanned: Delta log, else scan_stats)"),
    (window_run, "scan_stats", "scan_stats (sources)"),
    (window_run, "shaped", "shaped (lay_out)"),
    (window_run, "count_and_check", "count_and_check (join runs, persisted)"),
    (window_run, "finish_commit", "finish_commit (a commit, waited for)"),
    (window_run, "write_window", "write_window"),
    (target_writes, "ensure_target", "ensure_target"),
    (forward_write, "current_target", "current_target (read target, schema check)"),
    (forward_write, "_slices_read", "target files read (_slices_read: Delta log, else scan_stats)"),
    (forward_write, "replace_slices", "replace_slices"),
    (forward_write, "merge_slices", "merge_slices"),
    (slices, "_save", "replaceWhere write (_save)"),
    (slices, "last_commit", "last_commit (delta-rs history, else DESCRIBE HISTORY)"),
    (window_run, "too_late_found", "too_late_found (wait for the search beside the window)"),
    (window_run, "keep_too_late", "keep_too_late (target.late_rows)"),
    (window_run, "append_run", "append_run (run-log commit)"),
)


@contextmanager
def wrapped(timeline: Timeline) -> Iterator[None]:
    """The pipeline's functions wrapped for the block (those a concurrent edit renamed are reported, skipped)."""
    undo: list[Callable[[], None]] = []
    try:
        for module, name, label in WRAPPED:
            if hasattr(module, name):
                undo.append(wrap(timeline, module, name, label))
            else:
                print(f"window_profile: {getattr(module, '__name__', module)}.{name} not found, not wrapped",
                      file=sys.stderr)  # fmt: skip
        yield
    finally:
        for step in reversed(undo):
            step()


# --- which Python line started each job (the traced pass) ----------------------------------------------------


@dataclass
class Started:
    """Jobs started by one py4j call: the Python caller outside pyspark, the pyspark API, the JVM method."""

    path: str
    site: str
    api: str
    java: str
    first_job: int
    after_job: int


def _short(filename: str) -> str:
    return filename[len(_REPO) :] if filename.startswith(_REPO) else os.path.basename(filename)


def _library(filename: str) -> bool:
    """Whether the file is pyspark's, py4j's or delta-spark's (deltainc's own `pipeline/delta/` is not)."""
    return not filename.startswith(_OWN) and any(part in filename for part in _LIBRARIES)


def _traced_call(frame: FrameType) -> bool:
    """Whether the frame is `traced`'s own py4j call (below)."""
    return frame.f_code.co_filename == __file__ and frame.f_code.co_name == "call"


def _caller(frame: FrameType | None) -> tuple[str, str]:
    """(the first two frames outside pyspark/py4j/delta as 'file:line function', the outermost library call).
    A py4j call made inside another (py4j converting a list argument) counts as the outer call's: its `call`
    frame here is passed over with the library's."""
    api = "?"
    while frame is not None and (_library(frame.f_code.co_filename) or _traced_call(frame)):
        code = frame.f_code
        if _library(code.co_filename):
            api = getattr(code, "co_qualname", code.co_name)
        frame = frame.f_back
    sites: list[str] = []
    while frame is not None and len(sites) < 2:
        code = frame.f_code
        if code.co_filename != __file__ or code.co_name not in ("wrapper", "call"):
            sites.append(f"{_short(code.co_filename)}:{frame.f_lineno} {code.co_name}")
        frame = frame.f_back
    return " <- ".join(sites), api


@contextmanager
def traced(timeline: Timeline, jobs: Jobs, out: list[Started]) -> Iterator[None]:
    """Every py4j call of the recording thread checks the job counter afterwards; new jobs go to `out`."""
    from py4j.java_gateway import JavaMember

    original = JavaMember.__call__
    busy = threading.local()
    seen = [jobs.next_id()]

    def call(member: Any, *args: Any) -> Any:
        if getattr(busy, "on", False) or not timeline.active:
            return original(member, *args)
        try:
            return original(member, *args)
        finally:
            busy.on = True
            try:
                now = jobs.next_id()
            finally:
                busy.on = False
            if now > seen[0]:
                site, api = _caller(sys._getframe(1))
                out.append(Started(timeline.path, site, api, str(member.name), seen[0], now))
                seen[0] = now

    JavaMember.__call__ = call
    try:
        yield
        seen[0] = jobs.next_id()
    finally:
        JavaMember.__call__ = original


# --- the runs -------------------------------------------------------------------------------------------------


@dataclass
class Profile:
    """One profiled run: wall seconds, its segments, and the jobs it started."""

    kind: str  # "daily" or "floor"
    seconds: float
    segments: list[Segment]
    jobs: dict[int, JobInfo]
    started: list[Started] = field(default_factory=list)

    @property
    def job_count(self) -> int:
        return sum(s.jobs for s in self.segments)


def _floor(spark: SparkSession, job: JobConfig, day: dt.date, path: str, timeline: Timeline) -> None:
    """Read A and B, join `day`'s window with inc_join, append the output to the Delta table at `path`."""
    timeline.enter("floor: read A and B, inc_join (plan)")
    output = inc_join_window(spark, job, day)
    timeline.exit()
    timeline.enter("floor: append (write)")
    output.write.format("delta").mode("append").save(path)
    timeline.exit()


def profile_daily(bench: Bench, job: JobConfig, number: int, jobs: Jobs, trace: bool = False) -> Profile:
    """The daily run for day `number`, wrapped and (with `trace`) with its py4j calls traced."""
    timeline = Timeline(jobs)
    started: list[Started] = []
    with wrapped(timeline), timeline.recording(ROOT):
        if trace:
            with traced(timeline, jobs, started):
                bench.daily(job, number, on_step=timeline.step)
        else:
            bench.daily(job, number, on_step=timeline.step)
    seconds = sum(s.seconds for s in timeline.segments)
    after = timeline.segments[-1].after_job if timeline.segments else timeline.first_job
    return Profile("daily", seconds, timeline.segments, jobs.details(timeline.first_job, after), started)


def profile_floor(bench: Bench, job: JobConfig, number: int, path: str, jobs: Jobs, trace: bool = False) -> Profile:
    """The floor for day `number`, appended to the table at `path`."""
    timeline = Timeline(jobs)
    started: list[Started] = []
    day = bench.sources.day(number)
    with timeline.recording(FLOOR_ROOT):
        if trace:
            with traced(timeline, jobs, started):
                _floor(bench.spark, job, day, path, timeline)
        else:
            _floor(bench.spark, job, day, path, timeline)
    seconds = sum(s.seconds for s in timeline.segments)
    after = timeline.segments[-1].after_job if timeline.segments else timeline.first_job
    return Profile("floor", seconds, timeline.segments, jobs.details(timeline.first_job, after), started)


# --- the report -----------------------------------------------------------------------------------------------


@dataclass
class Row:
    """One path of the timeline over the repetitions: self seconds and jobs per repetition, its jobs' names."""

    path: str
    seconds: list[float] = field(default_factory=list)
    jobs: list[int] = field(default_factory=list)
    job_ms: list[int] = field(default_factory=list)
    names: dict[str, int] = field(default_factory=dict)  # job description -> jobs (last repetition)


def rows_of(profiles: list[Profile]) -> list[Row]:
    """The paths of all repetitions, in order of first appearance, summed within each repetition."""
    rows: dict[str, Row] = {}
    for number, profile in enumerate(profiles):
        for segment in profile.segments:
            row = rows.setdefault(segment.path, Row(segment.path))
            while len(row.seconds) <= number:
                row.seconds.append(0.0)
                row.jobs.append(0)
                row.job_ms.append(0)
            row.seconds[number] += segment.seconds
            row.jobs[number] += segment.jobs
            for job_id in range(segment.first_job, segment.after_job):
                info = profile.jobs.get(job_id)
                row.job_ms[number] += 0 if info is None or info.ms is None else info.ms
                if number == len(profiles) - 1:
                    name = "?" if info is None else info.description or "(no description)"
                    row.names[name] = row.names.get(name, 0) + 1
    for row in rows.values():
        while len(row.seconds) < len(profiles):
            row.seconds.append(0.0)
            row.jobs.append(0)
            row.job_ms.append(0)
    return list(rows.values())


# The phases of a daily run (inclusive): a path's phase is its outermost wrapped call, a window's the one inside it.
_WINDOW = {
    "process_window [after step 'start']": "window: join planned (+ persist, count_and_check: two passes)",
    "join_window": "window: join planned (+ persist, count_and_check: two passes)",
    "shaped (lay_out)": "window: join planned (+ persist, count_and_check: two passes)",
    "count_and_check (join runs, persisted)": "window: join planned (+ persist, count_and_check: two passes)",
    "files read (_scanned: Delta log, else scan_stats)": "window: files the scans read (_scanned)",
    "target's columns (fitted)": "window: the output checked against the target's columns (fitted)",
    "finish_commit (a commit, waited for)": "window: the commits (one pass: join, check, counts in the write)",
    "write_window": "window: write_window (replaceWhere)",
    "too_late_found (wait for the search beside the window)": "window: too-late search (its wait after the write)",
    "keep_too_late (target.late_rows)": "window: too-late search (its wait after the write)",
    "append_run (run-log commit)": "window: append_run (run-log commit)",
}
_TOP = {
    "open_job": "open_job (config, read sources, validate join, settings check)",
    "latest RecDate (_latest_available)": "latest RecDate of both sources (_latest_available)",
    "lock: ensure_state_tables": "lock: ensure_state_tables + acquire + start_heartbeat",
    "lock: acquire (delta-rs MERGE into locks)": "lock: ensure_state_tables + acquire + start_heartbeat",
    "lock: start_heartbeat": "lock: ensure_state_tables + acquire + start_heartbeat",
    "begin": "begin (NULL inc_col counts of both sources: Delta logs, else count_null_inc)",
    "lock: heartbeat end": "lock: heartbeat end / release_lock",
    "lock: release_lock": "lock: heartbeat end / release_lock",
}


def phase_of(path: str) -> str:
    """The phase a segment's path belongs to."""
    labels = path.split(" > ")
    if labels[0] == "open_job" and "read_state" in labels:
        return "read_state (run log + lock table)"
    if labels[0].startswith("process_window"):
        key = labels[1] if len(labels) > 1 else labels[0]
        return _WINDOW.get(key, "window: the rest")
    return _TOP.get(labels[0], labels[0])


def phases_of(profile: Profile) -> dict[str, tuple[float, int, int]]:
    """Seconds, Spark jobs and their summed milliseconds per phase, in order of first appearance."""
    found: dict[str, tuple[float, int, int]] = {}
    for segment in profile.segments:
        name = phase_of(segment.path)
        seconds, count, ms = found.get(name, (0.0, 0, 0))
        job_ms = sum(
            (profile.jobs[i].ms or 0) for i in range(segment.first_job, segment.after_job) if i in profile.jobs
        )
        found[name] = (seconds + segment.seconds, count + segment.jobs, ms + job_ms)
    return found


def _med(values: list[float] | list[int]) -> float:
    return float(statistics.median(values)) if values else 0.0


def _jobs_cell(values: list[int]) -> str:
    return str(values[0]) if len(set(values)) == 1 else "/".join(map(str, values))


def render(daily: list[Profile], floor: list[Profile], warm: tuple[Profile, Profile], traced: tuple[Profile, Profile],
           meta: dict[str, Any]) -> list[str]:  # fmt: skip
    """The Markdown report."""
    lines = [
        f"# One warm daily run, step by step (R = {meta['rows_per_day']:,} rows/day, day {meta['days']})",
        "",
        f"Spark {meta['spark']}, local[2], 8 shuffle partitions; job: left join, look back 2, wait 11, max_window 0, "
        f"brought to day {meta['days'] - 1}; one untimed warm-up daily run and floor run; then {len(daily)} daily runs "
        f"and {len(floor)} floor runs alternately, the tables restored (Delta RESTORE) before each. Medians over the "
        "repetitions (min-max for the totals). 's' = wall seconds while this was the innermost wrapped call (rows "
        "add up to the run); 'job s' = summed durations of its Spark jobs (status store; concurrent jobs overlap). "
        f"1-minute load average during the measured runs: {meta['load']}."
        + "".join(f" Set: {key} = {meta[key]}." for key in ("conf", "join") if meta.get(key)),
        "",
    ]
    for title, profiles in (("daily run", daily), ("floor (read, inc_join, append)", floor)):
        walls = [p.seconds for p in profiles]
        counts = [p.job_count for p in profiles]
        lines.append(
            f"- {title}: {_med(walls):.2f} s [{min(walls):.2f}-{max(walls):.2f}], Spark jobs {_jobs_cell(counts)}"
        )
    ratio = _med([p.seconds for p in daily]) / _med([p.seconds for p in floor])
    lines += [
        f"- daily / floor: {ratio:.1f}x; warm-up runs (no RESTORE before them): daily {warm[0].seconds:.2f} s, "
        f"{warm[0].job_count} jobs; floor {warm[1].seconds:.2f} s, {warm[1].job_count} jobs (it created its table)",
        "",
        "## Daily run by phase",
        "",
        "| phase | s | Spark jobs | job s | warm-up s | warm-up jobs |",
        "|---|---|---|---|---|---|",
    ]
    per_run = [phases_of(p) for p in daily]
    warm_phases = phases_of(warm[0])
    names = list(dict.fromkeys([n for found in [*per_run, warm_phases] for n in found]))
    for name in names:
        values = [found.get(name, (0.0, 0, 0)) for found in per_run]
        w = warm_phases.get(name, (0.0, 0, 0))
        lines.append(
            f"| {name} | {_med([v[0] for v in values]):.2f} | {_jobs_cell([v[1] for v in values])} | "
            f"{_med([v[2] for v in values]) / 1000:.2f} | {w[0]:.2f} | {w[1]} |"
        )
    lines.append("")
    for title, profiles in (("Daily run", daily), ("Floor", floor)):
        lines += [f"## {title}: self time and Spark jobs per wrapped call", "",
                  "| path | s | jobs | job s | the jobs' descriptions (last repetition) |",
                  "|---|---|---|---|---|"]  # fmt: skip
        for row in rows_of(profiles):
            if max(row.seconds) < 0.0005 and not any(row.jobs):
                continue
            text = "; ".join(f"{n}x {name}" for name, n in row.names.items())
            lines.append(
                f"| {row.path} | {_med(row.seconds):.3f} | {_jobs_cell(row.jobs)} | {_med(row.job_ms) / 1000:.2f} "
                f"| {text} |"
            )
        lines.append("")
    for title, profile in (("daily run", traced[0]), ("floor", traced[1])):
        lines += [f"## Which Python call started the jobs ({title}, traced run, untimed: "
                  f"{profile.seconds:.2f} s, {profile.job_count} jobs)", "",
                  "| path | Python call site <- its caller | pyspark API -> JVM method | jobs | their descriptions |",
                  "|---|---|---|---|---|"]  # fmt: skip
        for start in profile.started:
            described: dict[str, int] = {}
            for job_id in range(start.first_job, start.after_job):
                info = profile.jobs.get(job_id)
                text = "?" if info is None else (info.description or "-")
                described[text] = described.get(text, 0) + 1
            text = "; ".join(f"{n}x {d}" for d, n in described.items())
            lines.append(
                f"| {start.path} | {start.site} | {start.api} -> {start.java} | {start.after_job - start.first_job} "
                f"| {text} |"
            )
        lines.append("")
    return lines


# --- main -----------------------------------------------------------------------------------------------------


def profile(
    rows: int,
    days: int,
    repeat: int,
    echo: Callable[[str], None],
    conf: dict[str, str] | None = None,
    join: dict[str, Any] | None = None,
    versus: dict[str, str] | None = None,
) -> tuple[list[str], dict[str, Any]]:
    """Set up, measure, and render; also the raw measurements. `conf` adds Spark settings and `join` overrides
    the job's [join] keys (both for A/B comparisons of one setting)."""
    logging.getLogger("deltainc").setLevel(logging.WARNING)
    root = Path(tempfile.mkdtemp(prefix="deltainc-window-profile-"))
    settings = Settings(
        spark=SparkSettings(master="local[2]", shuffle_partitions=8, log_level="ERROR", conf=conf or {}),
        warehouse_dir=root / "warehouse",
        state_dir=root / "state",
    )
    spark = get_spark(settings)
    try:
        started = time.perf_counter()
        sources = ensure_sources(spark, root, SampleSpec(start=START, days=days, rows_per_day=rows))
        bench = Bench(spark, settings, sources, root / "work", 1, 0.0, 2, 11, None, echo)
        job = bench.job("daily", max_window=0)
        if join:
            job = job.model_copy(update={"join": job.join.model_copy(update=join)})
        echo(f"sources: {sources.rows_a:,} + {sources.rows_b:,} rows ({time.perf_counter() - started:.1f} s)")
        started = time.perf_counter()
        bench.run(job, days - 1)
        echo(f"job brought to day {days - 1} ({time.perf_counter() - started:.1f} s)")
        before = snapshot(bench, job)
        jobs = Jobs(spark)
        floor_path = str(root / "work" / "floor" / "target")
        warm_daily = profile_daily(bench, job, days, jobs)
        warm_floor = profile_floor(bench, job, days, floor_path, jobs)
        echo(f"warm-up: daily {warm_daily.seconds:.2f} s / {warm_daily.job_count} jobs, "
             f"floor {warm_floor.seconds:.2f} s / {warm_floor.job_count} jobs")  # fmt: skip
        floor_version = table_version(spark, floor_path)
        daily: list[Profile] = []
        floor: list[Profile] = []
        loads: list[float] = []

        def run_daily() -> Profile:
            restore(bench, before)
            loads.append(os.getloadavg()[0])
            result = profile_daily(bench, job, days, jobs)
            daily.append(result)
            return result

        def run_floor() -> Profile:
            restore(bench, {floor_path: floor_version})
            loads.append(os.getloadavg()[0])
            result = profile_floor(bench, job, days, floor_path, jobs)
            floor.append(result)
            return result

        other: list[Profile] = []

        def run_versus() -> Profile:
            restore(bench, before)
            loads.append(os.getloadavg()[0])
            with ExitStack() as settings_on:
                for key, value in (versus or {}).items():
                    settings_on.enter_context(session_conf(spark, key, value))
                other.append(replace(profile_daily(bench, job, days, jobs), kind="daily, versus"))
            return other[-1]

        for number in range(repeat):
            order: tuple[Callable[[], Profile], ...] = (
                (run_daily, run_floor) if number % 2 == 0 else (run_floor, run_daily)
            )
            if versus:
                order = (*order, run_versus) if number % 2 == 0 else (run_versus, *order)
            for measure in order:
                result = measure()
                echo(f"repetition {number + 1}: {result.kind} {result.seconds:.2f} s, {result.job_count} jobs")
        restore(bench, before)
        traced_daily = profile_daily(bench, job, days, jobs, trace=True)
        restore(bench, {floor_path: floor_version})
        traced_floor = profile_floor(bench, job, days, floor_path, jobs, trace=True)
        echo(f"traced: daily {traced_daily.seconds:.2f} s / {traced_daily.job_count} jobs, "
             f"floor {traced_floor.seconds:.2f} s / {traced_floor.job_count} jobs")  # fmt: skip
        load = f"{min(loads):.1f}-{max(loads):.1f}" if loads else "-"
        meta = {"rows_per_day": rows, "days": days, "repeat": repeat, "spark": spark.version, "load": load,
                "conf": conf or {}, "join": join or {}}  # fmt: skip
        lines = render(daily, floor, (warm_daily, warm_floor), (traced_daily, traced_floor), meta)
        if versus:
            setting = ", ".join(f"`{key}={value}`" for key, value in versus.items())
            at = next(i for i, line in enumerate(lines) if line.startswith("- floor")) + 1
            lines[at:at] = [
                f"- daily run with {setting} (alternated with the two above, same restored state): "
                f"{_med([p.seconds for p in other]):.2f} s [{min(p.seconds for p in other):.2f}-"
                f"{max(p.seconds for p in other):.2f}], Spark jobs {_jobs_cell([p.job_count for p in other])}",
            ]
        raw = {
            "meta": meta,
            "warm_up": [asdict(warm_daily), asdict(warm_floor)],
            "daily": [asdict(p) for p in daily],
            "floor": [asdict(p) for p in floor],
            "traced": [asdict(traced_daily), asdict(traced_floor)],
            "versus": {"conf": versus or {}, "daily": [asdict(p) for p in other]},
        }
        return lines, raw
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows-per-day", type=int, default=2000)
    parser.add_argument("--days", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the raw measurements here")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting to add")
    parser.add_argument("--join", action="append", default=[], metavar="KEY=VALUE", help="a job [join] key to set")
    parser.add_argument(
        "--versus",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="also time daily runs with this Spark SQL setting set while they run, alternated with the others",
    )
    args = parser.parse_args(argv)
    conf = dict(item.split("=", 1) for item in args.conf)
    join = {key: json.loads(value) for key, value in (item.split("=", 1) for item in args.join)}

    def echo(message: str) -> None:
        print(f"window_profile: {message}", file=sys.stderr, flush=True)

    versus = dict(item.split("=", 1) for item in args.versus)
    lines, raw = profile(args.rows_per_day, args.days, args.repeat, echo, conf, join, versus)
    if args.json:
        args.json.write_text(json.dumps(raw, indent=1, default=str))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
