"""deltainc: an incremental, late-arrival-aware join of two Delta tables, kept correct in a Delta target."""

from __future__ import annotations

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


def __getattr__(name: str) -> Any:
    """`inc_join` is imported on first use: importing pyspark costs ~0.5 s that `deltainc status` never needs."""
    if name == "inc_join":
        from deltainc.join.engine import inc_join

        return inc_join
    raise AttributeError(f"module 'deltainc' has no attribute {name!r}")
