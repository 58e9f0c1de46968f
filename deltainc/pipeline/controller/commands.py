"""The controller (docs/design.md#run-modes): which windows a command processes, under the job's lock.

`run` processes what is pending after the watermark, `rerun` a processed window again, `backfill` a historic
range in chunks. Each goes once: the Delta logs asked before Spark starts (`before_spark`: nothing pending answered,
the lock taken), Spark started, the windows planned and executed one by one (`controller/window.py`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from pyspark.sql import SparkSession

from deltainc.errors import Cancelled, ConfigError
from deltainc.join.windows import Window, chunk_windows
from deltainc.pipeline.controller.before_spark import BeforeSpark, before_spark, nothing_pending
from deltainc.pipeline.controller.plan import (
    PipelineResult,
    Planned,
    WindowReport,
    backfill_plan,
    check_backfill_start,
    rebuild_plan,
    rerun_plan,
    run_plan,
    to_do,
)
from deltainc.pipeline.controller.prepared_job import PreparedJob, latest_available, open_job
from deltainc.pipeline.controller.window import StepHook, begin, process_planned, record_stop
from deltainc.pipeline.delta.snapshot import one_look
from deltainc.pipeline.job.job_config import JobConfig, load
from deltainc.pipeline.state import Command, JobState, Lease, check_unchanged, locked
from deltainc.pipeline.state.downstream import DownstreamRerun, downstream_reruns, encode_reruns
from deltainc.pipeline.target.modes import write_mode
from deltainc.settings import Settings
from deltainc.stop_notice import doing
from deltainc.time_units import parse_point

__all__ = ["run", "rerun", "backfill"]


WindowHook = Callable[[WindowReport], None]
ProgressHook = Callable[[int, int, WindowReport | None, Window], None]  # chunk number, of, its report
Plan = tuple[Planned, ...]
Session = SparkSession | Callable[[], SparkSession] | None  # a session, one started when asked for, or get_spark()'s


def _before_spark(job: JobConfig, settings: Settings, command: Command, spark: Session,
                  until: str | dt.date | None = None,
                  rebuild: bool = False) -> AbstractContextManager[BeforeSpark]:  # fmt: skip
    """`before_spark` for a session yet to start (None, or a function that starts it); nothing for a given one."""
    if spark is None or callable(spark):
        return before_spark(job, settings, command.value, until, rebuild)
    return nullcontext(BeforeSpark())


def _locked(prepared: PreparedJob, state: JobState | None, lease: Lease | None) -> AbstractContextManager[Lease]:
    """The job's lock for the block; `lease` when `before_spark` took it, made to name the driver started since."""
    if lease is None:
        return locked(prepared.paths, prepared.job.name, prepared.settings.lock_expiry_seconds, state)
    lease.name_drivers()
    return nullcontext(lease)


def _result(prepared: PreparedJob, command: str, run_id: str | None, reports: list[WindowReport], message: str,
            watermark: int | None, below: tuple[DownstreamRerun, ...] = ()) -> PipelineResult:  # fmt: skip
    label = prepared.label(watermark)
    return PipelineResult(prepared.job.name, command, run_id, tuple(reports), label, message, below)


