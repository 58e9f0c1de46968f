"""`deltainc check [JOB]`: each job's `[checks]` judged from its run log and state, read from the Delta logs
without a JVM, with an exit code a scheduler or a monitoring probe acts on: 0 when nothing breaches an error level
(4 when something does; 5 for a warning with --fail-on-warn)."""

from __future__ import annotations

from pathlib import Path

from deltainc.cli.context import Context
from deltainc.cli.output import EXIT_INVALID, EXIT_OK, classify, emit_json, print_error
from deltainc.pipeline import JobConfig, JobHealth, Level, health_from_log, load_job

__all__ = ["check", "EXIT_CHECK_ERROR", "EXIT_CHECK_WARN"]

EXIT_CHECK_ERROR = 4  # a check breached its error level
EXIT_CHECK_WARN = 5  # with --fail-on-warn: a check breached its warn level, none its error level


def _print(ctx: Context, health: JobHealth, path: Path) -> None:
    ctx.print(f"{health.job}: {health.level}  ({path})")
    for item in health.checks:
        ctx.print(f"  {item.level.value:<6} {item.name:<16} {item.message}")
    if not health.checks:
        ctx.print("  nothing to check: the job file has no [checks] and last_run is off")


def _code(worst: Level, fail_on_warn: bool) -> int:
    if worst is Level.ERROR:
        return EXIT_CHECK_ERROR
    return EXIT_CHECK_WARN if worst is Level.WARN and fail_on_warn else EXIT_OK


def check(ctx: Context) -> int:
    """`deltainc check [JOB] [--fail-on-warn] [--json]`: without JOB, every job of the job directory; a job file
    that cannot be read is named with its error (exit 2 unless a check breached an error level)."""
    if ctx.args.job is not None:
        found: list[tuple[JobConfig | None, Path, str | None]] = [(*ctx.job(ctx.args.job), None)]
    else:
        found = []
        for path in ctx.all_jobs():
            try:
                found.append((load_job(path), path, None))
            except Exception as exc:
                found.append((None, path, classify(exc)[1]))
    documents, worst, invalid = [], Level.PASS, False
    for job, path, error in found:
        if job is None:
            print_error(f"job {path.stem} ({path}): {error}")
            documents.append({"job": path.stem, "file": str(path), "error": error})
            invalid = True
            continue
        health = health_from_log(job, ctx.settings)
        worst = max(worst, health.level, key=lambda level: level.rank)
        documents.append({"file": str(path), **health.document()})
        if not ctx.json:
            _print(ctx, health, path)
    if ctx.json:
        emit_json(documents[0] if ctx.args.job is not None else {"level": worst.value, "jobs": documents})
    code = _code(worst, ctx.args.fail_on_warn)
    return code if code == EXIT_CHECK_ERROR or not invalid else EXIT_INVALID
