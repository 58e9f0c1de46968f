"""deltainc: an incremental, late-arrival-aware join of two Delta tables, kept correct in a Delta target."""

from __future__ import annotations

from deltainc.engine import inc_join
from deltainc.errors import (
    AmbiguousRowsError,
    ConfigError,
    DeltaincError,
    InternalError,
    JobLockedError,
    SchemaError,
)
from deltainc.join_settings import IncJoinSettings
from deltainc.join_types import JoinType

__all__ = [
    "inc_join",
    "IncJoinSettings",
    "JoinType",
    "AmbiguousRowsError",
    "ConfigError",
    "DeltaincError",
    "InternalError",
    "JobLockedError",
    "SchemaError",
]
