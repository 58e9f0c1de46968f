"""The forward write (docs/design.md#the-two-slices-and-the-forward-write): a window right after the watermark
replaces the target's two slices, the final rows of the window and the rows still open at its end, in one
commit (`replaceWhere`, or a MERGE of the same slices with `forward_write = "merge"`)."""

from __future__ import annotations

from pyspark.sql import DataFrame

from deltainc.join.windows import Window, from_index
from deltainc.pipeline.delta.log_stats import files_in_units
from deltainc.pipeline.delta.log_tables import LogUnreadable, asking_spark
from deltainc.pipeline.delta.sources import ScanStats, scan_stats
from deltainc.pipeline.target.slice_writer import forward_slices, merge_slices, replace_slices
from deltainc.pipeline.target.write_mode import TargetWrite, WriteInputs, WriteMode, Written, current_target
from deltainc.spark_compat import is_connect

__all__ = ["FORWARD"]


def write_forward(inputs: WriteInputs, window: Window, output: DataFrame, metadata: dict[str, str]) -> Written:
    """Replace the target's two slices from the watermark on by the window's output."""
    target, to = current_target(inputs, output, metadata)
    rec = inputs.rec
    slices = forward_slices(rec, from_index(window.start - 1, inputs.uom), target.schema[rec].dataType)
    read = _slices_read(inputs, window, target.where(slices.condition()))
    if inputs.job.target.forward_write == "merge":
        return Written(TargetWrite.MERGE, merge_slices(to, output, inputs.identity.columns, slices), read)
    return Written(TargetWrite.REPLACE_WHERE, replace_slices(to, output, slices), read)


def _slices_read(inputs: WriteInputs, window: Window, rows: DataFrame) -> ScanStats:
    """The target's files the slices from the watermark on span: from its Delta log when the target is a local
    table partitioned by the output RecDate (partition pruning keeps exactly those), else as Spark plans it."""
    ref = inputs.job.target
    if ref.path is not None and not is_connect(inputs.spark):
        try:
            return ScanStats(*files_in_units(ref.path, inputs.rec, inputs.uom, window.start - 1, None))
        except LogUnreadable as exc:
            asking_spark("the target's files read", exc)
    return scan_stats(inputs.spark, rows)


FORWARD = WriteMode("forward", write_forward, moves_watermark=True, forward=True, lays_out=True)
