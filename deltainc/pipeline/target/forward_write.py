"""The forward write mode (docs/design.md#the-two-slices-and-the-forward-write): a window right after the watermark
replaces the target's two slices (`slices.py`), the final rows of the window and the rows still open at its end, in
one commit (`replaceWhere`, or a MERGE of the same slices with `forward_write = "merge"`)."""

from __future__ import annotations

from pyspark.sql import DataFrame

from deltainc.join.windows import Window, from_index
from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.delta_log_stats import files_in_units
from deltainc.pipeline.delta.snapshot import log_else
from deltainc.pipeline.delta.sources import ScanStats, scan_stats
from deltainc.pipeline.delta.sql import read
from deltainc.pipeline.target.layout import holds_open_rows_apart
from deltainc.pipeline.target.slices import Slices, forward_slices, merge_slices, replace_slices
from deltainc.pipeline.target.write_mode import TargetWrite, WriteInputs, WriteMode, Written, current_target
from deltainc.spark_compat import session_kind

__all__ = ["FORWARD"]


def write_forward(inputs: WriteInputs, window: Window, output: DataFrame, metadata: dict[str, str]) -> Written:
    """Replace the target's two slices from the watermark on by the window's output. The slices are named as
    the target's own layout (read from its log) allows: by `IsFinal` where it holds its open rows apart."""
    shape, to = current_target(inputs, output, metadata)
    rec = inputs.rec
    apart = holds_open_rows_apart(shape.partition_by)
    slices = forward_slices(rec, from_index(window.start - 1, inputs.uom), shape.schema[rec].dataType, apart)
    if inputs.job.target.forward_write == "merge":
        read_ = _slices_read(inputs, window, slices)
        return Written(TargetWrite.MERGE, merge_slices(to, output, inputs.identity.columns, slices), read_)
    # The condition is on partition columns only (a day target holding its open rows apart): Delta removes the
    # slices' files unread.
    metadata_only = apart and rec in shape.partition_by
    read_ = ScanStats(0, 0) if metadata_only else _slices_read(inputs, window, slices)
    return Written(TargetWrite.REPLACE_WHERE, replace_slices(to, output, slices), read_)


def _slices_read(inputs: WriteInputs, window: Window, slices: Slices) -> ScanStats:
    """The target's files the slices from the watermark on span: from its Delta log when the target is a local
    table (the files whose RecDate range reaches the watermark), else as Spark plans the slices' scan."""
    ref = inputs.job.target

    def from_log() -> ScanStats:
        if ref.path is None or not session_kind(inputs.spark).sees_its_files:
            raise LogUnreadable("the target is a catalog table, or the session's files are not this process'")
        return ScanStats(*files_in_units(ref.path, inputs.rec, inputs.uom, window.start - 1, None))

    def with_spark(_why: Exception) -> ScanStats:
        return scan_stats(inputs.spark, read(inputs.spark, ref).where(slices.condition()))

    return log_else("the target's files read", from_log, with_spark)


FORWARD = WriteMode(
    "forward",
    write_forward,
    moves_watermark=True,
    forward=True,
    lays_out=True,
    single_pass=lambda job: job.target.forward_write == "replace_where",
)
