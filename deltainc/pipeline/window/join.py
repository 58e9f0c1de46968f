"""One window's join: the engine's output for [first, last] and what each source's scan reads.

A two-source job reads A in [s - mw, e] and B in [s - lb - mw, e] (`open_read_bounds`); a feature job reads
the spine in [s - max mw, e] and each source in that range widened by its own look_back_time (`join.features`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pyspark.sql import DataFrame

from deltainc.join.engine import join_prepared, read_sources
from deltainc.join.features import feature_join
from deltainc.join.unit_columns import source_filter
from deltainc.join.windows import open_read_bounds
from deltainc.pipeline.job.feature_plan import reach, spine_settings
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.prepared_job import PreparedJob

__all__ = ["SourceScan", "WindowJoin", "read_ranges", "join_window"]


@dataclass(frozen=True)
class SourceScan:
    """One source's pruned scan in a window: its role (source_a, source_b, features[name]) and the units it reads,
    [first, last] as `read_ranges` gives them."""

    role: str
    scan: DataFrame
    units: tuple[int, int]


@dataclass(frozen=True)
class WindowJoin:
    """The window's output rows and the scans behind them, source_a's first."""

    output: DataFrame
    scans: tuple[SourceScan, ...]


def read_ranges(job: JobConfig, first: int, last: int, b_waits: bool = False) -> dict[str, tuple[int, int]]:
    """The units each source is read in for the output window [first, last], by role."""
    if not job.features:
        bounds = open_read_bounds(first, last, job.join.look_back_time, job.join.max_waiting_time, b_waits)
        return {"source_a": (bounds.a_start, bounds.a_end), "source_b": (bounds.b_start, bounds.b_end)}
    spine_first = first - reach(job)
    ranges = {"source_a": (spine_first, last)}
    ranges.update({f.role: (spine_first - f.look_back_time, last) for f in job.features})
    return ranges


def join_window(prepared: PreparedJob, first: int, last: int) -> WindowJoin:
    """The engine's output for the window [first, last] under the job's settings, and each source's scan."""
    job, inc, uom = prepared.job, prepared.job.join.inc_col, prepared.uom
    if prepared.spec is None:
        ranges = read_ranges(job, first, last)
        frames = {"source_a": prepared.df_a} | {f"features[{s.name}]": s.rows for s in prepared.features}
        scans = tuple(
            SourceScan(role, frame.where(source_filter(frame, inc, uom, *ranges[role])), ranges[role])
            for role, frame in frames.items()
        )
        label_first, label_last = prepared.label(first), prepared.label(last)
        assert label_first is not None and label_last is not None
        output = feature_join(
            prepared.df_a, prepared.features, job.target.keys, label_first, label_last, spine_settings(job)
        )
        return WindowJoin(output, scans)
    assert prepared.df_b is not None
    spec = replace(prepared.spec, start=first, end=last)
    scan_a, scan_b = read_sources(prepared.df_a, prepared.df_b, spec)
    ranges = read_ranges(job, first, last, spec.b_waits)
    scans = (SourceScan("source_a", scan_a, ranges["source_a"]), SourceScan("source_b", scan_b, ranges["source_b"]))
    return WindowJoin(join_prepared(prepared.df_a, prepared.df_b, spec), scans)
