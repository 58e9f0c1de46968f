"""Commands answered from the Delta logs alone, without a JVM: a run with nothing pending, `unlock`, and the lock
a command takes before it starts Spark (`hold_lock`); `before_spark`, what run, rerun and backfill do before Spark.

Starting Spark takes seconds (half a minute on a busy machine); a scheduled run that finds nothing new, or a
hand `unlock`, needs only the state tables and the sources' latest RecDate, which the Delta logs give in
milliseconds. Whether the logs answer or Spark must is decided in one place, `from_logs_else_spark`, for these and
for `status` and `validate`, its reason logged once (at info: `--verbose` shows it). The Spark side is the
caller's, passed in: nothing here imports what starts Spark.

Before Spark starts, a job is checked against its sources' schemas in their logs (`check_from_logs`): a missing
source, a missing or mistyped column, an hour job on a DATE column, said in milliseconds where Spark would say the
same after its start. A source the logs cannot describe (a catalog table, a remote path) is left to Spark, and so
is resolving a `join_cond`: both paths run every check before it, so the logs refuse a job only where Spark would,
with the same message.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from deltainc.errors import ConfigError
from deltainc.join.windows import next_window
from deltainc.pipeline.controller.plan import PipelineResult
from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.table import logs_else, open_handle, shape_from_log
from deltainc.pipeline.job.job_config import JobConfig, load
from deltainc.pipeline.job.kinds import JoinPlan
from deltainc.pipeline.job.kinds.two_source import kind_of
from deltainc.pipeline.state import (
    JobState,
    Lease,
    check_unchanged,
    latest_in_sources,
    locked,
    read_state,
    read_state_from_log,
    remove_lock,
    state_paths,
)
from deltainc.settings import Settings
from deltainc.time_units import parse_point, to_index, unit_label

__all__ = [
    "BeforeSpark",
    "Latest",
    "SparkNeeded",
    "before_spark",
    "check_from_logs",
    "from_logs_else_spark",
    "hold_lock",
    "nothing_pending",
    "unlock",
]

log = logging.getLogger("deltainc")
T = TypeVar("T")
_STARTS_SPARK = "%s starts Spark: the Delta logs cannot answer: %s"


def check_from_logs(job: JobConfig) -> JoinPlan:
    """The job checked by its kind (`plan_join`'s checks, or `check_feature_job`'s) against its sources' schemas in
    their logs: ConfigError or SchemaError naming the setting, as `prepare_job` would raise, which takes the plan on
    once Spark is up; LogUnreadable when a source's log cannot tell, so Spark checks it."""
    schemas = {}
    for role, ref in job.sources:  # in the order prepare_job reads them, so that a missing source is named alike
        try:
            schemas[role] = shape_from_log(open_handle(ref, role).log_location()).schema
        except FileNotFoundError:
            raise ConfigError(f"{role}: no Delta table at {ref.label}") from None
    return kind_of(job).plan(schemas)


class SparkNeeded(Exception):
    """The Delta logs answered, and the answer is work only Spark can do (windows pending, a target to write)."""


def from_logs_else_spark(job: str, command: str, from_logs: Callable[[], T], with_spark: Callable[[], T]) -> T:
    """`from_logs()` when the Delta logs answer; else `with_spark()`, after one log line saying why.

    `from_logs` raises LogUnreadable where the logs cannot answer exactly (a catalog table, a remote path, a
    `join_cond` only Spark resolves) and SparkNeeded where they show work for Spark; any other error (a job that
    does not fit its sources, changed settings) is the command's answer and goes to the caller, Spark unstarted.

    Args:
        job: the job's name, for the log line.
        command: the command, for the log line (`status`, `validate`, `run`, ...).
        from_logs: the answer from the Delta logs alone.
        with_spark: the answer with Spark, started by it.

    Example:
        ```python
        state = from_logs_else_spark(job.name, "status", lambda: status_from_log(job, settings, 5), with_spark)
        ```
    """
    try:
        return logs_else(f"{job}: {command}", from_logs, lambda _why: with_spark(), _STARTS_SPARK)
    except SparkNeeded as exc:
        log.info("%s: %s starts Spark: %s", job, command, exc)
    return with_spark()


def nothing_pending(job: JobConfig, watermark: int | None, latest: int | None, until: int | None) -> str:
    """Why a run has nothing to do, naming the fact that stops it (start_date, until, or no new data)."""
    uom, inc = job.join.time_uom, job.join.inc_col
    start = to_index(job.start_date, uom)

    def label(unit: int | None) -> str:
        return unit_label(unit, uom) or "none"

    facts = f"watermark {label(watermark)}, latest {inc} in {job.all_sources} {label(latest)}"
    if latest is None:
        return f"nothing pending for {job.name}: a source has no rows with a {inc} yet ({facts})"
    if watermark is None and start > latest:
        return (
            f"nothing pending for {job.name}: start_date {job.start_date} is after the latest {inc} "
            f"in {job.all_sources} {label(latest)}"
        )
    if until is not None and watermark is not None and start <= until <= watermark:
        return (
            f"nothing pending for {job.name} until {label(until)}: {facts}; {label(until)} is processed already: "
            f"to recompute it (its sources corrected), `deltainc rerun {job.name} --start {label(until)} --end "
            f"{label(until)}`"
        )
    if until is not None and (start - 1 if watermark is None else watermark) >= until:
        return f"nothing pending for {job.name} until {label(until)}: {facts}"
    return f"nothing pending for {job.name}: {facts}"


@dataclass(frozen=True)
class Latest:
    """The latest unit present in every source, as the command worked it out (None: a source has none yet)."""

    unit: int | None


@dataclass(frozen=True)
class _Logged:
    """What `run` read from the logs before Spark: the job's state and the sources' latest unit, carried on to the
    lock and to Spark so that neither is worked out twice."""

    state: JobState
    latest: Latest


