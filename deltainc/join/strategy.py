"""How deltainc's joins of rows that grow are planned: shuffled and sorted, never broadcast.

Spark broadcasts a join's side when its size estimate is under `spark.sql.autoBroadcastJoinThreshold` (10 MB):
the driver collects the whole side, builds a hash table of it and sends it to every executor. The estimate of a
window's rows comes from Delta's file sizes, pruned and scaled by columns, and can be far below the rows' size in
memory; a month's window of a year's reload then had the driver collect millions of rows and fail ("Not enough
memory to build and broadcast the table", docs/performance.md#memory). The sides deltainc joins grow with the
window (the sources' rows of its units, its own output) or with the target before it (its slices, the A rows the
too-late search reads), so they are joined by a sort-merge join, whose memory per task is bounded whatever the
sizes. Only what is small by construction is broadcast (the one-row `latest` of `engine.prepare_window`).
"""

from __future__ import annotations

from pyspark.sql import DataFrame

__all__ = ["SHUFFLED", "shuffled"]

SHUFFLED = "merge"  # Spark's join strategy hint for a sort-merge join (also named shuffle_merge, mergejoin)


def shuffled(rows: DataFrame) -> DataFrame:
    """`rows` with a hint that a join of them is a sort-merge join, never a broadcast of either side, whatever
    the size estimates say (a hint on one side decides the join; Spark's adaptive execution keeps it).

    Args:
        rows: one side of a join whose size grows with the window or with the history before it.

    Example:
        >>> shuffled(window_a).join(window_b, condition, "left")  # doctest: +SKIP
    """
    return rows.hint(SHUFFLED)
