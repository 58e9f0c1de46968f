"""The state's pure data, without Spark: where a job's state tables live and what reading them gives.

`deltainc.pipeline.state.store` re-exports all of it; it lives apart so that `status` needs no pyspark.
"""

from __future__ import annotations

from dataclasses import dataclass

from deltainc.pipeline.state.lock_model import LockHolder

__all__ = ["StatePaths", "JobState", "state_paths"]


@dataclass(frozen=True)
class StatePaths:
    """Where the state tables of a job live (one folder may serve many jobs)."""

    root: str
    runs: str
    locks: str
    legacy_watermarks: str  # the watermark table of deltainc 0.1, still read when present


def state_paths(root: str) -> StatePaths:
    """The state tables under `root`."""
    root = root.rstrip("/")
    return StatePaths(root, f"{root}/runs", f"{root}/locks", f"{root}/watermarks")


@dataclass(frozen=True)
class JobState:
    """A job's watermark and its lock's holder, read together (two small reads, no commit), and the settings
    its target was built with (those of the latest row that moved the watermark; None before 0.2)."""

    watermark: int | None
    holder: LockHolder | None
    settings: dict[str, object] | None = None
