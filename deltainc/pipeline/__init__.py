"""The pipeline layer: job files, the controller (run, rerun, backfill, status), the target writers, the
state (watermark, run log, lock) and the sources. Data flows config -> controller -> engine -> writer."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deltainc.pipeline.controller import PipelineResult, WindowReport, backfill, prepare_job, rerun, run, status

__all__ = ["PipelineResult", "WindowReport", "backfill", "prepare_job", "rerun", "run", "status"]


def __getattr__(name: str) -> Any:
    """The controller is imported on first use: `deltainc status` reads job files here without pyspark."""
    if name in __all__:
        return getattr(importlib.import_module("deltainc.pipeline.controller"), name)
    raise AttributeError(f"module 'deltainc.pipeline' has no attribute {name!r}")
