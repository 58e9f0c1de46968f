"""The commands that write: run, rerun and backfill, each window's line printed as soon as it committed.

Each hands the pipeline a way to start Spark, not a session: the job is checked against its sources' Delta logs, a
run with nothing pending answered from them, and otherwise the job's lock taken before Spark starts (delta-rs, no
JVM) and held, renewed, while the JVM starts: a second run of the job exits 3 at once, and `status` shows this one
from its first second.
"""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from deltainc.cli.context import Context
from deltainc.cli.failure_notes import window_note
from deltainc.cli.output import EXIT_OK, emit_json, result_document, window_line
from deltainc.errors import Cancelled, ConfigError, JobLockedError
from deltainc.join.windows import Window
from deltainc.pipeline import downstream_reruns, run_order
from deltainc.time_units import parse_point

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from deltainc.pipeline import JobConfig, PipelineResult, WindowReport

__all__ = ["run", "run_every", "rerun", "backfill", "check_range"]

log = logging.getLogger("deltainc")


def check_range(start: str, end: str | None) -> None:
    """ConfigError when --end is before --start."""
    if end is not None and parse_point(end, "--end", "hour") < parse_point(start, "--start", "hour"):
        raise ConfigError(f"--start {start} is after --end {end}: invalid window")


def _print_result(ctx: Context, result: PipelineResult) -> None:
    """The command's outcome; its windows were printed one by one as they committed (`_on_window`)."""
    if ctx.json:
        emit_json(result_document(result))
    elif result.nothing_pending:
        ctx.print(result.message)
    else:
        ctx.print(f"{result.job}: {result.message}; watermark {result.watermark or 'none'}")


def _on_window(ctx: Context) -> Callable[[WindowReport], None]:
    """Print each window's line the moment it committed (flushed), unless the output is one JSON document."""
    return lambda report: None if ctx.json else ctx.print(window_line(report))


def _jobs(ctx: Context) -> list[JobConfig]:
    """The job named, or every job of the job directory, each after the jobs whose targets it reads; every job
    file is loaded first, so a bad one refuses the run before any job runs."""
    if ctx.args.job is None:
        return run_order([ctx.job(str(path))[0] for path in ctx.all_jobs()])
    return [ctx.job(ctx.args.job)[0]]


def _run_job(ctx: Context, job: JobConfig) -> PipelineResult:
    """`pipeline.run` of one job, each window's line printed as it commits; a failure's note (how to go on) kept."""
    from deltainc import pipeline

    try:
        return pipeline.run(
            job, ctx.args.until, ctx.spark, ctx.settings, on_window=_on_window(ctx), rebuild=ctx.args.rebuild
        )
    except Exception as exc:
        note = window_note(exc, chunks=False)
        ctx.hint = f"{job.name}: {note}" if note and ctx.args.job is None else note or ctx.hint
        raise


def run(ctx: Context) -> int:
    """`deltainc run [JOB] [--until DATE] [--rebuild] [--every INTERVAL]`: without JOB, every job of the job
    directory, each after the jobs whose targets it reads; a job that fails stops the run before the jobs after
    it. With --every, `run_every`."""
    if ctx.args.job is None and ctx.args.rebuild:
        raise ConfigError("run --rebuild: give the JOB to rebuild")
    if ctx.args.every is not None:
        return run_every(ctx)
    documents = []
    for job in _jobs(ctx):
        result = _run_job(ctx, job)
        if ctx.json and ctx.args.job is None:  # one JSON document for them all, as `status` gives
            documents.append(result_document(result))
        else:
            _print_result(ctx, result)
    if ctx.json and ctx.args.job is None:
        emit_json({"jobs": documents})
    return EXIT_OK


def run_every(ctx: Context) -> int:
    """`deltainc run [JOB] --every INTERVAL`: the job's (or every job's) pending windows at once, then a look at
    the sources' Delta logs every INTERVAL, each new complete unit processed as soon as a look finds it, all in
    this one process and its one Spark session (started when a window first needs one, then kept warm). A look
    with nothing pending starts no JVM and prints nothing.

    SIGTERM or Ctrl-C while no run holds the job's lock (between two looks, or in a look with nothing pending)
    ends it with exit 0; once a run holds it, that run stops as a run does.
    A job whose lock another command holds (a rerun) is skipped until a later look. Any other error ends the
    command as that run's error would (its window's run-log row has released the lock): a supervisor that
    starts it again (systemd's Restart=on-failure) makes its first look recover, as the next run does after a
    failure. E.g. `deltainc run parcel_scans --every 1m`."""
    if ctx.json or ctx.args.until is not None or ctx.args.rebuild:
        given = "--json" if ctx.json else "--until" if ctx.args.until is not None else "--rebuild"
        raise ConfigError(f"run --every keeps running until it is stopped: it takes no {given}")
    every = ctx.args.every
    ctx.print(f"{ctx.args.job or 'every job'}: a look every {every:g} s; SIGTERM or Ctrl-C stops between two looks")
    while True:
        began = time.monotonic()
        try:
            _look(ctx)
            time.sleep(max(0.0, every - (time.monotonic() - began)))
        except (Cancelled, KeyboardInterrupt) as exc:
            if getattr(exc, "summary", None) is not None:  # a run held the lock: it stopped as a run stops
                raise
            how = "SIGTERM" if isinstance(exc, Cancelled) and exc.signal_number == signal.SIGTERM else "Ctrl-C"
            ctx.print(f"stopped ({how}) between two looks: every window so far is committed")
            return EXIT_OK


