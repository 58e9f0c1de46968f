"""deltainc: an incremental, late-arrival-aware join of two Delta tables, kept correct in a Delta target.

The public API is what this module exports: the join (`inc_join`, `feature_join`, `FeatureSource`, `IncJoinSettings`,
`JoinType`, `TimeUnit`), the job (`load_job`, `run`, `rerun`, `backfill`, `status`) and the error types. Everything
else may move.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deltainc._version import __version__ as __version__  # `deltainc.__version__`; not in __all__: not an API object
from deltainc.errors import (
    AmbiguousRowsError,
    ConfigError,
    DeltaincError,
    InternalError,
    JobLockedError,
    SchemaError,
)
from deltainc.join.options import IncJoinSettings, JoinType
from deltainc.lazy_front import lazy_names
from deltainc.time_units import TimeUnit

if TYPE_CHECKING:
    from deltainc.join.engine import inc_join
    from deltainc.join.feature_source import FeatureSource
    from deltainc.join.features import feature_join
    from deltainc.pipeline import backfill, rerun, run, status
    from deltainc.pipeline.job.job_config import load_job

__all__ = [
    "inc_join",
    "feature_join",
    "FeatureSource",
    "IncJoinSettings",
    "JoinType",
    "TimeUnit",
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

# Each name's module, imported on first use: importing pyspark costs ~0.5 s that `status` never needs.
_HOMES = {
    "inc_join": "deltainc.join.engine",
    "feature_join": "deltainc.join.features",
    "FeatureSource": "deltainc.join.feature_source",
    "load_job": "deltainc.pipeline.job.job_config",
    **{name: "deltainc.pipeline" for name in ("run", "rerun", "backfill", "status")},
}


__getattr__ = lazy_names(__name__, _HOMES)
