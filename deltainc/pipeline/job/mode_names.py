"""The names of the write modes (docs/design.md#run-modes): what the plan says a window is written in, as plain
values, so that the plan needs neither Spark nor the writers; `target/modes.py` maps each name to its writer."""

from __future__ import annotations

from deltainc.text_enum import TextEnum

__all__ = ["ModeName"]


class ModeName(TextEnum):
    """How a planned window reaches the target: a run's window after the watermark (`FORWARD`: its two slices
    replaced; `FORWARD_ONLY`: merged, without the sliding join window), a re-run (`RERUN`, merged; `RECOMPUTE`,
    recomputed on to the watermark) or the whole target rebuilt (`REBUILD`)."""

    FORWARD = "forward"
    FORWARD_ONLY = "forward_only"
    RERUN = "rerun"
    RECOMPUTE = "recompute"
    REBUILD = "rebuild"