def _look(ctx: Context) -> None:
    """One look of `run_every`: each job's pending windows, its line printed when it processed any; a job whose
    lock another command holds is skipped. The job files are read again: an edited one is this look's."""
    for job in _jobs(ctx):
        try:
            result = _run_job(ctx, job)
        except JobLockedError as exc:
            log.warning("%s: skipped until a later look: %s", job.name, exc)
            continue
        if not result.nothing_pending:
            _print_result(ctx, result)


def rerun(ctx: Context) -> int:
    """`deltainc rerun JOB --start DATE [--end DATE] [--downstream]`: the jobs of the job directory that read the
    job's target and processed --start already are named after it (the rows they read from --start on may have
    changed), or with --downstream re-run, each from --start to its own watermark, in dependency order."""
    from deltainc import pipeline

    check_range(ctx.args.start, ctx.args.end)
    job, _ = ctx.job(ctx.args.job)
    if ctx.args.downstream:  # before anything is written: a job file that cannot be read refuses the rerun here
        found = downstream_reruns(job.name, ctx.args.start, ctx.settings.job_dir, ctx.settings.state_dir, strict=True)
        ctx.s3 = ctx.s3 or any(below.job.on_s3 for below in found)  # the session reaches their tables too
    result = pipeline.rerun(job, ctx.args.start, ctx.args.end, ctx.spark, ctx.settings, on_window=_on_window(ctx))
    documents = []
    for below in result.downstream if ctx.args.downstream else ():
        ctx.log_name = below.job.name
        done = pipeline.rerun(below.job, below.start, below.end, ctx.spark, ctx.settings, on_window=_on_window(ctx))
        documents.append(result_document(done))
        if not ctx.json:
            _print_result(ctx, done)
    if ctx.json:
        emit_json({**result_document(result), "downstream_reruns": documents})
        return EXIT_OK
    _print_result(ctx, result)
    for below in () if ctx.args.downstream else result.downstream:
        ctx.print(
            f"downstream: {below.job.name} read {job.name}'s rows from {below.start} on: re-run it with `deltainc "
            f"rerun {below.job.name} --start {below.start} --end {below.end}`, or this rerun with --downstream"
        )
    return EXIT_OK


def backfill(ctx: Context) -> int:
    """`deltainc backfill JOB --start DATE --end DATE [--chunk day|month|year|all]`, with a progress bar; after
    a failure the error says how far it came and that the same command resumes."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from deltainc import pipeline

    check_range(ctx.args.start, ctx.args.end)
    job, _ = ctx.job(ctx.args.job)

    done = {"chunks": 0, "total": 0}
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=ctx.out,
        disable=ctx.json,
    )
    task = progress.add_task(f"backfill {job.name}", total=None)

    def on_progress(number: int, total: int, report: WindowReport | None, window: Window) -> None:
        done.update(chunks=number, total=total)
        progress.update(task, completed=number, total=total)
        if not ctx.json:
            line = window_line(report) if report is not None else f"{window}  already processed, skipped"
            progress.console.print(f"[{number}/{total}] {line}", markup=False, highlight=False)

    def spark() -> SparkSession:  # under the lock, once the logs could not answer: the bar shows from here
        session = ctx.spark()
        ctx.hint = "run the same command again to resume: processed chunks are skipped"
        progress.start()
        return session

    try:
        result = pipeline.backfill(
            job, ctx.args.start, ctx.args.end, ctx.args.chunk, spark, ctx.settings, on_progress=on_progress
        )
    except Exception as exc:
        ctx.hint = window_note(exc, chunks=True) or ctx.hint
        if ctx.hint is None and done["total"]:
            ctx.hint = (
                f"stopped after chunk {done['chunks']} of {done['total']}; run the same command again "
                "to resume: processed chunks are skipped"
            )
        raise
    finally:
        progress.stop()
    if ctx.json:
        emit_json(result_document(result))
    else:
        ctx.print(f"{result.job}: {result.message}; watermark {result.watermark or 'none'}")
    return EXIT_OK
