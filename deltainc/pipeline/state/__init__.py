"""The job's state: the run log (which carries the watermark), the lock and the settings it remembers.

This is the layer's interface, the names the controller, the window run and the commands use: read the state,
hold the lock, append a window's run-log row, describe where a job stands. Everything is read and committed
with delta-rs (no Spark), so what uses only this can be tested without a JVM.
"""

from __future__ import annotations

from deltainc.pipeline.state.from_delta_log import (
    latest_in_sources,
    read_runs_from_log,
    read_state_from_log,
    upstream_watermark,
)
from deltainc.pipeline.state.job_status import JobStatus, describe, status_document
from deltainc.pipeline.state.lock import Lease, locked
from deltainc.pipeline.state.model import Command, JobState, RunRecord, RunStatus, StatePaths, state_paths
from deltainc.pipeline.state.store import append_run, read_runs, read_state, remove_lock
from deltainc.pipeline.state.window_row import built_with, check_unchanged, encode, refusal

__all__ = [
    "latest_in_sources",
    "upstream_watermark",
    "Command",
    "JobState",
    "JobStatus",
    "Lease",
    "RunRecord",
    "RunStatus",
    "StatePaths",
    "append_run",
    "built_with",
    "check_unchanged",
    "describe",
    "encode",
    "locked",
    "read_runs",
    "read_runs_from_log",
    "read_state",
    "read_state_from_log",
    "refusal",
    "remove_lock",
    "state_paths",
    "status_document",
]
