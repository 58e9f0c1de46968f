"""deltainc: an incremental, late-arrival-aware join of two Delta tables, kept correct in a Delta target.

The public API is what this module exports: the join (`inc_join`, `IncJoinSettings`, `JoinType`), the job
(`load_job`, `run`, `rerun`, `backfill`, `status`) and the error types. Everything else may move.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from deltainc.errors import (
    AmbiguousRowsError,
    ConfigError,
    DeltaincError,
    InternalError,
    JobLockedError,
    SchemaError,
)
from deltainc.join.join_types import JoinType
from deltainc.join.settings import IncJoinSettings

if TYPE_CHECKING:
    from deltainc.join.engine import inc_join
    from deltainc.pipeline.config import load_job
    from deltainc.pipeline import backfill, rerun, run, status

__all__ = [
    "inc_join",
    "IncJoinSettings",
    "JoinType",
    "load_job",
    "run",
    "rerun",
    "backfill",
    "status",
    "AmbiguousRowsError",
    "ConfigError",
    "DeltaincError",
    "InternalError",
    "JobLockedError",
    "SchemaError",
]

# Imported on first use: importing pyspark costs ~0.5 s that `deltainc status` never needs.
_LAZY = {
    "inc_join": "deltainc.join.engine",
    "load_job": "deltainc.pipeline.config",
    "run": "deltainc.pipeline",
    "rerun": "deltainc.pipeline",
    "backfill": "deltainc.pipeline",
    "status": "deltainc.pipeline",
}


def __getattr__(name: str) -> Any:
    """The names of `_LAZY`, imported from their module on first use."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'deltainc' has no attribute {name!r}")
