"""A job's health against its `[checks]` thresholds, judged from its status (`JobStatus`: the watermark, the
sources' latest RecDate, the latest run-log rows); no Spark, no read here. `deltainc check` prints it and turns its
worst level into an exit code a scheduler can act on.

A catch-up window (12 hours in one window of an hour job, after an outage) holds the rows and takes the time of
many usual windows; the checks judge it as a usual window, so the thresholds set for one do not fire on the
first scheduled runs after it (docs/production/checks.md#a-catch-up-window):
- `too_late` is per unit of output: a window's too-late rows divided by its units (a too-late B row belongs to
  the unit of its RecDate, so the count per unit does not depend on how the windows were cut);
- `timed_out_share` is a share of the windows' final A rows, which a window's width does not change;
- `duration_s` counts a catch-up window of the last run at its seconds per usual window (a run's seconds are not
  split per unit: Spark's start and the bookkeeping are paid once a run).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from deltainc.pipeline.job.checks_section import FailedRun, Threshold
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.state.catch_up import is_catch_up, usual_units, window_units
from deltainc.pipeline.state.job_status import JobStatus
from deltainc.text_enum import TextEnum

__all__ = ["Level", "Check", "JobHealth", "judge_health", "runs_to_read"]

Row = dict[str, Any]
FINAL_A = ("rows_same_time", "rows_a_late", "rows_b_late", "rows_a_timed_out")  # an A row's final outcomes


class Level(TextEnum):
    """How a check came out, from best to worst."""

    PASS = "pass"
    WARN = "warn"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return list(Level).index(self)


@dataclass(frozen=True)
class Check:
    """One check: its level, the value it judged (None when it could not be known) and the thresholds."""

    name: str
    level: Level
    value: float | str | None
    warn: float | str | None
    error: float | str | None
    message: str

    def document(self) -> dict[str, Any]:
        """As `--json` gives it."""
        return {"name": self.name, "level": self.level.value, "value": self.value, "warn": self.warn,
                "error": self.error, "message": self.message}  # fmt: skip


@dataclass(frozen=True)
class JobHealth:
    """A job's checks, and the worst of their levels."""

    job: str
    checks: tuple[Check, ...]

    @property
    def level(self) -> Level:
        return max((c.level for c in self.checks), key=lambda level: level.rank, default=Level.PASS)

    def document(self) -> dict[str, Any]:
        return {"job": self.job, "level": self.level.value, "checks": [c.document() for c in self.checks]}


def runs_to_read(job: JobConfig) -> int:
    """How many of the latest run-log rows the checks need: the windows they look at, with room for reruns and
    failed runs between them."""
    return max(50, 4 * job.checks.windows)


def _level(value: float, limit: Threshold) -> Level:
    if limit.error is not None and value > limit.error:
        return Level.ERROR
    return Level.WARN if limit.warn is not None and value > limit.warn else Level.PASS


def _threshold(name: str, value: float | None, limit: Threshold, said: Callable[[float], str], unknown: str,
               unit: str = "") -> Check:  # fmt: skip
    """A numeric check; a value that cannot be known breaches the worst level set. `unit`: of the thresholds."""
    if value is None:
        level = Level.ERROR if limit.error is not None else Level.WARN
        return Check(name, level, None, limit.warn, limit.error, unknown)
    message = f"{said(value)} ({_limits(limit, unit)})"
    return Check(name, _level(value, limit), round(value, 4), limit.warn, limit.error, message)


def _limits(limit: Threshold, unit: str = "") -> str:
    """The thresholds as a message says them: "warn above 2; error above 5"."""
    levels = (("warn", limit.warn), ("error", limit.error))
    return "; ".join(f"{name} above {value:g}{unit}" for name, value in levels if value is not None)


def _windows(runs: Sequence[Row], count: int) -> list[Row]:
    """The latest `count` windows that moved the watermark (succeeded forward windows), newest first."""
    return [r for r in runs if r.get("status") == "succeeded" and r.get("watermark") is not None][:count]


def _ended(row: Row) -> dt.datetime | None:
    """When the run-log row's window ended (its start plus its duration), in UTC."""
    started = row.get("started_at")
    if not isinstance(started, dt.datetime):
        return None
    started = started if started.tzinfo else started.replace(tzinfo=dt.timezone.utc)
    return started + dt.timedelta(seconds=float(row.get("duration_s") or 0.0))


def _last_run(job: JobConfig, status: JobStatus, now: dt.datetime) -> Check:
    """The last run's status: one that failed or was cancelled is at `checks.last_run`'s level."""
    last = str(status.runs[0]["status"]) if status.runs else None
    bad = last in ("failed", "cancelled")
    level = Level(job.checks.last_run.value) if bad else Level.PASS
    said = f"the last run {last}" if last else "no run yet"
    return Check("last_run", level, last, None, None, f"{said} (a failed or cancelled run: {job.checks.last_run})")


