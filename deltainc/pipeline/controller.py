"""The controller (docs/design.md#run-modes): which windows a command processes, under the job's lock.

`run` processes what is pending after the watermark, `rerun` a processed window again, `backfill` a historic
range in chunks; `status` says where a job stands. Each window goes engine -> write -> run log (`window/run.py`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from pyspark.sql import SparkSession

from deltainc.errors import Cancelled, ConfigError, SchemaError
from deltainc.join.windows import Window, chunk_windows, parse_point
from deltainc.pipeline.delta.delta_log import LogUnreadable, asking_spark
from deltainc.pipeline.delta.snapshot import one_look
from deltainc.pipeline.delta.sources import latest_unit, read_table
from deltainc.pipeline.from_delta_logs.commands import nothing_pending, write_command
from deltainc.pipeline.from_delta_logs.status import latest_in_both
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds import JoinPlan
from deltainc.pipeline.plan import (
    Planned,
    backfill_plan,
    check_backfill_start,
    rebuild_plan,
    rerun_plan,
    run_plan,
    to_do,
)
from deltainc.pipeline.prepared_job import PreparedJob, load, open_job
from deltainc.pipeline.results import PipelineResult, WindowReport
from deltainc.pipeline.state import (
    Command,
    JobState,
    JobStatus,
    Lease,
    check_unchanged,
    describe,
    locked,
    read_runs,
    read_state,
    state_paths,
)
from deltainc.pipeline.window.run import StepHook, begin, process_window, record_stop
from deltainc.settings import Settings
from deltainc.spark import job_session

__all__ = ["run", "rerun", "backfill", "status"]

WindowHook = Callable[[WindowReport], None]
ProgressHook = Callable[[int, int, WindowReport | None, Window], None]  # chunk number, of, its report


def _locked(
    prepared: PreparedJob, state: JobState | None, lease: Lease | None
) -> contextlib.AbstractContextManager[Lease]:
    """The job's lock, held for the block (`lease.locked`) with the settings' expiry; `lease` when the command took
    it before Spark started (`write_command`), made to name the Spark driver it has started since."""
    if lease is None:
        return locked(prepared.paths, prepared.job.name, prepared.settings.lock_expiry_seconds, state)
    lease.name_drivers()
    return contextlib.nullcontext(lease)


def _latest_available(prepared: PreparedJob) -> int | None:
    """The latest unit present in both sources: from their Delta logs where they answer exactly, else with Spark."""
    try:
        return latest_in_both(prepared.job)
    except (LogUnreadable, FileNotFoundError) as exc:
        asking_spark(f"{prepared.job.name}: the latest {prepared.job.join.inc_col} in the sources", exc)
    inc, uom = prepared.job.join.inc_col, prepared.uom
    units = [latest_unit(frame, inc, uom) for frame in prepared.join.frames.values()]
    return None if None in units else min(u for u in units if u is not None)


def _result(
    prepared: PreparedJob,
    command: str,
    run_id: str | None,
    reports: list[WindowReport],
    message: str,
    watermark: int | None,
) -> PipelineResult:
    return PipelineResult(prepared.job.name, command, run_id, tuple(reports), prepared.label(watermark), message)


@one_look()
def run(
    job: JobConfig | str | Path,
    until: str | dt.date | None = None,
    spark: SparkSession | None = None,
    settings: Settings | None = None,
    on_step: StepHook | None = None,
    on_window: WindowHook | None = None,
    rebuild: bool = False,
    lease: Lease | None = None,
    checked: JoinPlan | None = None,
) -> PipelineResult:
    """Process every pending window: from the unit after the watermark to the latest RecDate in both sources.

    `rebuild` recomputes the whole target under the job's current settings instead: one window from
    start_date to the latest RecDate, written over the target in one commit (the way to change settings).
    `on_window` is called after each window committed (to report progress as it happens).

    Args:
        job: a job (`load_job`'s), a job name in the settings' job_dir, or a job file's path.
        until: process nothing after this unit (a date, or an ISO datetime for hour and minute jobs).
        spark: the session to run in (a local one, or a Spark Connect client); None = `get_spark()` from the
            settings. With None, a run with nothing pending is answered from the Delta logs without Spark.
        settings: the global settings; None = `conf/deltainc.toml` and the `DELTAINC_*` variables.
        on_step: called at each step of a window (for tests and progress).
        on_window: called with each window's report as soon as its commits are done.
        rebuild: recompute the whole target under the current settings, over the target in one commit.
        lease: the job's lock, taken before Spark started (`write_command`); with neither a session nor a lease,
            the lock is taken here before Spark starts.
        checked: the job as checked from its sources' Delta logs before Spark started (`check_from_logs`), so
            that it is not checked again; None = checked once Spark is up.

    Returns:
        Its windows' reports (each with its run-log row), the watermark and a one-line message.

    Raises:
        ConfigError: the job file, a setting or an argument is invalid, or a setting changed since the target
            was built (nothing is written).
        SchemaError: a source lacks a column the job names, or the target's columns do not fit.
        JobLockedError: another live run of the job holds its lock.

    Example:
        ```python
        from deltainc import load_job, run

        result = run(load_job("conf/jobs/bank_trx.toml"), until="2025-03-09")
        print(result.message, result.watermark)
        ```
    """
    if spark is None and lease is None:  # what does not fit, or that there is nothing to do, is found in the logs
        return write_command(
            job,
            settings,
            Command.RUN.value,
            lambda held, plan: run(job, until, None, settings, on_step, on_window, rebuild, held, plan),
            until,
            rebuild,
        )
    prepared, state = open_job(job, spark, settings, "run", check_settings=not rebuild, checked=checked)
    if rebuild and until is not None:
        raise ConfigError("--until: a rebuild always goes to the latest RecDate in both sources; drop --until")
    until_unit = None if until is None else parse_point(until, "--until", prepared.uom)
    latest = _latest_available(prepared)
    if rebuild:
        rebuild_plan(prepared.job, state.watermark, latest)  # refused before the lock
        planned = partial(rebuild_plan, prepared.job, latest=latest)  # planned again from the watermark once locked
    elif not run_plan(prepared.job, state.watermark, latest, until_unit):
        message = nothing_pending(prepared.job, state.watermark, latest, until_unit)
        return _result(prepared, Command.RUN, None, [], message, state.watermark)
    else:
        planned = partial(run_plan, prepared.job, latest=latest, until=until_unit)
    done = _execute(prepared, state, Command.RUN, planned, on_step, _each(on_window), lease, check=not rebuild)
    if rebuild:
        message = f"rebuilt the target in {done.reports[0].window}"
    else:
        message = f"processed {len(done.reports)} window(s)"
    return _result(prepared, Command.RUN, done.run_id, done.reports, message, done.watermark)


@one_look()
def rerun(
    job: JobConfig | str | Path,
    start: str | dt.date,
    end: str | dt.date | None = None,
    spark: SparkSession | None = None,
    settings: Settings | None = None,
    on_step: StepHook | None = None,
    on_window: WindowHook | None = None,
    lease: Lease | None = None,
    checked: JoinPlan | None = None,
) -> PipelineResult:
    """Recompute an already processed window; the target changes only where the sources changed.

    The watermark stays. With the sliding join window and `target.corrections = "apply"`, the window runs
    on to the watermark (rows after --start depend on it); otherwise the forward-only MERGE applies it.

    Args:
        job: a job, a job name or a job file's path (as for `run`).
        start: the first unit to recompute; it must be processed already (at or before the watermark).
        end: the last unit; None = `start` alone.
        spark: the session to run in; None = `get_spark()` from the settings.
        settings: the global settings; None = read them.
        on_step: called at each step of the window.
        on_window: called with the window's report once its commits are done.
        lease: as for `run`.
        checked: as for `run`.

    Returns:
        The window's report (its run-log row counts the rows inserted and deleted), the unchanged watermark.

    Raises:
        ConfigError: `start` or `end` is after the watermark or before `start_date`, or the job is invalid.
        JobLockedError: another live run of the job holds its lock.

    Example:
        ```python
        from deltainc import rerun

        report = rerun("bank_trx", "2025-03-05").windows[0].record
        print(report.rows_inserted, report.rows_deleted)  # 0 0 when the sources did not change
        ```
    """
    if spark is None and lease is None:  # the job checked and its lock taken before Spark starts
        return write_command(
            job,
            settings,
            Command.RERUN.value,
            lambda held, plan: rerun(job, start, end, None, settings, on_step, on_window, held, plan),
        )
    prepared, state = open_job(job, spark, settings, "rerun", checked=checked)
    first = parse_point(start, "--start", prepared.uom)
    last = first if end is None else parse_point(end, "--end", prepared.uom)
    # Name the argument the user gave: with no --end, the window is the one unit of --start.
    last_arg = "--start" if end is None else "--end"
    window = Window(first, last, prepared.uom)
    plan = rerun_plan(prepared.job, first, last, state.watermark, last_arg)  # the watermark as read: it stays
    done = _execute(
        prepared, state, Command.RERUN, lambda _watermark: plan, on_step, _each(on_window), lease, check=False
    )
    todo = plan[0].window
    message = f"re-ran {window}" + (f" (recomputed {todo}: rows after it depend on it)" if todo != window else "")
    return _result(prepared, Command.RERUN, done.run_id, done.reports, message, state.watermark)


@one_look()
def backfill(
    job: JobConfig | str | Path,
    start: str | dt.date,
    end: str | dt.date,
    chunk: str = "month",
    spark: SparkSession | None = None,
    settings: Settings | None = None,
    on_progress: ProgressHook | None = None,
    on_step: StepHook | None = None,
    lease: Lease | None = None,
    checked: JoinPlan | None = None,
) -> PipelineResult:
    """Process a historic range in chunks (day, month, year, all), each a forward window of its own.

    Resumable: chunks up to the watermark are skipped (`on_progress` is told of them with no report), so the
    same command run again after a failure goes on where it stopped.

    Args:
        job: a job, a job name or a job file's path (as for `run`).
        start: the range's first unit; at `start_date` or after, and not after the unit following the watermark.
        end: the range's last unit, at or before the latest RecDate present in every source.
        chunk: `day`, `month`, `year` or `all` (one window).
        spark: the session to run in; None = `get_spark()` from the settings.
        settings: the global settings; None = read them.
        on_progress: called after each chunk (done or skipped), e.g. for a progress bar.
        on_step: called at each step of a window.
        lease: as for `run`.
        checked: as for `run`.

    Returns:
        The reports of the chunks processed and the watermark.

    Raises:
        ConfigError: a bad range or chunk, or an invalid job (nothing is written).
        JobLockedError: another live run of the job holds its lock.

    Example:
        ```python
        from deltainc import backfill

        backfill("bank_trx", "2025-03-01", "2025-03-31", chunk="day")
        ```
    """
    if spark is None and lease is None:  # the job checked and its lock taken before Spark starts
        return write_command(
            job,
            settings,
            Command.BACKFILL.value,
            lambda held, plan: backfill(job, start, end, chunk, None, settings, on_progress, on_step, held, plan),
        )
    prepared, state = open_job(job, spark, settings, "backfill", checked=checked)
    first = parse_point(start, "--start", prepared.uom)
    last = parse_point(end, "--end", prepared.uom)
    chunk_windows(Window(first, last, prepared.uom), chunk)  # an unknown chunk is refused first
    check_backfill_start(prepared.job, first, state.watermark)  # before the sources are scanned
    latest = _latest_available(prepared)
    backfill_plan(prepared.job, first, last, chunk, state.watermark, latest)  # refused before the lock

    def planned(watermark: int | None) -> tuple[Planned, ...]:
        return backfill_plan(prepared.job, first, last, chunk, watermark, latest)

    def progress(item: Planned, of: int, report: WindowReport | None) -> None:
        if on_progress:
            on_progress(item.number, of, report, item.window)

    done = _execute(prepared, state, Command.BACKFILL, planned, on_step, progress, lease)
    message = f"backfilled {len(done.reports)} of {done.planned} chunk(s)"
    return _result(prepared, Command.BACKFILL, done.run_id, done.reports, message, done.watermark)


@dataclass(frozen=True)
class _Executed:
    """What executing a plan under the lock did: its run, its windows' reports, the watermark it leaves."""

    run_id: str
    reports: list[WindowReport]
    watermark: int | None
    planned: int  # windows in the plan, done ones included


def _execute(
    prepared: PreparedJob,
    state: JobState,
    command: Command,
    plan: Callable[[int | None], tuple[Planned, ...]],
    on_step: StepHook | None,
    on_item: Callable[[Planned, int, WindowReport | None], None],
    lease: Lease | None,
    check: bool = True,
) -> _Executed:
    """Take the lock, plan from the watermark as of holding it (its settings `check`ed again), and process the
    plan's windows in order; each window's run-log row moves the watermark (or not: its mode says), and the
    last one releases the lock. Stopped between two windows, the next one's row says cancelled."""
    with _locked(prepared, state, lease) as held:
        if check:
            check_unchanged(prepared.job, held.state.settings, command.value)  # as of holding the lock
        watermark = held.state.watermark
        items = plan(watermark)
        todo = to_do(items)
        ongoing = begin(prepared, command, held, on_step)
        reports: list[WindowReport] = []
        try:
            for item in items:
                if not item.done:
                    report = process_window(ongoing, item.window, item.mode, last=item is todo[-1])
                    reports.append(report)
                    if item.mode.moves_watermark:
                        watermark = item.window.end  # only this run moves it while it holds the lock
                on_item(item, len(items), None if item.done else reports[-1])
        except (KeyboardInterrupt, Cancelled) as exc:
            upcoming = todo[len(reports)].window if len(reports) < len(todo) else None
            record_stop(ongoing, upcoming, exc)
            raise
    return _Executed(held.run_id, reports, watermark, len(items))


def _each(on_window: WindowHook | None) -> Callable[[Planned, int, WindowReport | None], None]:
    """A plan item's hook calling `on_window` with each window's report."""

    def told(_item: Planned, _of: int, report: WindowReport | None) -> None:
        if on_window and report is not None:
            on_window(report)

    return told


@one_look()
def status(
    job: JobConfig | str | Path, spark: SparkSession | None = None, settings: Settings | None = None, runs: int = 5
) -> JobStatus:
    """Where the job stands, read with Spark: watermark, latest data in every source, all that is pending, the
    lock and recent runs. A missing source is reported as the status's `problem`, not raised: the rest shows.

    (`deltainc status` answers from the Delta logs without Spark where it can.)

    Args:
        job: a job, a job name or a job file's path (as for `run`).
        spark: the session to read the sources with; None = `get_spark()` from the settings.
        settings: the global settings; None = read them.
        runs: how many of the latest run-log rows to return.

    Returns:
        The job's `JobStatus`: `watermark`, `latest_available`, `pending` (None when up to date), `lock`,
            `runs`, `changed_settings` and `problem`.

    Example:
        ```python
        from deltainc import status

        print(status("bank_trx").pending)  # None when nothing is pending
        ```
    """
    job, settings = load(job, settings)
    spark = job_session(spark, settings, job.on_s3)
    paths = state_paths(job.state_path(settings.state_dir))
    state = read_state(paths, job.name)
    recent = read_runs(paths, job.name, runs)
    latest: int | None = None
    problem = None
    try:
        units = [
            latest_unit(read_table(spark, ref, role), job.join.inc_col, job.join.time_uom) for role, ref in job.sources
        ]
        latest = None if None in units else min(u for u in units if u is not None)
    except (ConfigError, SchemaError) as exc:
        problem = str(exc)
    return describe(job, state, latest, recent, settings.lock_expiry_seconds, problem)
