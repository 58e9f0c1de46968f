"""The facts a command asks of its sources besides their rows: the latest RecDate in each and in all, the rows
with a NULL inc_col or join key, the files a window's scan reads. Each from the sources' Delta logs where they
answer exactly, else from Spark."""

from __future__ import annotations

import json
from functools import partial

from pyspark.sql import DataFrame

from deltainc.join.windows import Window
from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.delta_log_stats import (
    files_in_units,
    latest_in_both,
    latest_unit_from_log,
    null_count_from_log,
    null_keys_in_units,
    source_location,
)
from deltainc.pipeline.delta.snapshot import log_else
from deltainc.pipeline.delta.sources import count_null_keys
from deltainc.pipeline.delta.spark_counts import ScanStats, count_null_inc, latest_unit, scan_stats
from deltainc.pipeline.job.kinds import SourceScan
from deltainc.pipeline.job.kinds.job_kind import window_rows_of
from deltainc.pipeline.job.sections import SourceRef
from deltainc.pipeline.prepared_job import PreparedJob

__all__ = ["latest_available", "latest_labels", "null_inc", "null_keys", "scanned"]


def latest_available(prepared: PreparedJob) -> int | None:
    """The latest unit present in both sources: from their Delta logs where they answer exactly, else with Spark."""
    inc, uom = prepared.job.join.inc_col, prepared.uom

    def with_spark(_why: Exception) -> int | None:
        units = [latest_unit(frame, inc, uom) for frame in prepared.join.frames.values()]
        return None if None in units else min(u for u in units if u is not None)

    return log_else(
        f"{prepared.job.name}: the latest {inc} in the sources", lambda: latest_in_both(prepared.job), with_spark
    )


def latest_labels(prepared: PreparedJob) -> str | None:
    """Each source's latest RecDate from its Delta log, as JSON labels (`{"source_a": "2025-03-02", ...}`); None
    where a log cannot tell (a catalog table, deletion vectors): the report then shows no lag for the run."""
    inc, uom = prepared.job.join.inc_col, prepared.uom

    def from_logs() -> str:
        return json.dumps(
            {
                role: prepared.label(latest_unit_from_log(source_location(ref, role), inc, uom.value))
                for role, ref in prepared.job.sources
            }
        )

    return log_else("each source's latest RecDate", from_logs, lambda _why: None)


def null_inc(ref: SourceRef, role: str, frame: DataFrame, inc: str) -> int:
    """A source's rows with a NULL inc_col: from its Delta log's statistics where they are exact, else counted."""

    def from_log() -> int:
        if ref.where is not None:  # the log counts the whole table, the job joins only the rows `where` keeps
            raise LogUnreadable(f"{role}.where: only Spark applies it")
        return null_count_from_log(source_location(ref, role), inc)

    return log_else(f"{role}'s NULL {inc} count", from_log, lambda _why: count_null_inc(frame, inc))


def null_keys(prepared: PreparedJob, window: Window) -> tuple[int | None, int | None]:
    """The window's rows of A and of B (of the feature sources together) with a NULL join key, which never match
    (None when no source is joined on keys): from the Delta logs' statistics where they are exact (one key
    column, no `where`), the others in one Spark job over the window's rows (read from their files where the
    window reads them so, `sources.window_rows`)."""
    inc, uom, join = prepared.job.join.inc_col, prepared.uom, prepared.join
    refs, first, last = dict(prepared.job.sources), window.start, window.end
    sources = prepared.kind.key_columns()
    if not sources:
        return None, None

    def from_log(role: str, keys: tuple[str, ...]) -> int | None:
        if len(keys) != 1 or refs[role].where is not None:
            raise LogUnreadable(f"{role}: several keys, or a where, are counted by Spark")
        return null_keys_in_units(source_location(refs[role], role), keys[0], inc, uom, first, last)

    counts: dict[str, int | None] = {
        role: log_else(f"{window}'s NULL {keys} counts in {role}", partial(from_log, role, keys), lambda _why: None)
        for role, keys in sources
    }
    rest = [(role, keys) for role, keys in sources if counts[role] is None]
    frames = [(window_rows_of(join.rows, join.frames, role, first, last), keys) for role, keys in rest]
    counts |= dict(zip([role for role, _ in rest], count_null_keys(frames, inc, uom, first, last), strict=True))
    return counts["source_a"], sum(n or 0 for role, n in counts.items() if role != "source_a")


def scanned(prepared: PreparedJob, read: SourceScan) -> ScanStats:
    """The files and bytes a source's scan of units [first, last] reads: from its Delta log when the source is
    partitioned by its inc_col, else as Spark plans the scan."""
    ref = dict(prepared.job.sources)[read.role]

    def from_log() -> ScanStats:
        location = source_location(ref, read.role)
        return ScanStats(*files_in_units(location, prepared.job.join.inc_col, prepared.uom, *read.units))

    return log_else(f"{read.role}'s files read", from_log, lambda _why: scan_stats(prepared.spark, read.scan))