def _lag(job: JobConfig, status: JobStatus, now: dt.datetime) -> Check:
    """The units the watermark is behind the sources' latest RecDate (all that is pending)."""
    limit, uom = job.checks.lag, job.join.time_uom.value
    lag = None if status.latest_available is None else (status.pending.whole.units if status.pending else 0)
    unknown = f"the sources' latest RecDate is unknown: {status.problem or 'no source has rows'}"
    return _threshold("lag", lag, limit, lambda v: f"{v:g} {uom}(s) behind the sources' latest RecDate", unknown)


def _timed_out_share(job: JobConfig, status: JobStatus, now: dt.datetime) -> Check:
    """The share of the A rows that became final in the latest windows that timed out: a share of those windows'
    rows together, so a catch-up window, with many units' rows and as many of them timed out, does not move it."""
    recent = _windows(status.runs, job.checks.windows)
    final = sum(int(r.get(name) or 0) for r in recent for name in FINAL_A)
    share = sum(int(r.get("rows_a_timed_out") or 0) for r in recent) / final if final else 0.0
    said = f"of the {final} A rows that became final in the last {len(recent)} window(s) timed out"
    return _threshold("timed_out_share", share, job.checks.timed_out_share, lambda v: f"{v:.1%} {said}", "")


def _too_late(job: JobConfig, status: JobStatus, now: dt.datetime) -> Check:
    """The most too-late B rows per unit of output in one of the latest windows: a window's count divided by its
    units, so that a catch-up of 12 hours is judged as 12 hours, not as one."""
    uom = job.join.time_uom.value
    recent = _windows(status.runs, job.checks.windows)
    rates = [(int(r.get("rows_too_late") or 0) / window_units(r, uom), r) for r in recent]
    most, worst = max(rates, key=lambda rate: rate[0], default=(0.0, None))
    said = f"too-late B row(s) per {uom} at most, in the last {len(recent)} window(s)"
    if worst is not None and window_units(worst, uom) > 1:
        units, count = window_units(worst, uom), int(worst.get("rows_too_late") or 0)
        said += f" ({count} in the window of {units} {uom}s from {worst.get('window_start')})"
    return _threshold("too_late", most, job.checks.too_late, lambda v: f"{v:g} {said}", "")


def _freshness(job: JobConfig, status: JobStatus, now: dt.datetime) -> Check:
    """The hours since the last successful run ended (0 when its end is a moment after `now`: clocks rounding)."""
    ends = [end for r in status.runs if r.get("status") == "succeeded" and (end := _ended(r)) is not None]
    age = max(0.0, (now - ends[0]).total_seconds() / 3600) if ends else None
    unknown = f"no successful run in the last {len(status.runs)} run-log rows"
    said = "the last successful run ended {:.1f} hour(s) ago".format
    return _threshold("freshness_hours", age, job.checks.freshness_hours, said, unknown)


def _duration(job: JobConfig, status: JobStatus, now: dt.datetime) -> Check:
    """The seconds the last run took: its windows' durations (Spark's start included), a catch-up window among
    them counted at its seconds per usual window (`usual_units` of the windows before the run): an hour job's
    catch-up of 12 hours that took 1,200 s counts 100 s."""
    runs, uom = status.runs, job.join.time_uom.value
    last = runs[0].get("run_id") if runs else None
    latest = [r for r in runs if r.get("run_id") == last]
    usual = usual_units(_windows([r for r in runs if r.get("run_id") != last], len(runs)), uom)
    timed = [(float(str(r.get("duration_s") or 0.0)), window_units(r, uom)) for r in latest]
    took = sum(seconds for seconds, _ in timed)
    counted = sum(seconds * usual / units if is_catch_up(units, usual) else seconds for seconds, units in timed)
    caught_up = sum(units for _, units in timed if is_catch_up(units, usual))

    def said(value: float) -> str:
        if not caught_up:
            return f"the last run took {took:.1f} s"
        return (f"the last run took {took:.1f} s, counted as {value:.1f} s: its catch-up of {caught_up} {uom}s at "
                f"its seconds per usual window of {usual:g} {uom}(s)")  # fmt: skip

    return _threshold("duration_s", counted if latest else None, job.checks.duration_s, said, "no run yet", " s")


# The checks a job sets in [checks], by name, in the order they print.
_CHECKS: tuple[tuple[str, Callable[[JobConfig, JobStatus, dt.datetime], Check]], ...] = (
    ("lag", _lag),
    ("timed_out_share", _timed_out_share),
    ("too_late", _too_late),
    ("freshness_hours", _freshness),
    ("duration_s", _duration),
)


def judge_health(job: JobConfig, status: JobStatus, now: dt.datetime | None = None) -> JobHealth:
    """`job`'s checks judged on `status` (its `runs` newest first, at least `runs_to_read(job)` of them), at `now`:
    `last_run` unless it is `off`, and each threshold the job file's `[checks]` sets.

    Example: ``judge_health(job, status_from_log(job, settings, runs_to_read(job))).level`` is `Level.PASS` for a
    healthy job.
    """
    now = now or dt.datetime.now(dt.timezone.utc)
    found = [_last_run(job, status, now)] if job.checks.last_run is not FailedRun.OFF else []
    found += [judge(job, status, now) for name, judge in _CHECKS if name in job.checks.model_fields_set]
    return JobHealth(job.name, tuple(found))
