"""Each write mode's name (the plan's `ModeName`) mapped to its writer (`WriteMode`): the one place a planned
window's mode becomes the code that writes it."""

from __future__ import annotations

from deltainc.pipeline.job.mode_names import ModeName
from deltainc.pipeline.target.forward_write import FORWARD
from deltainc.pipeline.target.merge import FORWARD_ONLY, RERUN
from deltainc.pipeline.target.recompute_write import REBUILD, RECOMPUTE
from deltainc.pipeline.target.write_mode import WriteMode

__all__ = ["write_mode"]

_WRITERS = {mode.name: mode for mode in (FORWARD, FORWARD_ONLY, RERUN, RECOMPUTE, REBUILD)}


def write_mode(name: ModeName) -> WriteMode:
    """The write mode the plan names, e.g. `write_mode(ModeName.FORWARD).moves_watermark` is True."""
    return _WRITERS[name.value]
