"""Where a job stands, described from its state and its sources' latest RecDate; no Spark here.

`status` reads those facts either from the Delta logs directly (`from_delta_log`, no JVM: a status answers in
about a second) or with Spark (`pipeline.status`); both end here, so the two cannot describe a job apart.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deltainc.join.windows import Pending, pending_range
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.order import upstream_jobs
from deltainc.pipeline.job.sections import SourceRef
from deltainc.pipeline.state.from_delta_log import upstream_watermark
from deltainc.pipeline.state.model import JobState, judge
from deltainc.pipeline.state.window_row import SettingChange, built_with, changes
from deltainc.time_units import to_index, unit_label, whole_units_through

__all__ = ["JobStatus", "UNREAD", "describe", "utc", "status_document"]

UNREAD = "none"  # JobStatus.read_with when nothing could be read: its watermark is unknown, not "never run"


@dataclass(frozen=True)
class JobStatus:
    """Where a job stands: watermark, data available, all that is pending, its lock, its recent runs."""

    job: str
    watermark: str | None
    latest_available: str | None  # the latest RecDate present in both sources
    pending: Pending | None
    lock: dict[str, object] | None  # the run holding the lock, if one does: owner, age, heartbeat, alive
    runs: list[dict[str, object]] = field(default_factory=list)
    changed_settings: tuple[SettingChange, ...] = ()  # since the target was built: a run would refuse
    problem: str | None = None  # what could not be read (a missing source), so the rest is still shown
    read_with: str = "spark"  # "delta_log" when answered from the Delta logs without a JVM; UNREAD: nothing read
    upstream: tuple[str, ...] = ()  # the jobs whose targets it reads: their watermarks bound latest_available
    # Each upstream job's watermark and how many units this job's watermark is behind it (None: either never ran).
    upstream_watermarks: tuple[tuple[str, str | None, int | None], ...] = ()

    @property
    def unread(self) -> bool:
        """Nothing could be read: the watermark is unknown, not "never run"."""
        return self.read_with == UNREAD

    def upstream_lines(self, time_uom: str) -> list[tuple[str, str]]:
        """Each upstream job and where this job stands against it, as `status` and `report` say it, e.g.
        `("trx", "watermark 2025-03-09; this job is 1 day(s) behind it")`."""
        lines = []
        for name, watermark, behind in self.upstream_watermarks:
            far = "" if behind is None else f"; this job is {behind} {time_uom}(s) behind it"
            lines.append((name, f"watermark {watermark or 'none'}{far}"))
        return lines


def utc(value: object) -> object:
    """A naive timestamp as pyspark returns it (local time) made explicit: an aware UTC datetime."""
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.astimezone(dt.timezone.utc)
    return value


def _lock_view(state: JobState, expiry_seconds: int) -> dict[str, object] | None:
    """The lock as `status` shows it: None when free (its last run finished)."""
    held = state.holder
    if held is None or held.finished:
        return None
    now = dt.datetime.now()
    life = judge(held, expiry_seconds, now)
    beat = held.heartbeat_at or held.acquired_at
    return {
        "run_id": held.run_id,
        "owner": held.owner,
        "acquired_at": utc(held.acquired_at),
        "age_s": round((now - held.acquired_at).total_seconds(), 1),
        "heartbeat_age_s": round((now - beat).total_seconds(), 1),
        "alive": life.alive,
        "reason": life.reason,
        "processes": [  # every process that can commit for the run, and whether it still runs (on this host)
            {"role": p.role, "host": p.host, "pid": p.pid, "running": p.alive() if p.local else None}
            for p in held.committers()
        ],
    }


def describe(
    job: JobConfig,
    state: JobState,
    latest: int | None,
    runs: list[dict[str, object]],
    expiry_seconds: int,
    problem: str | None = None,
    read_with: str = "spark",
    state_dir: Path | None = None,
) -> JobStatus:
    """The status of `job` from what was read: its state, the sources' latest unit, its recent runs; with
    `state_dir` (the settings' default state folder) its upstream jobs' watermarks too, read from their logs."""
    uom = job.join.time_uom
    start = to_index(job.start_date, uom)
    pending = None if problem else pending_range(state.watermark, start, latest, None, job.max_window, uom)
    return JobStatus(
        job=job.name,
        watermark=unit_label(state.watermark, uom),
        latest_available=unit_label(latest, uom),
        pending=pending,
        lock=_lock_view(state, expiry_seconds),
        runs=[{name: utc(value) for name, value in run.items()} for run in runs],
        changed_settings=changes(state.settings, built_with(job)),
        problem=problem,
        read_with=read_with,
        upstream=upstream_jobs(job),
        upstream_watermarks=() if state_dir is None else _upstream_watermarks(job, state.watermark, state_dir),
    )


def _upstream_watermarks(
    job: JobConfig, own: int | None, state_dir: Path
) -> tuple[tuple[str, str | None, int | None], ...]:
    """Each upstream job's watermark (None before its first run) and how far behind it this job's watermark is,
    in the job's time_uom."""
    refs = {ref.job: ref for _, ref in job.sources if ref.job is not None}
    units = {name: upstream_watermark(ref, state_dir) for name, ref in refs.items()}
    label = {  # in the upstream's own unit: a day job on an hour job shows that job's hour
        name: unit_label(unit, _unit_of(refs[name], job)) for name, unit in units.items()
    }
    whole = {
        name: None if unit is None else whole_units_through(unit, _unit_of(refs[name], job), job.join.time_uom)
        for name, unit in units.items()
    }
    behind = {name: None if unit is None or own is None else max(0, unit - own) for name, unit in whole.items()}
    return tuple((name, label[name], behind[name]) for name in sorted(units))


def _unit_of(ref: SourceRef, job: JobConfig) -> str:
    """The time unit of the job whose target `ref` reads (the reading job's when load_job did not set it)."""
    owner: JobConfig = ref.upstream or job
    return owner.join.time_uom.value


def _window(start: int, end: int, uom: str) -> dict[str, str]:
    return {"start": unit_label(start, uom), "end": unit_label(end, uom)}


def _run_document(run: dict[str, object]) -> dict[str, object]:
    """A run-log row as JSON: the watermark once (not also as a unit index), its settings as an object."""
    document = {name: value for name, value in run.items() if name != "watermark_unit"}
    if isinstance(document.get("job_settings"), str):
        document["job_settings"] = json.loads(str(document["job_settings"]))
    return document


def status_document(status: JobStatus) -> dict[str, Any]:
    """The status as JSON: one name per fact, timestamps with their zone."""
    pending = status.pending
    return {
        "job": status.job,
        "watermark": status.watermark,
        "latest_available": status.latest_available,
        "pending": None
        if pending is None
        else {
            **_window(pending.whole.start, pending.whole.end, pending.whole.time_uom),
            "units": pending.whole.units,
            "windows": pending.windows,
            "next_window": _window(pending.next.start, pending.next.end, pending.next.time_uom),
        },
        "lock": status.lock,
        "runs": [_run_document(run) for run in status.runs],
        "changed_settings": [{"setting": c.setting, "before": c.before, "now": c.now} for c in status.changed_settings],
        "problem": status.problem,
        "read_with": status.read_with,
        "upstream": list(status.upstream),
        "upstream_watermarks": [
            {"job": name, "watermark": watermark, "behind": behind}
            for name, watermark, behind in status.upstream_watermarks
        ],
    }