@one_look()
def run(
    job: JobConfig | str | Path,
    until: str | dt.date | None = None,
    spark: Session = None,
    settings: Settings | None = None,
    on_step: StepHook | None = None,
    on_window: WindowHook | None = None,
    rebuild: bool = False,
) -> PipelineResult:
    """Process every pending window: from the unit after the watermark to the latest RecDate in both sources.

    `rebuild` recomputes the whole target under the job's current settings instead: one window from
    start_date to the latest RecDate, written over the target in one commit (the way to change settings).
    `on_window` is called after each window committed (to report progress as it happens).

    Args:
        job: a job (`load_job`'s), a job name in the settings' job_dir, or a job file's path.
        until: process nothing after this unit (a date, or an ISO datetime for hour and minute jobs).
        spark: the session to run in (a local one, or a Spark Connect client), or a function that starts it; None =
            `get_spark()` from the settings. Without a session, the job is checked and a run with nothing pending
            answered from the Delta logs, and the lock is taken, before Spark starts.
        settings: the global settings; None = `conf/deltainc.toml` and the `DELTAINC_*` variables.
        on_step: called at each step of a window (for tests and progress).
        on_window: called with each window's report as soon as its commits are done.
        rebuild: recompute the whole target under the current settings, over the target in one commit.

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
    config, settings = load(job, settings)
    if rebuild and until is not None:
        raise ConfigError("--until: a rebuild always goes to the latest RecDate in both sources; drop --until")
    with (
        doing(config.name, Command.RUN.value),
        _before_spark(config, settings, Command.RUN, spark, until, rebuild) as found,
    ):
        if found.answer is not None:
            return found.answer
        prepared, state = open_job(config, spark, settings, "run", not rebuild, found.checked, found.state)
        until_unit = None if until is None else parse_point(until, "--until", prepared.uom)
        latest = found.latest.unit if found.latest is not None else latest_available(prepared)
        if rebuild:
            replan: Callable[[int | None], Plan] = partial(rebuild_plan, prepared.job, latest=latest)
        else:
            replan = partial(run_plan, prepared.job, latest=latest, until=until_unit)
        plan = replan(state.watermark)  # a rebuild is refused here, before the lock
        if not plan:
            message = nothing_pending(prepared.job, state.watermark, latest, until_unit)
            return _result(prepared, Command.RUN, None, [], message, state.watermark)
        done = _execute(prepared, state, Command.RUN, plan, replan, on_step, found.lease, not rebuild, on_window)
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
    spark: Session = None,
    settings: Settings | None = None,
    on_step: StepHook | None = None,
    on_window: WindowHook | None = None,
) -> PipelineResult:
    """Recompute an already processed window; the target changes only where the sources changed.

    The watermark stays. With the sliding join window and `target.corrections = "apply"`, the window runs
    on to the watermark (rows after --start depend on it); otherwise the forward-only MERGE applies it.

    Args:
        job: a job, a job name or a job file's path (as for `run`).
        start: the first unit to recompute; it must be processed already (at or before the watermark).
        end: the last unit; None = `start` alone.
        spark: the session to run in, or a function that starts it; None = `get_spark()` (as for `run`).
        settings: the global settings; None = read them.
        on_step: called at each step of the window.
        on_window: called with the window's report once its commits are done.

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
    config, settings = load(job, settings)
    with doing(config.name, Command.RERUN.value), _before_spark(config, settings, Command.RERUN, spark) as found:
        prepared, state = open_job(config, spark, settings, "rerun", checked=found.checked, state=found.state)
        first = parse_point(start, "--start", prepared.uom)
        last = first if end is None else parse_point(end, "--end", prepared.uom)
        # Name the argument the user gave: with no --end, the window is the one unit of --start.
        last_arg = "--start" if end is None else "--end"
        window = Window(first, last, prepared.uom)
        plan = rerun_plan(prepared.job, first, last, state.watermark, last_arg)  # the watermark as read: it stays
        below = downstream_reruns(config.name, start, settings.job_dir, settings.state_dir, strict=False)
        done = _execute(prepared, state, Command.RERUN, plan, lambda _: plan, on_step, found.lease, False, on_window,
                        downstream=encode_reruns(below))  # fmt: skip
        todo = plan[0].window
        message = f"re-ran {window}" + (f" (recomputed {todo}: rows after it depend on it)" if todo != window else "")
        return _result(prepared, Command.RERUN, done.run_id, done.reports, message, state.watermark, below)


