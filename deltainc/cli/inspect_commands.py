"""The commands that only read: status, validate and verify (status and validate of one job or of every job)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deltainc import pipeline
from deltainc.cli.context import Context
from deltainc.cli.output import (
    EXIT_FAILURE,
    EXIT_OK,
    classify,
    emit_json,
    pending_line,
    print_error,
    print_trace,
    runs_table,
    to_json,
)
from deltainc.cli.run_commands import check_range
from deltainc.errors import ConfigError
from deltainc.join.options import COUNTED_ORDER, WAITING_TYPES
from deltainc.pipeline import JobConfig, load_job, run_order
from deltainc.report.sections import trend_lines

if TYPE_CHECKING:
    from deltainc.pipeline import JobStatus

__all__ = ["status", "validate", "verify"]


def _for_each_job(ctx: Context, check: Callable[[JobConfig, Path], dict[str, Any]], in_run_order: bool = False) -> int:
    """Apply `check` to JOB, or to every job of the job directory, carrying on past a job that fails (its
    error names it); one JSON document; the worst exit code. With `in_run_order`, every job after the jobs whose
    targets it reads (`run_order`; a job file that does not load comes last, its error said), else by name."""
    if ctx.args.job is not None:
        job, path = ctx.job(ctx.args.job)
        document = check(job, path)
        if ctx.json:
            emit_json(document)
        return EXIT_OK
    documents: list[dict[str, Any]] = []
    code = EXIT_OK
    for path in _job_files(ctx.all_jobs()) if in_run_order else ctx.all_jobs():
        try:
            job = load_job(path)
            documents.append(check(job, path))
        except Exception as exc:
            job_code, message = classify(exc)
            if ctx.verbose:
                print_trace(exc)
            print_error(f"job {path.stem} ({path}): {message}")
            code = max(code, job_code) if code != EXIT_FAILURE else code
            documents.append({"job": path.stem, "file": str(path), "error": message, "exit_code": job_code})
    if ctx.json:
        emit_json({"jobs": documents})
    return code


def _job_files(paths: list[Path]) -> list[Path]:
    """`paths` in run order: each job after the jobs whose targets it reads; files that do not load (or name a
    job twice) keep their order after them, where `load_job` says what is wrong."""
    loaded: dict[Path, JobConfig] = {}
    for path in paths:
        try:
            loaded[path] = load_job(path)
        except ConfigError:
            continue
    try:
        ordered = run_order(list(loaded.values()))
    except ConfigError:
        return paths
    by_job = {id(job): path for path, job in loaded.items()}
    first = [by_job[id(job)] for job in ordered]
    return first + [path for path in paths if path not in first]


def _read_status(ctx: Context, job: JobConfig) -> JobStatus:
    """The job's status from its Delta logs without a JVM where they can answer, else with Spark."""
    runs = ctx.args.runs
    return pipeline.from_logs_else_spark(
        job.name,
        "status",
        lambda: pipeline.status_from_log(job, ctx.settings, runs),
        lambda: pipeline.status(job, spark=ctx.spark(), settings=ctx.settings, runs=runs),
    )


def _status_or_problem(ctx: Context, job: JobConfig) -> JobStatus:
    """The job's status, or, when reading it fails in any way (a source, Spark, its metastore), what its state
    tables still say and the failure as its problem: `status` of every job shows each job and exits 0."""
    try:
        return _read_status(ctx, job)
    except Exception as exc:
        if ctx.verbose:
            print_trace(exc)
        _, message = classify(exc)
        return pipeline.status_with_problem(job, ctx.settings, ctx.args.runs, message)


def _print_status(ctx: Context, state: JobStatus, job: JobConfig, path: Path) -> None:
    ctx.print(f"{state.job}  ({path})")
    unknown = "unknown (its state could not be read)" if state.unread else "none (never run)"
    ctx.print(f"  watermark        {state.watermark or unknown}")
    ctx.print(f"  latest {job.join.inc_col:<9} {state.latest_available or 'none'} (present in {job.all_sources})")
    for name, text in state.upstream_lines(job.join.time_uom.value):
        ctx.print(f"  upstream         {name}: {text} (the latest {job.join.inc_col} is at most its watermark)")
    if state.problem:
        ctx.print(f"  problem          {state.problem}")
    else:
        ctx.print(f"  pending          {pending_line(state.pending, job)}")
    if state.changed_settings:
        changed = ", ".join(f"{c.setting} {c.before!r} -> {c.now!r}" for c in state.changed_settings)
        ctx.print(f"  settings         changed since the target was built: {changed} (run refuses; see validate)")
    lock = state.lock
    if lock is None:
        ctx.print("  lock             free")
    else:
        verdict = "alive" if lock["alive"] else "dead: the next run takes it over"
        ctx.print(
            f"  lock             held by run {lock['run_id']} ({lock['owner']}) for {lock['age_s']:.0f} s, "
            f"last heartbeat {lock['heartbeat_age_s']:.0f} s ago: {verdict} ({lock['reason']})"
        )
    if state.runs:
        ctx.print("  last runs:")
        ctx.out.print(runs_table(state.runs))
        ctx.out.file.flush()
        lines = trend_lines(state.runs, [code.outcome for code in COUNTED_ORDER if code not in WAITING_TYPES])
        if lines:
            ctx.print(
                f"  trend of the last {len(state.runs)} runs, oldest to newest (deltainc report {job.name}: charts):"
            )
            for name, text in lines:
                ctx.print(f"    {name:<14} {text}")
    else:
        ctx.print("  last runs:       none")


