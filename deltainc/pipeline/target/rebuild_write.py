"""The rebuild (`run --rebuild`, docs/design.md#run-modes): one window from start_date whose output replaces the
whole target, its columns included, in one commit."""

from __future__ import annotations

from pyspark.sql import DataFrame

from deltainc.join.windows import Window
from deltainc.pipeline.delta.sources import ScanStats
from deltainc.pipeline.target.forward_write import overwrite_target
from deltainc.pipeline.target.write_mode import Destination, TargetWrite, WriteInputs, WriteMode, Written

__all__ = ["REBUILD"]


def write_rebuild(inputs: WriteInputs, window: Window, output: DataFrame, metadata: dict[str, str]) -> Written:
    """Overwrite the target with the window's output (it reads none of the target)."""
    to = Destination(inputs.spark, inputs.job.target, metadata)
    return Written(TargetWrite.REBUILD, overwrite_target(to, output, inputs.partition_by), ScanStats(0, 0))


REBUILD = WriteMode("rebuild", write_rebuild, moves_watermark=True, forward=False, lays_out=True, replaces_columns=True)