@one_look()
def backfill(
    job: JobConfig | str | Path,
    start: str | dt.date,
    end: str | dt.date,
    chunk: str = "month",
    spark: Session = None,
    settings: Settings | None = None,
    on_progress: ProgressHook | None = None,
    on_step: StepHook | None = None,
) -> PipelineResult:
    """Process a historic range in chunks (day, month, year, all), each a forward window of its own.

    Resumable: chunks up to the watermark are skipped (`on_progress` is told of them with no report), so the
    same command run again after a failure goes on where it stopped.

    Args:
        job: a job, a job name or a job file's path (as for `run`).
        start: the range's first unit; at `start_date` or after, and not after the unit following the watermark.
        end: the range's last unit, at or before the latest RecDate present in every source.
        chunk: `day`, `month`, `year` or `all` (one window).
        spark: the session to run in, or a function that starts it; None = `get_spark()` (as for `run`).
        settings: the global settings; None = read them.
        on_progress: called after each chunk (done or skipped), e.g. for a progress bar.
        on_step: called at each step of a window.

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
    config, settings = load(job, settings)
    with doing(config.name, Command.BACKFILL.value), _before_spark(config, settings, Command.BACKFILL, spark) as found:
        prepared, state = open_job(config, spark, settings, "backfill", checked=found.checked, state=found.state)
        first = parse_point(start, "--start", prepared.uom)
        last = parse_point(end, "--end", prepared.uom)
        chunk_windows(Window(first, last, prepared.uom), chunk)  # an unknown chunk is refused first
        check_backfill_start(prepared.job, first, state.watermark)  # before the sources are scanned
        latest = latest_available(prepared)

        def replan(watermark: int | None) -> tuple[Planned, ...]:
            return backfill_plan(prepared.job, first, last, chunk, watermark, latest)

        plan = replan(state.watermark)  # refused before the lock
        done = _execute(prepared, state, Command.BACKFILL, plan, replan, on_step, found.lease, on_progress=on_progress)
        message = f"backfilled {len(done.reports)} of {done.planned} chunk(s)"
        return _result(prepared, Command.BACKFILL, done.run_id, done.reports, message, done.watermark)


@dataclass(frozen=True)
class _Executed:
    """What executing a plan under the lock did: its run, its windows' reports, the watermark it leaves."""

    run_id: str
    reports: list[WindowReport]
    watermark: int | None
    planned: int  # windows in the plan, done ones included


def _execute(prepared: PreparedJob, state: JobState, command: Command, plan: Plan,
             replan: Callable[[int | None], Plan], on_step: StepHook | None, lease: Lease | None, check: bool = True,
             on_window: WindowHook | None = None, on_progress: ProgressHook | None = None,
             downstream: str | None = None) -> _Executed:  # fmt: skip
    """Take the lock (or hold `lease`, taken before Spark), and process the plan's windows in order; each window's
    run-log row moves the watermark (or not: its mode says), and the last one releases the lock. Stopped between
    two windows, the next one's row says cancelled. `downstream`: what a rerun's rows record of the jobs below it
    (`encode_reruns`).

    `plan` was made from `state`'s watermark, and `state`'s settings were checked (where `check` says): when the
    lock is taken with `state` (nobody took it since it was read, which the lock's compare and swap ensures), that
    is the state as of holding the lock, and the plan is used as it is; when the lock changed hands meanwhile, the
    state is the one read again under it: its settings are checked again, and `replan` plans from its watermark."""
    with _locked(prepared, state, lease) as held:
        watermark, items = held.state.watermark, plan
        if held.state is not state:  # the lock changed hands since `state` was read: as of holding it
            if check:
                check_unchanged(prepared.job, held.state.settings, command.value)
            items = replan(watermark)
        todo = to_do(items)
        ongoing = begin(prepared, command, held, on_step, downstream)
        reports: list[WindowReport] = []
        try:
            for item in items:
                if not item.done:
                    report = process_planned(
                        ongoing, item, len(items), prepared.label(watermark), last=item is todo[-1]
                    )
                    reports.append(report)
                    if write_mode(item.mode).moves_watermark:
                        watermark = item.window.end  # only this run moves it while it holds the lock
                    if on_window:
                        on_window(report)
                if on_progress:
                    on_progress(item.number, len(items), None if item.done else reports[-1], item.window)
        except (KeyboardInterrupt, Cancelled) as exc:
            upcoming = todo[len(reports)].window if len(reports) < len(todo) else None
            record_stop(ongoing, upcoming, exc)
            raise
    return _Executed(held.run_id, reports, watermark, len(items))
