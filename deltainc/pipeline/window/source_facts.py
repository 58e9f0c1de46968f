"""The facts a command asks of its sources besides their rows: the latest RecDate in each and in all, the rows
with a NULL inc_col or join key, the files a window's scan reads. Each from the sources' Delta logs where they
answer exactly, else from Spark."""

from __future__ import annotations

import json

from pyspark.sql import DataFrame

from deltainc.join.windows import Window
from deltainc.pipeline.delta.delta_log import LogUnreadable, asking_spark
from deltainc.pipeline.delta.delta_log_stats import (
    files_in_units,
    latest_unit_from_log,
    null_count_from_log,
    null_keys_in_units,
    source_location,
)
from deltainc.pipeline.delta.sources import ScanStats, count_null_inc, count_null_keys, latest_unit, scan_stats
from deltainc.pipeline.from_delta_logs.status import latest_in_both
from deltainc.pipeline.job.kinds import SourceScan
from deltainc.pipeline.job.table_refs import SourceRef
from deltainc.pipeline.prepared_job import PreparedJob

__all__ = ["latest_available", "latest_labels", "null_inc", "null_keys", "scanned"]


def latest_available(prepared: PreparedJob) -> int | None:
    """The latest unit present in both sources: from their Delta logs where they answer exactly, else with Spark."""
    try:
        return latest_in_both(prepared.job)
    except (LogUnreadable, FileNotFoundError) as exc:
        asking_spark(f"{prepared.job.name}: the latest {prepared.job.join.inc_col} in the sources", exc)
    inc, uom = prepared.job.join.inc_col, prepared.uom
    units = [latest_unit(frame, inc, uom) for frame in prepared.join.frames.values()]
    return None if None in units else min(u for u in units if u is not None)


def latest_labels(prepared: PreparedJob) -> str | None:
    """Each source's latest RecDate from its Delta log, as JSON labels (`{"source_a": "2025-03-02", ...}`); None
    where a log cannot tell (a catalog table, deletion vectors): the report then shows no lag for the run."""
    inc, uom, latest = prepared.job.join.inc_col, prepared.uom, {}
    for role, ref in prepared.job.sources:
        try:
            latest[role] = prepared.label(latest_unit_from_log(source_location(ref, role), inc, uom.value))
        except (LogUnreadable, FileNotFoundError):
            return None
    return json.dumps(latest)


def null_inc(ref: SourceRef, role: str, frame: DataFrame, inc: str) -> int:
    """A source's rows with a NULL inc_col: from its Delta log's statistics where they are exact, else counted."""
    if ref.where is not None:  # the log counts the whole table, the job joins only the rows `where` keeps
        return count_null_inc(frame, inc)
    try:
        return null_count_from_log(source_location(ref, role), inc)
    except (LogUnreadable, FileNotFoundError) as exc:
        asking_spark(f"{role}'s NULL {inc} count", exc)
        return count_null_inc(frame, inc)


def _key_sources(prepared: PreparedJob) -> list[tuple[str, SourceRef, DataFrame, tuple[str, ...]]]:
    """Each source with the join keys its rows need to match (role, table, rows, keys): A with every key a source
    joins it on, then B or each feature source joined on keys; empty when no source is joined on keys."""
    refs, frames = dict(prepared.job.sources), prepared.join.frames
    return [(role, refs[role], frames[role], keys) for role, keys in prepared.kind.key_columns()]


def null_keys(prepared: PreparedJob, window: Window) -> tuple[int | None, int | None]:
    """The window's rows of A and of B (of the feature sources together) with a NULL join key, which never match
    (None when no source is joined on keys): from the Delta logs' statistics where they are exact (one key
    column, no `where`), the others in one Spark job."""
    inc, uom = prepared.job.join.inc_col, prepared.uom
    sources = _key_sources(prepared)
    if not sources:
        return None, None
    counts: dict[str, int] = {}
    for role, ref, _, keys in sources:
        if len(keys) == 1 and ref.where is None:
            try:
                location = source_location(ref, role)
                counts[role] = null_keys_in_units(location, keys[0], inc, uom, window.start, window.end)
            except (LogUnreadable, FileNotFoundError) as exc:
                asking_spark(f"{window}'s NULL {keys[0]} counts in {role}", exc)
    rest = [(role, df, keys) for role, _, df, keys in sources if role not in counts]
    counted = count_null_keys([(df, keys) for _, df, keys in rest], inc, uom, window.start, window.end)
    counts |= {role: n for (role, _, _), n in zip(rest, counted, strict=True)}
    return counts["source_a"], sum(n for role, n in counts.items() if role != "source_a")


def scanned(prepared: PreparedJob, read: SourceScan) -> ScanStats:
    """The files and bytes a source's scan of units [first, last] reads: from its Delta log when the source is
    partitioned by its inc_col, else as Spark plans the scan."""
    ref = dict(prepared.job.sources)[read.role]
    try:
        location = source_location(ref, read.role)
        files, size = files_in_units(location, prepared.job.join.inc_col, prepared.uom, *read.units)
    except (LogUnreadable, FileNotFoundError) as exc:
        asking_spark(f"{read.role}'s files read", exc)
        return scan_stats(prepared.spark, read.scan)
    return ScanStats(files, size)
