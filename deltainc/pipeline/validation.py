"""Validate a job without writing: it fits its sources and its remembered settings, what its next window reads,
and what of the existing target's layout makes daily runs costly. `deltainc validate` only renders it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import SparkSession

from deltainc.join.windows import ReadBounds, from_index, read_bounds
from deltainc.pipeline import prepare_job, status
from deltainc.pipeline.config import JobConfig
from deltainc.pipeline.job_status import JobStatus
from deltainc.pipeline.remembered_settings import refusal
from deltainc.pipeline.sources import table_exists
from deltainc.pipeline.target_layout import layout_warnings, read_layout
from deltainc.settings import Settings

__all__ = ["JobValidation", "validate_job"]


@dataclass(frozen=True)
class JobValidation:
    """A valid job: where it stands, the RecDates its next window reads, whether its target exists, and
    warnings about the target's layout (an empty tuple when there is no target yet)."""

    job: JobConfig
    status: JobStatus
    next_reads: ReadBounds | None  # unit indices; None when nothing is pending
    target_exists: bool
    warnings: tuple[str, ...]

    def next_read_labels(self) -> dict[str, tuple[str, str]] | None:
        """`next_reads` as the first and last RecDate of each source: {'source_a': ('2025-02-27', ...), ...}."""
        if self.next_reads is None:
            return None
        uom, read = self.job.join.time_uom, self.next_reads

        def label(unit: int) -> str:
            return from_index(unit, uom).isoformat()

        return {
            "source_a": (label(read.a_start), label(read.a_end)),
            "source_b": (label(read.b_start), label(read.b_end)),
        }


def validate_job(
    job: JobConfig | str | Path, spark: SparkSession | None = None, settings: Settings | None = None
) -> JobValidation:
    """Check the job against its sources (columns, types, keys) and its remembered settings, writing nothing;
    raises ConfigError, SchemaError or SettingsChangedError naming what does not fit."""
    prepared = prepare_job(job, spark, settings)  # the sources, the join and the output: raises if invalid
    spark, settings, config = prepared.spark, prepared.settings, prepared.job
    join = config.join
    state = status(config, spark=spark, settings=settings, runs=1)
    if state.changed_settings:
        raise refusal(config, state.changed_settings, "validate")
    reads = None
    if state.pending is not None:
        b_waits = join.engine_settings().b_waits_for_a  # a full_outer job reads A from further back
        reads = read_bounds(state.pending.next, join.look_back_time, join.max_waiting_time, b_waits)
    exists = table_exists(spark, config.target)
    warnings: list[str] = []
    if exists:
        layout = read_layout(spark, config.target)
        warnings = layout_warnings(layout, join.inc_col, join.time_uom, config.target.change_data_feed)
    return JobValidation(config, state, reads, exists, tuple(warnings))
