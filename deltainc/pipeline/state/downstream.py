"""The jobs a rerun reaches: those of the job directory that read the re-run job's target (directly or through
others) and have processed its first unit already. Their windows from there on read rows the rerun may change,
so `rerun` names them with the units to re-run, in its output and in its run-log rows (`downstream`)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

from deltainc.errors import ConfigError
from deltainc.join.windows import Window
from deltainc.pipeline.job.job_config import JobConfig, load_job
from deltainc.pipeline.job.order import downstream_jobs
from deltainc.pipeline.state.from_delta_log import watermark_from_log
from deltainc.pipeline.state.model import state_paths
from deltainc.time_units import parse_point

__all__ = ["DownstreamRerun", "downstream_reruns", "encode_reruns"]


@dataclass(frozen=True)
class DownstreamRerun:
    """A job below the re-run one and the units it must re-run: from the rerun's start (or its own start_date,
    if later) to its watermark, as labels."""

    job: JobConfig
    start: str
    end: str

    def document(self) -> dict[str, str]:
        """As `--json` and the run log show it: `{"job": ..., "start": ..., "end": ...}`."""
        return {"job": self.job.name, "start": self.start, "end": self.end}


def downstream_reruns(
    name: str, start: str | dt.date, job_dir: Path, state_dir: Path, *, strict: bool
) -> tuple[DownstreamRerun, ...]:
    """The jobs of `job_dir` below the job `name` that processed `start` already, in dependency order.

    Args:
        name: the re-run job.
        start: the rerun's first unit (a date, or an ISO datetime for hour and minute jobs).
        job_dir: the folder of the job files; a missing folder has no jobs.
        state_dir: the settings' state folder (for jobs that name no `[state]` of their own).
        strict: refuse a job file that cannot be read (ConfigError); otherwise it is passed over: a rerun
            that only names the jobs below it is not refused for an unrelated file.

    Example: ``downstream_reruns("trx", "2025-03-04", Path("jobs"), Path("state"), strict=False)`` gives
    ``(DownstreamRerun(trx_scans, "2025-03-04", "2025-03-09"),)`` when trx_scans reads `job = "trx"` and its
    watermark is 2025-03-09.
    """
    jobs = []
    for path in sorted(job_dir.glob("*.toml")) if job_dir.is_dir() else []:
        try:
            jobs.append(load_job(path))
        except ConfigError:
            if strict:
                raise
    below = []
    for job in downstream_jobs(jobs, name):
        uom = job.join.time_uom
        first = max(parse_point(start, "--start", uom), parse_point(job.start_date, "start_date", uom))
        last = watermark_from_log(state_paths(job.state_path(state_dir)), job.name)
        if last is not None and last >= first:
            window = Window(first, last, uom)
            below.append(DownstreamRerun(job, window.label(first), window.label(last)))
    return tuple(below)


def encode_reruns(reruns: tuple[DownstreamRerun, ...]) -> str | None:
    """The run log's `downstream`: JSON, a list of `DownstreamRerun.document`s; None when no job is below."""
    return json.dumps([rerun.document() for rerun in reruns]) if reruns else None
