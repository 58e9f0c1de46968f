"""Too-late rows an earlier release wrote, brought onto the current rule by `deltainc migrate`
(docs/design.md#the-b-side-and-too-late-rows).

An earlier release counted as too late only the B rows of A rows that had timed out; the current rule also
counts a B row arriving after the window of an A row that other B rows matched (a second parcel). A job run on
by this release follows the current rule from its next window, but the windows the earlier release ran keep
their rows until they are run again. Recomputing them needs no rerun: the target holds every final A row, so
one search over [start_date, watermark] gives the rows a `rerun --start start_date` would write, and those
replace the table's rows of those days in one commit when they differ (so a second migrate writes nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pyspark import StorageLevel
from pyspark.sql import DataFrame

from deltainc.join.windows import Window, from_index, to_index
from deltainc.pipeline.delta.sql import read, table_exists
from deltainc.pipeline.prepared_job import PreparedJob
from deltainc.pipeline.target.too_late import too_late_rows
from deltainc.pipeline.window.too_late_writes import late_rows_slice, replace_late_rows, search_a_rows

__all__ = ["LateRowsRecompute", "current_late_rows", "recompute_late_rows"]


@dataclass(frozen=True)
class LateRowsRecompute:
    """What `migrate` did to `target.late_rows`: the days it recomputed (first and last, as labels), the rows the
    current rule added and removed there, and the commit (None: the table held those rows already)."""

    job: str
    table: str
    first: str
    last: str
    added: int
    removed: int
    version: int | None

    @property
    def message(self) -> str:
        """One line for `deltainc migrate`: what changed and what a rerun would have done."""
        days = f"{self.first} to {self.last}"
        if self.version is None:
            return f"{self.job}: the too-late rows ({self.table}) of {days} follow the current rule; nothing written"
        return (
            f"{self.job}: recomputed the too-late rows ({self.table}) of {days} under the current rule (a B row "
            f"arriving after its A row's sliding join window closed, whether that A row timed out or was matched): "
            f"{self.added} added, {self.removed} removed in version {self.version}, the rows "
            f"`deltainc rerun {self.job} --start {self.first}` would write; the run log keeps those windows' "
            "rows_too_late as they were counted"
        )


def current_late_rows(prepared: PreparedJob, window: Window) -> DataFrame | None:
    """The too-late rows of every B row dated in `window` under the current rule, one row per (A row, B row), as
    a window's search gives them: the A rows the target published up to the window's end (source_a where the
    target cannot answer). None when the job does not look for too-late rows or has no target yet.

    Parameters: `prepared`, the job; `window`, the units of the B rows. Example:
    `current_late_rows(prepared, Window(to_index(job.start_date, uom), watermark, uom))`.
    """
    job, search = prepared.job, prepared.join.late_search
    if search is None or not table_exists(prepared.spark, job.target):
        return None
    target = read(prepared.spark, job.target)
    a_rows = search_a_rows(prepared, search, target, None, window.start - search.horizon, window.end + 1)
    if a_rows is None:
        return None
    spec = replace(search.spec, start=window.start, end=window.end)
    identity, keys = prepared.identity, job.target
    return too_late_rows(a_rows, search.rows, spec, identity, keys.keys, keys.b_keys, search.horizon)


def recompute_late_rows(
    prepared: PreparedJob, watermark: int | None, metadata: dict[str, str]
) -> LateRowsRecompute | None:
    """Replace the rows of `target.late_rows` from the job's start_date to its `watermark` (a unit index) by
    those of the current rule, in one commit, when they differ; the caller holds the job's lock.

    Parameters: `prepared`, the job; `watermark`, its state's; `metadata`, the commit's userMetadata.
    Returns None when the job keeps no too-late rows, or has run no window yet. Example:
    `recompute_late_rows(prepared, state.watermark, {"job": "trx", "command": "migrate"}).added`.
    """
    job = prepared.job
    ref = job.target.late_rows_ref
    if ref is None or watermark is None:
        return None
    window = Window(to_index(job.start_date, prepared.uom), watermark, prepared.uom)
    rows = current_late_rows(prepared, window)
    if rows is None:
        return None
    rows = rows.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        spark = prepared.spark
        kept = spark.createDataFrame([], rows.schema)
        if table_exists(spark, ref):
            condition = late_rows_slice(prepared, window, rows.schema[prepared.rec].dataType)
            kept = read(spark, ref).where(condition).select(*rows.columns)
        added, removed = rows.exceptAll(kept).count(), kept.exceptAll(rows).count()
        version = replace_late_rows(prepared, window, rows, metadata) if added or removed else None
    finally:
        rows.unpersist()
    labels = [from_index(unit, prepared.uom).isoformat() for unit in (window.start, window.end)]
    return LateRowsRecompute(job.name, ref.label, labels[0], labels[1], added, removed, version)
