"""The commands around a run: migrate a target, unlock a dead run's lock, profile how late B arrives, a job's
history as a report, the demo, and the Spark Connect server."""

from __future__ import annotations

import dataclasses
import datetime as dt

from deltainc.cli.context import Context
from deltainc.cli.output import EXIT_FAILURE, EXIT_OK, emit_json, print_error
from deltainc.errors import ConfigError

__all__ = ["unlock", "migrate", "profile", "report", "demo", "serve"]


def migrate(ctx: Context) -> int:
    """`deltainc migrate JOB [--dry-run]`."""
    from deltainc import pipeline

    job, _ = ctx.job(ctx.args.job)
    dry_run = bool(ctx.args.dry_run)
    ctx.print(pipeline.migrate(job, spark=ctx.spark(), settings=ctx.settings, dry_run=dry_run).message)
    return EXIT_OK


def unlock(ctx: Context) -> int:
    """`deltainc unlock JOB [--run-id ID]`."""
    from deltainc import pipeline

    job, _ = ctx.job(ctx.args.job)
    removed = pipeline.unlock(job, ctx.args.run_id, settings=ctx.settings)
    if not removed:
        ctx.print(f"{job.name}: no lock held, nothing to remove")
    now = dt.datetime.now()  # the state gives acquired_at in local time, as pyspark does
    for row in removed:
        taken = row["acquired_at"]
        age = f", {int((now - taken).total_seconds() // 60)} minute(s) ago" if isinstance(taken, dt.datetime) else ""
        ctx.print(f"{job.name}: removed the lock of run {row['run_id']} ({row['owner']}), taken at {taken}{age}")
    if removed:
        ctx.print(
            "  (rarely needed: the next run takes over a dead run's lock by itself once its processes are gone on "
            "this host, or once its heartbeat is older than "
            f"lock_expiry_seconds = {ctx.settings.lock_expiry_seconds} on another host)"
        )
    return EXIT_OK


def profile(ctx: Context) -> int:
    """`deltainc profile JOB [--start DATE] [--end DATE] [--chart PATH]`."""
    from deltainc import pipeline

    start, end = ctx.args.start, ctx.args.end
    if start is not None and end is not None and start > end:
        raise ConfigError(f"--start {start} is after --end {end}: invalid window")
    job, _ = ctx.job(ctx.args.job)
    result = pipeline.profile_job(ctx.spark(), job, start, end)
    chart = None if ctx.args.chart is None else pipeline.plot_profile(result, ctx.args.chart, job)
    if ctx.json:
        document = dataclasses.asdict(result)
        if chart is not None:
            document["chart"] = str(chart)
        emit_json(document)
    else:
        ctx.print(pipeline.format_profile(result, job))
        if chart is not None:
            ctx.print(f"chart written to {chart}")
    return EXIT_OK


def report(ctx: Context) -> int:
    """`deltainc report JOB [--out FILE] [--since DATE] [--last N] [--png DIR]`: prints where the page went."""
    from deltainc.report import NoRuns, write_report

    job, _ = ctx.job(ctx.args.job)
    args = ctx.args
    try:
        written = write_report(job, ctx.settings, args.out, args.since, args.last, args.png)
    except NoRuns as exc:
        ctx.print(str(exc))
        return EXIT_OK
    ctx.print(f"{job.name}: report of {written.runs} run(s), {written.windows} window(s): {written.page.resolve()}")
    for image in written.images:
        ctx.print(f"  {image}")
    return EXIT_OK


def demo(ctx: Context) -> int:
    """`deltainc demo [--root DIR] [--days N] [--daily N] [--rows-per-day N]`: exit 1 when its promises did not
    hold."""
    from deltainc.demo.demo import run_demo

    result = run_demo(
        ctx.args.root,
        ctx.spark(),
        days=ctx.args.days,
        rows_per_day=ctx.args.rows_per_day,
        echo=ctx.print,
        daily=ctx.args.daily,
    )
    if not result.ok:
        print_error("demo: the daily schedules, the re-run and the one-shot reloads did not agree (see above)")
        return EXIT_FAILURE
    return EXIT_OK


def serve(ctx: Context) -> int:
    """`deltainc serve [--port N] [--host ADDRESS]`: a Spark Connect server with Delta, until stopped (SIGTERM or
    Ctrl-C); on 127.0.0.1 unless --host says otherwise."""
    from deltainc.connect_server import serve as run_server

    run_server(ctx.settings, ctx.args.port, ctx.print, ctx.args.host, ctx.extra_conf)
    return EXIT_OK
