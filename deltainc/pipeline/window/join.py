"""One window's join: the engine's output for [first, last] and what each source's scan reads.

The job's kind says what each source is read in (`JobKind.read_ranges`): a two-source job reads A in [s - mw, e]
and B in [s - lb - mw, e]; a feature job the spine in [s - max mw, e] and each source in that range widened by
its own look_back_time. Its prepared join, checked once when the job was prepared, joins the window.
"""

from __future__ import annotations

from deltainc.pipeline.job.kinds import SourceScan, WindowJoin
from deltainc.pipeline.prepared_job import PreparedJob

__all__ = ["SourceScan", "WindowJoin", "join_window"]


def join_window(prepared: PreparedJob, first: int, last: int) -> WindowJoin:
    """The engine's output for the window [first, last] under the job's settings, and each source's scan."""
    return prepared.join.join(first, last)
