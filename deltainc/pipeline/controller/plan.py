"""The controller's plan, without Spark (docs/design.md#run-modes): which windows a command processes, in what
order, under which write mode (its name: `target/modes.py` maps it to its writer); the refusals that need no data
(a re-run past the watermark, a backfill that would leave a gap, a rebuild that would lose rows); and what the command
returns, its windows each with the run-log row it committed (`PipelineResult`, `WindowReport`).

The controller plans once per command (`fact_counts.WINDOWS_PLANNED`), from the watermark as of holding the lock
(before taking it, to refuse early or find nothing pending, when no other run took the lock since), and again under
the lock only when it changed hands since; then it executes the plan window by window.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deltainc.errors import ConfigError
from deltainc.fact_counts import WINDOWS_PLANNED, asked
from deltainc.join.options import counted_types
from deltainc.join.windows import Window, chunk_windows, next_window
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.mode_names import ModeName
from deltainc.pipeline.state import RunRecord
from deltainc.pipeline.state.downstream import DownstreamRerun
from deltainc.time_units import to_index, unit_label

__all__ = [
    "Planned",
    "forward_mode",
    "check_start",
    "run_plan",
    "rebuild_plan",
    "rerun_plan",
    "check_backfill_start",
    "backfill_plan",
    "to_do",
    "WindowReport",
    "PipelineResult",
]


@dataclass(frozen=True)
class Planned:
    """One window of a command's plan, and the name of the mode it is written in (`target/modes.py` gives its
    writer). A backfill's chunk already processed is planned `done` (reported, not run); `number` is its chunk's
    place, from 1."""

    window: Window
    mode: ModeName
    number: int = 1
    done: bool = False


def to_do(plan: tuple[Planned, ...]) -> tuple[Planned, ...]:
    """The windows of a plan that are processed (a backfill's processed chunks left out), in order."""
    return tuple(planned for planned in plan if not planned.done)


def forward_mode(job: JobConfig) -> ModeName:
    """How a window right after the watermark is written: it replaces the two slices, which needs the sliding
    join window to be exact; without it, the forward-only MERGE."""
    return ModeName.FORWARD if job.join.enforce_sliding_join_window else ModeName.FORWARD_ONLY


def _start(job: JobConfig) -> int:
    return to_index(job.start_date, job.join.time_uom)


def _label(job: JobConfig, unit: int | None) -> str:
    return unit_label(unit, job.join.time_uom) or "none"


def check_start(job: JobConfig, first: int, command: str) -> None:
    """Refuse a --start before the job's start_date: the target holds nothing before it."""
    if first < _start(job):
        raise ConfigError(f"{command}: --start {_label(job, first)} is before the job's start_date {job.start_date}")


def run_plan(job: JobConfig, watermark: int | None, latest: int | None, until: int | None) -> tuple[Planned, ...]:
    """`run`: every pending window after the watermark, up to the latest unit in both sources (and `until`), each
    at most `max_window` units; empty when nothing is pending."""
    asked(WINDOWS_PLANNED)
    mode, plan = forward_mode(job), list[Planned]()
    window = next_window(watermark, _start(job), latest, until, job.max_window, job.join.time_uom)
    while window is not None:
        plan.append(Planned(window, mode, len(plan) + 1))
        window = next_window(window.end, _start(job), latest, until, job.max_window, job.join.time_uom)
    return tuple(plan)


def rebuild_plan(job: JobConfig, watermark: int | None, latest: int | None) -> tuple[Planned, ...]:
    """`run --rebuild`: one window from start_date to the latest unit in both sources, over the whole target."""
    asked(WINDOWS_PLANNED)
    if latest is None or latest < _start(job):
        raise ConfigError(
            f"--rebuild: nothing to rebuild from, the latest {job.join.inc_col} in {job.all_sources} "
            f"({_label(job, latest)}) is before start_date {job.start_date}"
        )
    if watermark is not None and latest < watermark:
        raise ConfigError(
            f"--rebuild: the sources now end at {_label(job, latest)}, before the watermark "
            f"{_label(job, watermark)}: rows after it would be lost; backfill into a new target instead"
        )
    return (Planned(Window(_start(job), latest, job.join.time_uom), ModeName.REBUILD),)


def rerun_plan(job: JobConfig, first: int, last: int, watermark: int | None, last_arg: str) -> tuple[Planned, ...]:
    """`rerun` of the processed units [first, last]: with the sliding join window and `corrections = "apply"`,
    recomputed on to the watermark (rows from `first` on are that window's output whatever the schedule, so
    every correction of the sources is applied); otherwise the forward-only MERGE of [first, last], which never
    moves a row back. The watermark stays. `last_arg` names the argument that gave `last`."""
    asked(WINDOWS_PLANNED)
    if watermark is None:
        raise ConfigError(f"rerun: job {job.name!r} has not run yet; use run")
    check_start(job, first, "rerun")
    if last > watermark:
        raise ConfigError(
            f"rerun: {last_arg} {_label(job, last)} is after the watermark {_label(job, watermark)}; "
            "only processed windows can be re-run (use run for the rest)"
        )
    uom = job.join.time_uom
    if job.join.enforce_sliding_join_window and job.target.corrections == "apply":
        return (Planned(Window(first, watermark, uom), ModeName.RECOMPUTE),)
    return (Planned(Window(first, last, uom), ModeName.RERUN),)


def check_backfill_start(job: JobConfig, first: int, watermark: int | None) -> None:
    """Refuse a backfill --start before start_date, or after the unit the job needs next (a gap)."""
    needed = _start(job) if watermark is None else watermark + 1
    check_start(job, first, "backfill")
    if first > needed:
        raise ConfigError(
            f"backfill: --start {_label(job, first)} would leave {_label(job, needed)}.."
            f"{_label(job, first - 1)} unprocessed; start at {_label(job, needed)}"
        )


def backfill_plan(
    job: JobConfig, first: int, last: int, chunk: str, watermark: int | None, latest: int | None
) -> tuple[Planned, ...]:
    """`backfill` of [first, last] in chunks (day, month, year, all), each a forward window of its own. Chunks
    up to the watermark are planned done, and a chunk the watermark cuts goes on after it, so the same command
    run again after a failure resumes where it stopped."""
    asked(WINDOWS_PLANNED)
    chunks = chunk_windows(Window(first, last, job.join.time_uom), chunk)
    check_backfill_start(job, first, watermark)
    if latest is None or last > latest:
        raise ConfigError(
            f"backfill: --end {_label(job, last)} is after the latest {job.join.inc_col} present in "
            f"{job.all_sources} "
            f"({_label(job, latest) if latest is not None else 'none'})"
        )
    mode, plan = forward_mode(job), list[Planned]()
    for number, piece in enumerate(chunks, start=1):
        if watermark is not None and piece.end <= watermark:
            plan.append(Planned(piece, mode, number, done=True))
        elif watermark is not None and piece.start <= watermark:
            plan.append(Planned(Window(watermark + 1, piece.end, piece.time_uom), mode, number))
        else:
            plan.append(Planned(piece, mode, number))
    return tuple(plan)


@dataclass(frozen=True)
class WindowReport:
    """One processed window and the run-log row that committed it (rows, files read, the target's commit)."""

    window: Window
    record: RunRecord
    how: str  # the job's join kind: which JoinTypes its windows count

    @property
    def counts(self) -> dict[str, int]:
        """Output rows by JoinType name, of the types a job of this kind outputs, in counting order."""
        return {code.outcome: self.record.rows(code.outcome) for code in counted_types(self.how)}

    def document(self) -> dict[str, object]:
        """The window as JSON: its label, then its run-log row (`RunRecord.document`)."""
        return {"window": str(self.window), **self.record.document()}


@dataclass(frozen=True)
class PipelineResult:
    """The outcome of one command: the windows processed and where the watermark stands."""

    job: str
    command: str
    run_id: str | None
    windows: tuple[WindowReport, ...]
    watermark: str | None
    message: str
    downstream: tuple[DownstreamRerun, ...] = ()  # a rerun: the jobs that read its target and what each must re-run

    @property
    def nothing_pending(self) -> bool:
        return not self.windows

    def document(self) -> dict[str, Any]:
        """The result as one JSON-ready document (`--json`): its windows as their run-log rows."""
        return {
            "job": self.job,
            "command": self.command,
            "run_id": self.run_id,
            "windows": [report.document() for report in self.windows],
            "watermark": self.watermark,
            "message": self.message,
            "nothing_pending": self.nothing_pending,
            "downstream": [rerun.document() for rerun in self.downstream],
        }
