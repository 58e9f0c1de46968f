"""The forward-only MERGE (docs/design.md#run-modes): applies one window's join output to the Delta target in one
commit, writing only what moves a target row forward. A re-run (with `corrections = "keep"`) uses it, and so does
every window of a job without the sliding join window, whose output depends on the window's size and so cannot
replace slices.

Row identity (docs/design.md#rows-of-the-target): a matched row is (A keys, A's RecDate, B keys,
B's RecDate); an unmatched row is (A keys, A's RecDate). Per A row the target moves only forward:
absent -> waiting | timed_out | matched; waiting -> later waiting | timed_out | matched; matched and
timed_out are final. The actions are decided here from the target's current state, so that the MERGE
itself only inserts, updates and deletes exactly identified rows.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from deltainc.errors import AmbiguousRowsError
from deltainc.join.options import JoinType
from deltainc.join.output_layout import IS_FINAL, JOIN_TYPE, RESERVED_PREFIX, WAITING_TIME
from deltainc.join.strategy import shuffled
from deltainc.join.windows import Window, read_bounds
from deltainc.pipeline.delta.sources import read
from deltainc.pipeline.delta.spark_counts import scan_stats
from deltainc.pipeline.delta.sql import assignments, insert_values, merge_into
from deltainc.pipeline.job.kinds.job_kind import Identity
from deltainc.pipeline.target.duplicate_identity import WindowSources, ambiguous_identity, shown_samples
from deltainc.pipeline.target.forward_write import sql_literal
from deltainc.pipeline.target.found import TargetFound
from deltainc.pipeline.target.write_mode import (
    NO_COMMIT,
    CommitResult,
    Destination,
    TargetWrite,
    WriteInputs,
    WriteMode,
    Written,
    current_target,
    last_commit,
)
from deltainc.pipeline.target.write_mode import user_metadata as commit_metadata
from deltainc.time_units import from_index

__all__ = ["Identity", "count_and_check", "check_unambiguous", "plan_actions", "merge_window", "FORWARD_ONLY", "RERUN"]

ACTION = f"{RESERVED_PREFIX}action"
_MATCHED = [int(JoinType.SAME_TIME), int(JoinType.A_LATE), int(JoinType.B_LATE)]


def count_and_check(output: DataFrame, identity: Identity, sources: WindowSources | None = None) -> dict[int, int]:
    """Output rows per JoinType, and the ambiguity check of `check_unambiguous`, in one Spark job.

    Two rows with one identity share their JoinType (it follows from the identity and the window), so
    grouping by identity and JoinType and then by JoinType gives both the counts and the largest group.
    """
    per_identity = output.groupBy(*[F.col(f"`{c}`") for c in identity.columns], F.col(JOIN_TYPE)).count()
    rows = per_identity.groupBy(JOIN_TYPE).agg(F.sum("count").alias("rows"), F.max("count").alias("most")).collect()
    if any(int(r["most"]) > 1 for r in rows):
        check_unambiguous(output, identity, sources)
    return {int(r[JOIN_TYPE]): int(r["rows"]) for r in rows}


def check_unambiguous(
    output: DataFrame, identity: Identity, sources: WindowSources | None = None, sample: int = 5
) -> None:
    """Fail before writing when two output rows share one identity; name the keys, a sample and, from `sources`,
    which source holds the duplicate."""
    dups = (
        output.groupBy(*[F.col(f"`{c}`") for c in identity.columns])
        .count()
        .where(F.col("count") > 1)
        .limit(sample)
        .collect()
    )
    if not dups:
        return
    null_keys = [  # a key that is NULL in a row that has its side (an A-only row has no B keys, and the reverse)
        column
        for keys, rec in ((identity.a_keys, identity.a_rec), (identity.b_keys, identity.b_rec))
        for column in keys
        if rec is not None and any(row[column] is None and row[rec] is not None for row in dups)
    ]
    if null_keys:
        _refuse_null_key(output, identity, null_keys[0], shown_samples(identity, dups))
    raise ambiguous_identity(identity, dups, sources)


def _refuse_null_key(output: DataFrame, identity: Identity, column: str, sample: str) -> None:
    """The ambiguity comes from a NULL key: say so, how many rows have it, and the ways out."""
    setting, side, name = identity.setting_of(column)
    rec = identity.a_rec if side == "source_a" else identity.b_rec
    count = output.where(F.col(f"`{column}`").isNull() & F.col(f"`{rec}`").isNotNull()).count()
    raise AmbiguousRowsError(
        f"{setting}: {name!r} is NULL in {count} output row(s) of this window, so the target cannot tell them "
        f"apart ({sample}). A NULL key never matches (SQL semantics). Leave such rows out with "
        f'where = "{name} IS NOT NULL" under [{side}], or add to {setting} a column that identifies them. '
        "Nothing was written."
    )


def _all(conditions: Sequence[Column]) -> Column:
    result = F.lit(True)
    for condition in conditions:
        result = result & condition
    return result


def plan_actions(output: DataFrame, target_rows: DataFrame | None, identity: Identity) -> DataFrame:
    """The output rows to apply, each with its action (insert, update or delete), from the target's state;
    a match of an A row the target has as timed out comes with action "ignore" (it is counted, not applied)."""
    jt = F.col(JOIN_TYPE)
    has_wait = WAITING_TIME in output.columns
    source = output.withColumn(ACTION, F.lit("insert"))
    if target_rows is None:
        return source
    t_wait = F.col(WAITING_TIME) if has_wait and WAITING_TIME in target_rows.columns else F.lit(None).cast("int")
    prefix = f"{RESERVED_PREFIX}t_"
    state = target_rows.groupBy(*[F.col(f"`{c}`").alias(prefix + c) for c in identity.a_columns]).agg(
        F.max(F.when(jt.isin(_MATCHED), 1).otherwise(0)).alias(f"{prefix}matched"),
        F.max(F.when(jt == int(JoinType.A_TIMED_OUT), 1).otherwise(0)).alias(f"{prefix}timed_out"),
        F.max(F.when(jt == int(JoinType.A_WAITING), 1).otherwise(0)).alias(f"{prefix}waiting"),
        F.max(F.when(jt == int(JoinType.A_WAITING), t_wait)).alias(f"{prefix}wait"),
    )
    on = _all([F.col(f"`{c}`").eqNullSafe(F.col(f"`{prefix}{c}`")) for c in identity.a_columns])
    joined = shuffled(output).join(state, on, "left")
    t_matched = F.coalesce(F.col(f"{prefix}matched"), F.lit(0)) == 1
    t_timed_out = F.coalesce(F.col(f"{prefix}timed_out"), F.lit(0)) == 1
    t_waiting = F.coalesce(F.col(f"{prefix}waiting"), F.lit(0)) == 1
    newer_wait = F.col(WAITING_TIME) > F.col(f"{prefix}wait") if has_wait else F.lit(False)
    s_matched = jt.isin(_MATCHED)
    action = (
        F.when(s_matched & t_timed_out, "ignore")  # timed_out is final: a correction that came too late
        .when(s_matched, "insert")  # a no-op when the target already has this pair
        .when(t_matched | t_timed_out, None)  # a stale unmatched row never regresses a later state
        .when(t_waiting & ((jt == int(JoinType.A_TIMED_OUT)) | newer_wait), "update")
        .when(t_waiting, None)
        .otherwise("insert")
    )
    rows = joined.withColumn(ACTION, action)
    # A waiting row whose A now matched is deleted: one marker row per A identity, B identity null.
    markers = (
        rows.where(s_matched & t_waiting & ~t_timed_out)
        .select(
            *[
                (F.col(f"`{f.name}`") if f.name in identity.a_columns else F.lit(None).cast(f.dataType)).alias(f.name)
                for f in output.schema.fields
            ]
        )
        .distinct()
        .withColumn(ACTION, F.lit("delete"))
    )
    columns = [*[F.col(f"`{c}`") for c in output.columns], F.col(ACTION)]
    seen = f"{RESERVED_PREFIX}e_"
    existing = target_rows.select(*[F.col(f"`{c}`").alias(seen + c) for c in identity.columns])
    present = _all([F.col(f"`{c}`").eqNullSafe(F.col(f"`{seen}{c}`")) for c in identity.columns])
    # An insert whose exact row is already in the target is dropped, so that a re-run commits nothing.
    # (A left-anti join: measured faster than collecting each A row's B identities in the aggregation above.)
    inserts = shuffled(rows.where(F.col(ACTION) == "insert")).join(existing, present, "left_anti").select(*columns)
    updates = rows.where(F.col(ACTION) == "update").select(*columns)
    # Matches of timed-out A rows go along (the MERGE applies nothing to them) to be counted as too late.
    ignored = rows.where(F.col(ACTION) == "ignore").select(*columns)
    return inserts.unionByName(updates).unionByName(markers).unionByName(ignored)


def merge_window(
    to: Destination,
    found: TargetFound,
    actions: DataFrame,
    identity: Identity,
    a_first: dt.date | dt.datetime,
    a_after_last: dt.date | dt.datetime,
) -> CommitResult:
    """One MERGE of the planned actions into the target as the window `found` it; its condition carries literal
    A RecDate bounds."""
    target_schema = found.existing_schema()
    target_columns = target_schema.fieldNames()
    a_type = target_schema[identity.a_rec].dataType
    condition = " AND ".join(
        [f"t.`{c}` <=> s.`{c}`" for c in identity.a_keys]
        + [f"t.`{identity.a_rec}` = s.`{identity.a_rec}`"]
        + [f"t.`{c}` <=> s.`{c}`" for c in identity.b_columns]
        + [
            f"t.`{identity.a_rec}` >= {sql_literal(a_first, a_type)}",
            f"t.`{identity.a_rec}` < {sql_literal(a_after_last, a_type)}",
            # Only waiting rows are ever updated or deleted, and plan_actions dropped every insert already
            # present: so no other target row can match, and Delta skips files (or partitions) without any.
            f"t.`{JOIN_TYPE}` = {int(JoinType.A_WAITING)}",
        ]
        # A target holding its open rows apart (IsFinal): the same, as a partition filter.
        + ([f"t.`{IS_FINAL}` = false"] if found.open_rows_apart else [])
    )
    columns = [c for c in actions.columns if c != ACTION] if to.add_columns else target_columns
    with commit_metadata(to.spark, to.user_metadata):
        merge_into(
            to.spark,
            to.ref,
            actions,
            condition,
            [
                f"WHEN MATCHED AND s.{ACTION} = 'delete' THEN DELETE",
                f"WHEN MATCHED AND s.{ACTION} = 'update' THEN UPDATE SET {assignments(columns)}",
                f"WHEN NOT MATCHED AND s.{ACTION} = 'insert' THEN INSERT {insert_values(columns)}",
            ],
            schema_evolution=to.add_columns,  # the output's new columns join the table
        )
    return last_commit(to.spark, to.ref, ("MERGE",))


def write_forward_only(
    inputs: WriteInputs, found: TargetFound, window: Window, output: DataFrame, metadata: dict[str, str]
) -> Written:
    """MERGE the window's output into the target's rows of the A rows it can change, forward only."""
    to = current_target(inputs, found, output, metadata)
    target = read(inputs.spark, inputs.job.target)
    identity = inputs.identity
    bounds = read_bounds(window, *inputs.spine_reach)
    a_first, a_after = from_index(bounds.a_start, inputs.uom), from_index(bounds.a_end + 1, inputs.uom)
    a_rec = F.col(f"`{identity.a_rec}`")
    target_rows = target.where((a_rec >= F.lit(a_first)) & (a_rec < F.lit(a_after)))
    scanned = scan_stats(inputs.spark, target_rows)
    actions = plan_actions(output, target_rows, identity).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        planned = {row[ACTION]: int(row["count"]) for row in actions.groupBy(ACTION).count().collect()}
        ignored = planned.pop("ignore", 0)
        commit = merge_window(to, found, actions, identity, a_first, a_after) if planned else NO_COMMIT
    finally:
        actions.unpersist(blocking=True)
    return Written(TargetWrite.FORWARD_ONLY_MERGE, commit, scanned, too_late=ignored)


# A run's window of a job without the sliding join window: it moves the watermark.
FORWARD_ONLY = WriteMode("forward_only", write_forward_only, moves_watermark=True, forward=True, lays_out=False)
# A re-run of processed windows: the watermark stays where it is.
RERUN = WriteMode("rerun", write_forward_only, moves_watermark=False, forward=False, lays_out=False)
