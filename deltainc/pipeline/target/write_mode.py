"""A write mode: how one window's output reaches the target, as one object (docs/design.md#run-modes).

Each mode says what it writes (`write`), whether the window's run-log row moves the watermark, whether the
window is a forward one (right after the watermark), whether its rows become the target's files in the job's
layout, and whether it may replace the target's columns. The modes themselves live one per module
(`forward_write`, `forward_only_write`, `recompute_write`, `rebuild_write`); the controller picks one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from pyspark.sql import DataFrame, SparkSession

from deltainc.join.windows import TimeUnit, Window
from deltainc.pipeline.delta.sources import ScanStats, TableShape, table_shape
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.join_plan import Identity
from deltainc.pipeline.target.commit_metrics import CommitResult
from deltainc.pipeline.target.schema import new_columns
from deltainc.pipeline.target.slices import Destination
from deltainc.text_enum import TextEnum

__all__ = ["TargetWrite", "WriteInputs", "Written", "Write", "WriteMode", "current_target"]

log = logging.getLogger("deltainc")


class TargetWrite(TextEnum):
    """How a window's commit changed the target, as the run log's `target_write` records it."""

    REPLACE_WHERE = "replace_where"  # the forward write's two slices, replaced (forward_write = "replace_where")
    MERGE = "merge"  # the same two slices, merged (forward_write = "merge")
    FORWARD_ONLY_MERGE = "forward_only_merge"
    RECOMPUTE = "recompute"
    REBUILD = "rebuild"


class WriteInputs(Protocol):
    """What a write needs of the prepared job (`PreparedJob` has it all)."""

    @property
    def spark(self) -> SparkSession: ...
    @property
    def job(self) -> JobConfig: ...
    @property
    def identity(self) -> Identity: ...
    @property
    def origins(self) -> Mapping[str, tuple[str, str]]: ...
    @property
    def partition_by(self) -> tuple[str, ...]: ...
    @property
    def rec(self) -> str: ...
    @property
    def uom(self) -> TimeUnit: ...
    @property
    def spine_reach(self) -> tuple[int, int, bool]: ...


@dataclass(frozen=True)
class Written:
    """What writing one window did to the target, and what of the target it read."""

    how: TargetWrite
    commit: CommitResult
    read: ScanStats
    too_late: int = 0  # matches of timed-out A rows a re-run kept out (corrections = "keep")


Write = Callable[[WriteInputs, Window, DataFrame, dict[str, str]], Written]


@dataclass(frozen=True)
class WriteMode:
    """One way to write a window: the write itself and what the window run does around it."""

    name: str
    write: Write
    moves_watermark: bool  # the window's run-log row records its end as the watermark
    forward: bool  # the window starts right after the watermark (its too-late rows are appended, not replaced)
    lays_out: bool  # its rows become the target's files, in the job's layout (lay_out before the write)
    replaces_columns: bool = False  # the target takes the output's columns (no check against the target's)
    # Whether the job's write reads the output once, in one query, so that it can count and check the rows as it
    # writes them (`window.target_writes.Counting`); a MERGE reads its source more than once.
    single_pass: Callable[[JobConfig], bool] = lambda _job: False


def current_target(inputs: WriteInputs, output: DataFrame, metadata: dict[str, str]) -> tuple[TableShape, Destination]:
    """The target's columns and partition columns as its Delta log records them (no Spark read), and where the
    window's commit goes; the output is checked against those columns (`schema.new_columns`), and the sources'
    new columns, where the job allows them, are added."""
    spark, job = inputs.spark, inputs.job
    shape = table_shape(spark, job.target, "target")
    added = new_columns(shape.schema, output.schema, inputs.origins, job.target.label, job.target.schema_evolution)
    if added:
        log.warning("%s: adding the sources' new column(s) %s to the target %s", job.name, added, job.target.label)
    return shape, Destination(spark, job.target, metadata, bool(added))
