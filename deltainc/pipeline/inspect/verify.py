"""Verify a job's target against a reload: recompute a range in one shot, write nothing, compare row for row.

The contract (docs/design.md#the-contract) says the target holds exactly the engine's output for
[start_date, watermark]. Rows before the watermark are final and depend only on the sources up to their own
RecDate, so a range [s, e] is checked with the engine's output for the window [s, e] alone (reading only what
that window reads); its waiting rows are those of e, so they are compared only when e is the watermark
(elsewhere the target's rows at e are final and the window's waiting rows are left out).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from deltainc.errors import ConfigError, SchemaError
from deltainc.join.options import WAITING_TYPES, JoinType
from deltainc.join.output_layout import JOIN_TYPE, RESERVED_PREFIX
from deltainc.join.windows import Window
from deltainc.pipeline.controller.plan import check_start
from deltainc.pipeline.controller.prepared_job import open_job
from deltainc.pipeline.delta.sources import read_table
from deltainc.pipeline.delta.spark_counts import scan_stats
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.target.forward_write import sql_literal
from deltainc.settings import Settings
from deltainc.time_units import from_index, parse_point

__all__ = ["Verification", "verify"]

_SIDE = f"{RESERVED_PREFIX}side"


@dataclass(frozen=True)
class Verification:
    """The target's rows in a range against the one-shot recompute of that range."""

    job: str
    window: Window  # the range checked (rendered as its label by the command line)
    watermark: str
    target_rows: int
    recomputed_rows: int
    only_in_target: dict[str, int]  # rows by JoinType name
    only_in_recompute: dict[str, int]
    earliest_drift: str | None  # the first output RecDate that differs: `rerun --start` it; None when equal
    sample_only_in_target: tuple[dict[str, Any], ...]
    sample_only_in_recompute: tuple[dict[str, Any], ...]
    files_read_a: int  # what the check read: the range's own partitions (or files) of A, B and the target
    files_read_b: int
    files_read_target: int

    @property
    def equal(self) -> bool:
        """No drift: the target's rows in the range are exactly the recompute's."""
        return not self.only_in_target and not self.only_in_recompute


def _name(code: int) -> str:
    """A JoinType's name where rows are counted (an unknown code, left behind the job's back, as a number)."""
    try:
        return JoinType(code).outcome
    except ValueError:
        return str(code)


def verify(
    job: JobConfig | str | Path,
    start: str | dt.date | None = None,
    end: str | dt.date | None = None,
    spark: SparkSession | None = None,
    settings: Settings | None = None,
    sample: int = 5,
) -> Verification:
    """Compare the target's rows with output RecDate in [start, end] (default: start_date .. the watermark) with
    the engine's output for that window under the job's settings; raises ConfigError on a range it cannot check."""
    prepared, state = open_job(job, spark, settings, "verify")  # other settings would differ by design
    spark, config, uom = prepared.spark, prepared.job, prepared.uom
    if state.watermark is None:
        raise ConfigError(f"verify: job {config.name!r} has not run yet; there is nothing to verify")
    first = prepared.start if start is None else parse_point(start, "--start", uom)
    last = state.watermark if end is None else parse_point(end, "--end", uom)
    check_start(prepared.job, first, "verify")
    if last > state.watermark:
        raise ConfigError(
            f"verify: --end {prepared.label(last)} is after the watermark {prepared.label(state.watermark)}; "
            "only processed dates can be verified"
        )
    window = Window(first, last, uom)
    joined = prepared.join.join(first, last)
    recomputed = joined.output
    if last < state.watermark:  # the target's rows at `last` are final; the window's waiting rows are not
        recomputed = recomputed.where(~F.col(JOIN_TYPE).isin(*[int(code) for code in WAITING_TYPES]))
    target = read_table(spark, config.target, "target")
    missing = [c for c in recomputed.columns if c not in target.columns]
    if missing:
        raise SchemaError(f"target: {config.target.label} lacks the join output's columns {missing}")
    rec = prepared.rec
    rec_type = target.schema[rec].dataType
    low, high = (sql_literal(from_index(unit, uom), rec_type) for unit in (first, last))
    in_range = target.where(f"`{rec}` >= {low} AND `{rec}` <= {high}")  # literal bounds: Delta prunes the rest
    held = in_range.select(*[F.col(f"`{c}`") for c in recomputed.columns])
    recomputed = recomputed.persist(StorageLevel.MEMORY_AND_DISK)  # the join runs once for both sides and the count
    try:
        only_target = held.exceptAll(recomputed).withColumn(_SIDE, F.lit("target"))
        only_recompute = recomputed.exceptAll(held).withColumn(_SIDE, F.lit("recompute"))
        differences = only_target.unionByName(only_recompute).cache()
        try:
            grouped = differences.groupBy(_SIDE, JOIN_TYPE).agg(
                F.count(F.lit(1)).alias("count"), F.min(F.col(f"`{rec}`")).cast("string").alias("first")
            )
            groups = grouped.collect()
            counts = {(r[_SIDE], _name(int(r[JOIN_TYPE]))): int(r["count"]) for r in groups}
            # The earliest output RecDate that differs, on either side: a rerun from it makes the target a reload.
            firsts = [parse_point(r["first"], "RecDate", uom) for r in groups if r["first"] is not None]
            samples = {
                side: tuple(
                    r.asDict() for r in differences.where(F.col(_SIDE) == side).drop(_SIDE).limit(sample).collect()
                )
                for side in ("target", "recompute")
            }
        finally:
            differences.unpersist()
        recomputed_rows = recomputed.count()
    finally:
        recomputed.unpersist()
    return Verification(
        job=config.name,
        window=window,
        watermark=prepared.label(state.watermark) or "",
        target_rows=held.count(),
        recomputed_rows=recomputed_rows,
        only_in_target={name: n for (side, name), n in sorted(counts.items()) if side == "target"},
        only_in_recompute={name: n for (side, name), n in sorted(counts.items()) if side == "recompute"},
        earliest_drift=prepared.label(min(firsts)) if firsts else None,
        sample_only_in_target=samples["target"],
        sample_only_in_recompute=samples["recompute"],
        files_read_a=scan_stats(spark, joined.scans[0].scan).files,
        files_read_b=sum(scan_stats(spark, read.scan).files for read in joined.scans[1:]),
        files_read_target=scan_stats(spark, in_range).files,
    )