def _logged(job: JobConfig, settings: Settings) -> _Logged:
    """The job's state and its sources' latest unit from the Delta logs; LogUnreadable when they cannot tell (a
    catalog table, a missing source: Spark says why)."""
    root = job.state_path(settings.state_dir)
    try:
        state = read_state_from_log(state_paths(root), job.name)
        return _Logged(state, Latest(latest_in_sources(job, settings.state_dir)))
    except FileNotFoundError as exc:
        raise LogUnreadable(str(exc)) from exc


def _idle_run(job: JobConfig, until: str | dt.date | None, logged: _Logged) -> PipelineResult:
    """`run`'s result when the logs show nothing pending (its settings checked as a run checks them). SparkNeeded
    naming the next window when there is work to do."""
    uom = job.join.time_uom
    until_unit = None if until is None else parse_point(until, "--until", uom)
    state, latest = logged.state, logged.latest.unit
    start = to_index(job.start_date, uom)
    pending = next_window(state.watermark, start, latest, until_unit, job.max_window, uom)
    if pending is not None:
        raise SparkNeeded(f"{pending} pending")
    check_unchanged(job, state.settings, "run")
    message = nothing_pending(job, state.watermark, latest, until_unit)
    label = unit_label(state.watermark, uom)
    return PipelineResult(job.name, "run", None, (), label, message)


def unlock(
    job: JobConfig | str | Path, run_id: str | None = None, settings: Settings | None = None
) -> list[dict[str, object]]:
    """Remove the job's lock by hand (only run `run_id`'s when given); the lock rows removed. Rarely needed: the
    next run takes over a dead run's lock by itself."""
    job, settings = load(job, settings)
    paths = state_paths(job.state_path(settings.state_dir))
    read_state(paths, job.name)  # a state folder that cannot be read says so here, naming state_dir
    return remove_lock(paths.locks, job.name, run_id)


@contextmanager
def hold_lock(
    job: JobConfig,
    settings: Settings,
    command: str = "run",
    check_settings: bool = True,
    state: JobState | None = None,
) -> Iterator[Lease]:
    """Take the job's lock now, without a JVM, and hold it (renewed) for the block: what `run`, `rerun` and
    `backfill` do before they start Spark, so that a second run exits 3 at once instead of starting a JVM first,
    and `status` shows the run from its first second. Changed settings are refused before (nothing written).

    The lease's `state` is the job's state as of holding the lock, its settings checked (`check_settings`): the
    one the command reads, `state` when given (read just before, from the logs) and nobody took the lock since;
    read again, and checked again, when the lock changed hands meanwhile.

    Example: ``with hold_lock(job, settings) as lease: print(lease.run_id)``.
    """
    paths = state_paths(job.state_path(settings.state_dir))
    state = read_state(paths, job.name) if state is None else state
    if check_settings:
        check_unchanged(job, state.settings, command)
    with locked(paths, job.name, settings.lock_expiry_seconds, state) as lease:
        if check_settings and lease.state is not state:  # the lock changed hands: the settings as of holding it
            check_unchanged(job, lease.state.settings, command)
        yield lease


@dataclass(frozen=True)
class BeforeSpark:
    """What a writing command found before Spark starts: a run's answer from the logs (nothing pending), or the
    job's join checked from them (None where they could not tell) and the job's lock, held while Spark works;
    `latest`, the sources' latest unit where a run worked it out from the logs (None: not worked out yet)."""

    answer: PipelineResult | None = None
    checked: JoinPlan | None = None
    lease: Lease | None = None
    latest: Latest | None = None

    @property
    def state(self) -> JobState | None:
        """The job's state as of holding the lock (its settings checked unless a rebuild); None without the lock."""
        return None if self.lease is None else self.lease.state


@contextmanager
def before_spark(
    job: JobConfig,
    settings: Settings,
    command: str,
    until: str | dt.date | None = None,
    rebuild: bool = False,
) -> Iterator[BeforeSpark]:
    """The part of `run`, `rerun` and `backfill` before Spark starts: the job checked against its sources' Delta
    logs (what does not fit is refused here, nothing written), a `run` with nothing pending answered from them, and
    otherwise the job's lock taken (`hold_lock`) and held for the block, where Spark does the work; why Spark
    starts is logged once (`from_logs_else_spark`).

    Args:
        job: the job.
        settings: the global settings.
        command: `run`, `rerun` or `backfill`: what the lock and a refusal of changed settings name.
        until: `run --until`: what counts as pending.
        rebuild: `run --rebuild`: always Spark, and the settings may have changed.

    Example:
        ```python
        with before_spark(job, settings, "run") as found:
            result = found.answer or run_with_spark(job, found.checked, found.lease)
        ```
    """
    checked: list[JoinPlan] = []  # the job's join as the logs checked it, for Spark to take on
    logged: list[_Logged] = []  # the state and latest unit a run read from the logs, for the lock and Spark

    def from_logs() -> PipelineResult | None:
        checked.append(check_from_logs(job))  # a source or column that does not fit: refused before Spark starts
        if command != "run" or rebuild:
            raise SparkNeeded("a rebuild recomputes the target" if rebuild else f"{command} recomputes windows")
        logged.append(_logged(job, settings))
        return _idle_run(job, until, logged[0])

    answer = from_logs_else_spark(job.name, command, from_logs, lambda: None)  # None: Spark does the work
    if answer is not None:
        yield BeforeSpark(answer)
        return
    found = logged[0] if logged else None
    with hold_lock(job, settings, command, not rebuild, None if found is None else found.state) as lease:
        yield BeforeSpark(None, checked[0] if checked else None, lease, None if found is None else found.latest)