def status(ctx: Context) -> int:
    """`deltainc status [JOB] [--runs N]`. Without JOB, a job whose status fails is shown with its problem, exit 0."""

    def check(job: JobConfig, path: Path) -> dict[str, Any]:
        state = _read_status(ctx, job) if ctx.args.job is not None else _status_or_problem(ctx, job)
        if not ctx.json:
            _print_status(ctx, state, job, path)
        return {"file": str(path), **pipeline.status_document(state)}

    return _for_each_job(ctx, check)


def validate(ctx: Context) -> int:
    """`deltainc validate [JOB]`: renders `validate_job`."""

    def check(job: JobConfig, path: Path) -> dict[str, Any]:
        # From the Delta logs where they answer (no JVM); with Spark for a catalog table or a join_cond.
        checked = pipeline.from_logs_else_spark(
            job.name,
            "validate",
            lambda: pipeline.validate_from_logs(job, ctx.settings),
            lambda: pipeline.validate_job(job, ctx.spark(), ctx.settings),
        )
        state, join, reads = checked.status, job.join, checked.next_read_labels()
        if not ctx.json:
            ctx.print(f"{job.name}: valid  ({path})")
            for label, text in (*checked.joins, *checked.notes):
                ctx.print(f"  {label:<16} {text}")
            target = "exists" if checked.target_exists else "created by the first run"
            ctx.print(f"  target           {job.target.label} ({target})")
            for warning in checked.warnings:
                ctx.print(f"  warning          {warning}")
            ctx.print(
                f"  watermark        {state.watermark or 'none (never run)'}; latest {join.inc_col} in "
                f"{job.all_sources} {state.latest_available or 'none'}"
            )
            ctx.print(f"  pending          {pending_line(state.pending, job)}")
            if reads is not None:
                ranges = ", ".join(f"{role} {join.inc_col} {first}..{last}" for role, (first, last) in reads.items())
                ctx.print(f"  next run reads   {ranges}")
        return {
            "job": job.name,
            "file": str(path),
            "valid": True,
            "watermark": state.watermark,
            "latest_available": state.latest_available,
            "pending": pipeline.status_document(state)["pending"],
            "next_window_reads": reads,
            "target_exists": checked.target_exists,
            "warnings": list(checked.warnings),
            "notes": [text for _, text in checked.notes],
        }

    return _for_each_job(ctx, check, in_run_order=True)


def verify(ctx: Context) -> int:
    """`deltainc verify JOB [--start DATE] [--end DATE]`: exit 1 when the target drifted from a reload."""
    if ctx.args.start is not None:
        check_range(ctx.args.start, ctx.args.end)
    job, _ = ctx.job(ctx.args.job)
    result = pipeline.verify(job, ctx.args.start, ctx.args.end, spark=ctx.spark(), settings=ctx.settings)
    code = EXIT_OK if result.equal else EXIT_FAILURE
    if ctx.json:
        emit_json({**dataclasses.asdict(result), "window": str(result.window), "equal": result.equal})
        return code
    verdict = "equal" if result.equal else "DRIFT"
    ctx.print(
        f"verify {result.job} {result.window} (watermark {result.watermark}): target {result.target_rows} rows, "
        f"recompute {result.recomputed_rows} rows: {verdict}"
    )
    read = (result.files_read_a, result.files_read_b, result.files_read_target)
    ctx.print("  read {} file(s) of A, {} of B, {} of the target".format(*read))
    for label, counts, sample in (
        ("only in the target", result.only_in_target, result.sample_only_in_target),
        ("only in the recompute", result.only_in_recompute, result.sample_only_in_recompute),
    ):
        if counts:
            ctx.print(f"  {label}: " + "  ".join(f"{name} {rows}" for name, rows in counts.items()))
            for row in sample:
                ctx.print("    " + to_json(row))
    if not result.equal:
        ctx.print(
            f"  the target drifted from a reload from {result.earliest_drift} on; "
            f"`deltainc rerun {result.job} --start {result.earliest_drift}` rewrites it"
        )
    return code
