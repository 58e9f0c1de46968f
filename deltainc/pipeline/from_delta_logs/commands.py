"""Commands answered from the Delta logs alone, without a JVM: a run with nothing pending, `unlock`, and the lock
a command takes before it starts Spark (`hold_lock`); `write_command`, the one door of run, rerun and backfill.

Starting Spark takes seconds (half a minute on a busy machine); a scheduled run that finds nothing new, or a
hand `unlock`, needs only the state tables and the sources' latest RecDate, which the Delta logs give in
milliseconds. Where the logs cannot answer exactly, or show work to do, the caller's Spark runs the command.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from deltainc.join.windows import from_index, next_window, parse_point, to_index
from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.snapshot import one_look
from deltainc.pipeline.from_delta_logs.answer import SparkNeeded, from_logs_else_spark
from deltainc.pipeline.from_delta_logs.checks import check_from_logs
from deltainc.pipeline.from_delta_logs.status import latest_in_both
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.job_file import load_job, resolve_job
from deltainc.pipeline.job.kinds import JoinPlan
from deltainc.pipeline.results import PipelineResult
from deltainc.pipeline.state import (
    Lease,
    check_unchanged,
    locked,
    read_state,
    read_state_from_log,
    remove_lock,
    state_paths,
)
from deltainc.settings import Settings, load_settings

__all__ = ["nothing_pending", "idle_run", "unlock", "hold_lock", "write_command"]


def _load(job: JobConfig | str | Path, settings: Settings | None) -> tuple[JobConfig, Settings]:
    settings = settings or load_settings()
    if not isinstance(job, JobConfig):
        job = load_job(resolve_job(str(job), settings.job_dir))
    return job, settings


def nothing_pending(job: JobConfig, watermark: int | None, latest: int | None, until: int | None) -> str:
    """Why a run has nothing to do, naming the fact that stops it (start_date, until, or no new data)."""
    uom, inc = job.join.time_uom, job.join.inc_col
    start = to_index(job.start_date, uom)

    def label(unit: int | None) -> str:
        return "none" if unit is None else from_index(unit, uom).isoformat()

    facts = f"watermark {label(watermark)}, latest {inc} in {job.all_sources} {label(latest)}"
    if latest is None:
        return f"nothing pending for {job.name}: a source has no rows with a {inc} yet ({facts})"
    if watermark is None and start > latest:
        return (
            f"nothing pending for {job.name}: start_date {job.start_date} is after the latest {inc} "
            f"in {job.all_sources} {label(latest)}"
        )
    if until is not None and (start - 1 if watermark is None else watermark) >= until:
        return f"nothing pending for {job.name} until {label(until)}: {facts}"
    return f"nothing pending for {job.name}: {facts}"


def idle_run(
    job: JobConfig | str | Path, settings: Settings | None = None, until: str | dt.date | None = None
) -> PipelineResult:
    """`run`'s result when the logs show nothing pending (its settings checked as a run checks them). SparkNeeded
    naming the next window when there is work to do; LogUnreadable when the logs cannot tell (a catalog table, a
    missing source: Spark says why)."""
    job, settings = _load(job, settings)
    uom = job.join.time_uom
    until_unit = None if until is None else parse_point(until, "--until", uom)
    root = job.state_path(settings.state_dir)
    try:
        state = read_state_from_log(state_paths(root), job.name)
        latest = latest_in_both(job)
    except FileNotFoundError as exc:
        raise LogUnreadable(str(exc)) from exc
    start = to_index(job.start_date, uom)
    pending = next_window(state.watermark, start, latest, until_unit, job.max_window, uom)
    if pending is not None:
        raise SparkNeeded(f"{pending} pending")
    check_unchanged(job, state.settings, "run")
    message = nothing_pending(job, state.watermark, latest, until_unit)
    label = None if state.watermark is None else from_index(state.watermark, uom).isoformat()
    return PipelineResult(job.name, "run", None, (), label, message)


def unlock(
    job: JobConfig | str | Path, run_id: str | None = None, settings: Settings | None = None
) -> list[dict[str, object]]:
    """Remove the job's lock by hand (only run `run_id`'s when given); the lock rows removed. Rarely needed: the
    next run takes over a dead run's lock by itself."""
    job, settings = _load(job, settings)
    paths = state_paths(job.state_path(settings.state_dir))
    read_state(paths, job.name)  # a state folder that cannot be read says so here, naming state_dir
    return remove_lock(paths.locks, job.name, run_id)


@contextmanager
def hold_lock(
    job: JobConfig | str | Path, settings: Settings | None = None, command: str = "run", check_settings: bool = True
) -> Iterator[Lease]:
    """Take the job's lock now, without a JVM, and hold it (renewed) for the block: what `run`, `rerun` and
    `backfill` do before they start Spark, so that a second run exits 3 at once instead of starting a JVM first,
    and `status` shows the run from its first second. Changed settings are refused before (nothing written).

    Example: ``with hold_lock("trx") as lease: run("trx", spark=start(), lease=lease)``.
    """
    job, settings = _load(job, settings)
    paths = state_paths(job.state_path(settings.state_dir))
    state = read_state(paths, job.name)
    if check_settings:
        check_unchanged(job, state.settings, command)
    with locked(paths, job.name, settings.lock_expiry_seconds, state) as lease:
        yield lease


@one_look()
def write_command(
    job: JobConfig | str | Path,
    settings: Settings | None,
    command: str,
    with_spark: Callable[[Lease, JoinPlan | None], PipelineResult],
    until: str | dt.date | None = None,
    rebuild: bool = False,
) -> PipelineResult:
    """The one door of `run`, `rerun` and `backfill` before Spark starts: the job checked against its sources' Delta
    logs (what does not fit is refused here, nothing written), a `run` with nothing pending answered from them, and
    otherwise the job's lock taken (`hold_lock`) and `with_spark(lease, plan)` called under it to start Spark and do
    the work, `plan` being the job's join checked from the logs (None where they could not tell: Spark checks it);
    why Spark starts is logged once (`from_logs_else_spark`).

    Args:
        job: a job, a job name or a job file's path.
        settings: the global settings; None = read them.
        command: `run`, `rerun` or `backfill`: what the lock and a refusal of changed settings name.
        with_spark: the command with Spark, given the lease held for it and the job's join checked from the logs
            (the caller's: the command line starts its Spark with its log redirected, the Python API with
            `get_spark()`).
        until: `run --until`: what counts as pending.
        rebuild: `run --rebuild`: always Spark, and the settings may have changed.

    Example:
        ```python
        write_command("trx", None, "run", lambda lease, plan: run("trx", spark=get_spark(), lease=lease, checked=plan))
        ```
    """
    config, global_settings = _load(job, settings)

    checked: list[JoinPlan] = []  # the job's join as the logs checked it, for Spark to take on

    def from_logs() -> PipelineResult:
        checked.append(check_from_logs(config))  # a source or column that does not fit: refused before Spark starts
        if command != "run" or rebuild:
            raise SparkNeeded("a rebuild recomputes the target" if rebuild else f"{command} recomputes windows")
        return idle_run(config, global_settings, until)

    def locked_with_spark() -> PipelineResult:
        with hold_lock(config, global_settings, command, check_settings=not rebuild) as lease:  # before Spark starts
            return with_spark(lease, checked[0] if checked else None)

    return from_logs_else_spark(config.name, command, from_logs, locked_with_spark)
