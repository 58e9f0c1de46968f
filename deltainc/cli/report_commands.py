"""`deltainc report JOB`: the job's history as one HTML page of charts (and images with --png); no JVM."""

from __future__ import annotations

from deltainc.cli.context import Context
from deltainc.cli.exit_codes import EXIT_OK

__all__ = ["report"]


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
