"""The recompute and the rebuild (docs/design.md#run-modes): a window's output replaces the target's rows from a
unit on, or the whole target. A re-run that applies the sources' corrections runs from --start to the watermark
and replaces the target's rows from --start on by its output, so the target equals a reload; `run --rebuild`
runs one window from start_date whose output replaces the whole target, its columns included, in one commit.

Rows before --start are final and cannot depend on the window; rows from --start on are exactly the window's
output (window-size invariance), whatever the corrections changed in between. No commit when nothing changed.
"""

from __future__ import annotations

from dataclasses import replace

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from deltainc.join.output_layout import RESERVED_PREFIX
from deltainc.join.windows import Window
from deltainc.pipeline.delta.sources import read as read_target
from deltainc.pipeline.delta.spark_counts import ScanStats, scan_stats
from deltainc.pipeline.target.forward_write import overwrite_target, replace_where, sql_literal
from deltainc.pipeline.target.found import TargetFound
from deltainc.pipeline.target.write_mode import (
    NO_COMMIT,
    Destination,
    TargetWrite,
    WriteInputs,
    WriteMode,
    Written,
    current_target,
)
from deltainc.time_units import from_index

__all__ = ["RECOMPUTE", "REBUILD"]


def write_recompute(
    inputs: WriteInputs, found: TargetFound, window: Window, output: DataFrame, metadata: dict[str, str]
) -> Written:
    """Replace the target's rows from the window's start on by its output, counting the rows that changed."""
    to = current_target(inputs, found, output, metadata)
    rec = inputs.rec
    first = sql_literal(from_index(window.start, inputs.uom), found.existing_schema()[rec].dataType)
    condition = f"`{rec}` >= {first}"
    target = read_target(inputs.spark, inputs.job.target)
    # A column the sources added is NULL in the target's rows so far (compared as such).
    held = [F.col(f"`{c}`") if c in target.columns else F.lit(None).cast(f.dataType).alias(c) for c, f in
            ((f.name, f) for f in output.schema.fields)]  # fmt: skip
    current = target.where(condition).select(*held)
    read = scan_stats(inputs.spark, current)
    mark = f"{RESERVED_PREFIX}change"
    changes = (
        output.exceptAll(current)
        .withColumn(mark, F.lit("inserted"))
        .unionByName(current.exceptAll(output).withColumn(mark, F.lit("deleted")))
    )
    changed = {row[mark]: int(row["count"]) for row in changes.groupBy(mark).count().collect()}
    if not changed:
        return Written(TargetWrite.RECOMPUTE, NO_COMMIT, read)
    commit = replace_where(to, output, condition)
    exact = replace(commit, inserted=changed.get("inserted", 0), updated=0, deleted=changed.get("deleted", 0))
    return Written(TargetWrite.RECOMPUTE, exact, read)


RECOMPUTE = WriteMode("recompute", write_recompute, moves_watermark=False, forward=False, lays_out=True)


def write_rebuild(
    inputs: WriteInputs, _found: TargetFound, window: Window, output: DataFrame, metadata: dict[str, str]
) -> Written:
    """Overwrite the target with the window's output (it reads none of the target, so needs nothing of it)."""
    to = Destination(inputs.spark, inputs.job.target, metadata)
    return Written(TargetWrite.REBUILD, overwrite_target(to, output, inputs.partition_by), ScanStats(0, 0))


REBUILD = WriteMode("rebuild", write_rebuild, moves_watermark=True, forward=False, lays_out=True, replaces_columns=True)
