"""The forward-only MERGE (docs/design.md#run-modes): only what moves a target row forward is written. A re-run
(with `corrections = "keep"`) uses it, and so does every window of a job without the sliding join window,
whose output depends on the window's size and so cannot replace slices."""

from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from deltainc.join.windows import Window, from_index, read_bounds
from deltainc.pipeline.delta.sources import scan_stats
from deltainc.pipeline.delta.sql import read as read_target
from deltainc.pipeline.target.merge import ACTION, merge_window, plan_actions
from deltainc.pipeline.target.write_mode import NO_COMMIT, TargetWrite, WriteInputs, WriteMode, Written, current_target

__all__ = ["FORWARD_ONLY", "RERUN"]


def write_forward_only(inputs: WriteInputs, window: Window, output: DataFrame, metadata: dict[str, str]) -> Written:
    """MERGE the window's output into the target's rows of the A rows it can change, forward only."""
    _, to = current_target(inputs, output, metadata)
    target = read_target(inputs.spark, inputs.job.target)
    identity = inputs.identity
    bounds = read_bounds(window, *inputs.spine_reach)
    a_first, a_after = from_index(bounds.a_start, inputs.uom), from_index(bounds.a_end + 1, inputs.uom)
    a_rec = F.col(f"`{identity.a_rec}`")
    target_rows = target.where((a_rec >= F.lit(a_first)) & (a_rec < F.lit(a_after)))
    read = scan_stats(inputs.spark, target_rows)
    actions = plan_actions(output, target_rows, identity).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        planned = {row[ACTION]: int(row["count"]) for row in actions.groupBy(ACTION).count().collect()}
        ignored = planned.pop("ignore", 0)
        commit = merge_window(to, actions, identity, a_first, a_after) if planned else NO_COMMIT
    finally:
        actions.unpersist()
    return Written(TargetWrite.FORWARD_ONLY_MERGE, commit, read, too_late=ignored)


# A run's window of a job without the sliding join window: it moves the watermark.
FORWARD_ONLY = WriteMode("forward_only", write_forward_only, moves_watermark=True, forward=True, lays_out=False)
# A re-run of processed windows: the watermark stays where it is.
RERUN = WriteMode("rerun", write_forward_only, moves_watermark=False, forward=False, lays_out=False)
