"""The controller (docs/design.md#run-modes): which windows a command processes, under the job's lock.

`run` processes what is pending after the watermark, `rerun` a processed window again, `backfill` a historic
range in chunks; `status` says where a job stands. Each window goes engine -> write -> run log (`window_run`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import SparkSession

from deltainc.errors import Cancelled, ConfigError, SchemaError
from deltainc.join.windows import Window, chunk_windows, next_window, parse_point
from deltainc.pipeline.delta.log_tables import LogUnreadable, asking_spark
from deltainc.pipeline.delta.sources import latest_unit, read_table
from deltainc.pipeline.job.config import JobConfig
from deltainc.pipeline.log_checks import check_from_logs
from deltainc.pipeline.log_commands import idle_run, nothing_pending
from deltainc.pipeline.log_status import latest_in_both
from deltainc.pipeline.prepared_job import PreparedJob, check_start, load, open_job
from deltainc.pipeline.results import PipelineResult, WindowReport
from deltainc.pipeline.state.job_status import JobStatus, describe
from deltainc.pipeline.state.lease import Lease, locked
from deltainc.pipeline.state.remembered_settings import check_unchanged
from deltainc.pipeline.state.store import JobState, read_runs, read_state, state_paths
from deltainc.pipeline.target.forward_only_write import RERUN
from deltainc.pipeline.target.rebuild_write import REBUILD
from deltainc.pipeline.target.recompute_write import RECOMPUTE
from deltainc.pipeline.target_writes import forward_mode
from deltainc.pipeline.window_run import StepHook, begin, process_window, record_stop
from deltainc.settings import Settings
from deltainc.spark import job_session

__all__ = ["run", "rerun", "backfill", "status"]

WindowHook = Callable[[WindowReport], None]
ProgressHook = Callable[[int, int, WindowReport | None, Window], None]  # chunk number, of, its report


def _locked(prepared: PreparedJob, state: JobState | None) -> contextlib.AbstractContextManager[Lease]:
    """The job's lock, held for the block (`lease.locked`) with the settings' expiry."""
    return locked(prepared.paths, prepared.job.name, prepared.settings.lock_expiry_seconds, state)


def _latest_available(prepared: PreparedJob) -> int | None:
    """The latest unit present in both sources: from their Delta logs where they answer exactly, else with Spark."""
    try:
        return latest_in_both(prepared.job)
    except (LogUnreadable, FileNotFoundError) as exc:
        asking_spark(f"{prepared.job.name}: the latest {prepared.job.join.inc_col} in the sources", exc)
    inc, uom = prepared.job.join.inc_col, prepared.uom
    frames = [prepared.df_a, *([] if prepared.df_b is None else [prepared.df_b]), *(f.df for f in prepared.features)]
    units = [latest_unit(frame, inc, uom) for frame in frames]
    return None if None in units else min(u for u in units if u is not None)


def _pending(prepared: PreparedJob, watermark: int | None, latest: int | None, until: int | None) -> Window | None:
    """The next window after `watermark`, up to the latest unit in both sources (and `until`)."""
    return next_window(watermark, prepared.start, latest, until, prepared.job.max_window, prepared.uom)


def _result(
    prepared: PreparedJob,
    command: str,
    run_id: str | None,
    reports: list[WindowReport],
    message: str,
    watermark: int | None,
) -> PipelineResult:
    return PipelineResult(prepared.job.name, command, run_id, tuple(reports), prepared.label(watermark), message)


def run(
    job: JobConfig | str | Path,
    until: str | dt.date | None = None,
    spark: SparkSession | None = None,
    settings: Settings | None = None,
    on_step: StepHook | None = None,
    on_window: WindowHook | None = None,
    rebuild: bool = False,
) -> PipelineResult:
    """Process every pending window: from the unit after the watermark to the latest RecDate in both sources.

    `rebuild` recomputes the whole target under the job's current settings instead: one window from
    start_date to the latest RecDate, written over the target in one commit (the way to change settings).
    `on_window` is called after each window committed (to report progress as it happens).
    """
    if spark is None:  # what does not fit, or that there is nothing to do, is found in the logs without Spark
        check_from_logs(load(job, settings)[0])
    if spark is None and not rebuild:
        idle = idle_run(job, settings, until)
        if idle is not None:
            return idle
    prepared, state = open_job(job, spark, settings, "run", check_settings=not rebuild)
    if rebuild and until is not None:
        raise ConfigError("--until: a rebuild always goes to the latest RecDate in both sources; drop --until")
    until_unit = None if until is None else parse_point(until, "--until", prepared.uom)
    latest = _latest_available(prepared)
    if rebuild:
        return _rebuild(prepared, state, latest, on_step, on_window)
    if _pending(prepared, state.watermark, latest, until_unit) is None:
        message = nothing_pending(prepared.job, state.watermark, latest, until_unit)
        return _result(prepared, "run", None, [], message, state.watermark)
    reports: list[WindowReport] = []
    with _locked(prepared, state) as lease:
        watermark = lease.state.watermark  # as of holding the lock
        ongoing = begin(prepared, "run", lease, on_step)
        check_unchanged(prepared.job, lease.state.settings, "run")  # as of holding the lock
        window = _pending(prepared, watermark, latest, until_unit)
        try:
            while window is not None:
                following = _pending(prepared, window.end, latest, until_unit)
                report = process_window(ongoing, window, forward_mode(prepared.job), last=following is None)
                watermark, window = window.end, following  # only this run moves it while it holds the lock
                reports.append(report)
                if on_window:
                    on_window(report)
        except (KeyboardInterrupt, Cancelled) as exc:  # between two windows: the next one's row says cancelled
            record_stop(ongoing, window, exc)
            raise
    return _result(prepared, "run", lease.run_id, reports, f"processed {len(reports)} window(s)", watermark)


def _rebuild(
    prepared: PreparedJob,
    state: JobState,
    latest: int | None,
    on_step: StepHook | None,
    on_window: WindowHook | None,
) -> PipelineResult:
    """`run --rebuild`: one window from start_date to the latest RecDate in both sources, over the whole target."""
    if latest is None or latest < prepared.start:
        raise ConfigError(
            f"--rebuild: nothing to rebuild from, the latest {prepared.job.join.inc_col} in both sources "
            f"({prepared.label(latest) or 'none'}) is before start_date {prepared.job.start_date}"
        )
    with _locked(prepared, state) as lease:
        watermark = lease.state.watermark  # as of holding the lock
        ongoing = begin(prepared, "run", lease, on_step)
        if watermark is not None and latest < watermark:
            raise ConfigError(
                f"--rebuild: the sources now end at {prepared.label(latest)}, before the watermark "
                f"{prepared.label(watermark)}: rows after it would be lost; backfill into a new target instead"
            )
        report = process_window(ongoing, Window(prepared.start, latest, prepared.uom), REBUILD, last=True)
        if on_window:
            on_window(report)
    return _result(prepared, "run", lease.run_id, [report], f"rebuilt the target in {report.window}", latest)


def rerun(
    job: JobConfig | str | Path,
    start: str | dt.date,
    end: str | dt.date | None = None,
    spark: SparkSession | None = None,
    settings: Settings | None = None,
    on_step: StepHook | None = None,
    on_window: WindowHook | None = None,
) -> PipelineResult:
    """Recompute an already processed window; the target changes only where the sources changed.

    The watermark stays. With the sliding join window and `target.corrections = "apply"`, the window runs
    on to the watermark (rows after --start depend on it); otherwise the forward-only MERGE applies it.
    """
    prepared, state = open_job(job, spark, settings, "rerun")
    first = parse_point(start, "--start", prepared.uom)
    last = first if end is None else parse_point(end, "--end", prepared.uom)
    # Name the argument the user gave: with no --end, the window is the one unit of --start.
    last_arg = "--start" if end is None else "--end"
    window = Window(first, last, prepared.uom)
    watermark = state.watermark
    if watermark is None:
        raise ConfigError(f"rerun: job {prepared.job.name!r} has not run yet; use run")
    check_start(prepared, first, "rerun")
    if last > watermark:
        raise ConfigError(
            f"rerun: {last_arg} {prepared.label(last)} is after the watermark {prepared.label(watermark)}; "
            "only processed windows can be re-run (use run for the rest)"
        )
    # With the sliding join window, rows from --start on are the output of [--start, watermark] whatever the
    # schedule: recomputing that applies every correction of the sources. Otherwise (or corrections = "keep")
    # the forward-only MERGE keeps what the target has and never moves a row back.
    recompute = prepared.job.join.enforce_sliding_join_window and prepared.job.target.corrections == "apply"
    todo = Window(first, watermark, prepared.uom) if recompute else window
    mode = RECOMPUTE if recompute else RERUN
    with _locked(prepared, state) as lease:
        report = process_window(begin(prepared, "rerun", lease, on_step), todo, mode, last=True)
        if on_window:
            on_window(report)
    done = f"re-ran {window}" + (f" (recomputed {todo}: rows after it depend on it)" if todo != window else "")
    return _result(prepared, "rerun", lease.run_id, [report], done, watermark)


def backfill(
    job: JobConfig | str | Path,
    start: str | dt.date,
    end: str | dt.date,
    chunk: str = "month",
    spark: SparkSession | None = None,
    settings: Settings | None = None,
    on_progress: ProgressHook | None = None,
    on_step: StepHook | None = None,
) -> PipelineResult:
    """Process a historic range in chunks (day, month, year, all), each a forward window of its own.

    Resumable: chunks up to the watermark are skipped (`on_progress` is told of them with no report), so the
    same command run again after a failure goes on where it stopped.
    """
    prepared, state = open_job(job, spark, settings, "backfill")
    first = parse_point(start, "--start", prepared.uom)
    last = parse_point(end, "--end", prepared.uom)
    chunks = chunk_windows(Window(first, last, prepared.uom), chunk)
    needed = prepared.start if state.watermark is None else state.watermark + 1
    check_start(prepared, first, "backfill")
    if first > needed:
        raise ConfigError(
            f"backfill: --start {prepared.label(first)} would leave {prepared.label(needed)}.."
            f"{prepared.label(first - 1)} unprocessed; start at {prepared.label(needed)}"
        )
    latest = _latest_available(prepared)
    if latest is None or last > latest:
        raise ConfigError(
            f"backfill: --end {prepared.label(last)} is after the latest RecDate present in both sources "
            f"({prepared.label(latest) or 'none'})"
        )
    reports: list[WindowReport] = []
    with _locked(prepared, state) as lease:
        check_unchanged(prepared.job, lease.state.settings, "backfill")  # as of holding the lock
        done = lease.state.watermark
        ongoing = begin(prepared, "backfill", lease, on_step)
        try:
            for number, piece in enumerate(chunks, start=1):
                if done is not None and piece.end <= done:
                    if on_progress:
                        on_progress(number, len(chunks), None, piece)
                    continue
                todo = _rest(piece, done)
                report = process_window(ongoing, todo, forward_mode(prepared.job), last=number == len(chunks))
                done = todo.end
                reports.append(report)
                if on_progress:
                    on_progress(number, len(chunks), report, todo)
        except (KeyboardInterrupt, Cancelled) as exc:  # between two chunks: the next one's row says cancelled
            record_stop(ongoing, next((_rest(p, done) for p in chunks if done is None or p.end > done), None), exc)
            raise
    message = f"backfilled {len(reports)} of {len(chunks)} chunk(s)"
    return _result(prepared, "backfill", lease.run_id, reports, message, done)


def _rest(chunk: Window, done: int | None) -> Window:
    """What of a backfill chunk is still to do after the watermark `done`."""
    return chunk if done is None or chunk.start > done else Window(done + 1, chunk.end, chunk.time_uom)


def status(
    job: JobConfig | str | Path, spark: SparkSession | None = None, settings: Settings | None = None, runs: int = 5
) -> JobStatus:
    """Where the job stands, read with Spark: watermark, latest data in both sources, all that is pending, the
    lock and recent runs. A missing source is reported as the status's `problem`, not raised: the rest shows."""
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
