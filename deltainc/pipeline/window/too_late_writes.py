"""A window's too-late B rows (docs/design.md#the-b-side-and-too-late-rows): counted beside the window's join and
write, kept in `target.late_rows` after the target's commit.

The search reads only the sources, so it runs in a second thread while the window joins and writes: on a small
window both are mostly Spark's per-job latency, which overlaps. Its rows are written (when the job keeps them)
only after the window's own commit, under the same lock check.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace

from pyspark import StorageLevel
from pyspark.sql import DataFrame

from deltainc.join.windows import Window, from_index
from deltainc.pipeline.prepared_job import PreparedJob
from deltainc.pipeline.target.layout import default_partitioning, ensure_target, lay_out
from deltainc.pipeline.target.slice_writer import Destination, replace_where, sql_literal
from deltainc.pipeline.target.too_late import too_late_rows
from deltainc.pipeline.target.write_mode import WriteMode

__all__ = ["LateRows", "count_too_late", "search_too_late", "too_late_found", "settled", "keep_too_late"]


@dataclass(frozen=True)
class LateRows:
    """A window's too-late B rows once counted: how many, and the rows themselves (persisted) when the job keeps
    them in `target.late_rows`."""

    count: int
    rows: DataFrame | None


def count_too_late(prepared: PreparedJob, window: Window) -> LateRows | None:
    """Count the window's too-late B rows; None when the job does not look for them (`late_horizon = 0`)."""
    job = prepared.job
    horizon = job.join.horizon
    if horizon == 0 or prepared.spec is None or prepared.df_b is None:  # not looked for, or a feature job
        return None
    spec = replace(prepared.spec, start=window.start, end=window.end)
    rows = too_late_rows(
        prepared.df_a, prepared.df_b, spec, prepared.identity, job.target.keys, job.target.b_keys, horizon
    )
    if job.target.late_rows_ref is None:
        return LateRows(rows.count(), None)
    rows = rows.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        return LateRows(rows.count(), rows)
    except BaseException:
        rows.unpersist()
        raise


def search_too_late(pool: ThreadPoolExecutor, prepared: PreparedJob, window: Window) -> Future[LateRows | None]:
    """`count_too_late` started in `pool`'s thread, to run beside the window's join and write."""
    return pool.submit(count_too_late, prepared, window)


def too_late_found(search: Future[LateRows | None]) -> LateRows | None:
    """Wait for the search's count (its error, if it failed, is raised here, in the window's thread)."""
    return search.result()


def settled(search: Future[LateRows | None] | None) -> LateRows | None:
    """The search's rows once it ended, whatever the window's fate; None when it failed or never started."""
    if search is None or search.cancelled() or search.exception() is not None:
        return None
    return search.result()


def keep_too_late(
    prepared: PreparedJob, window: Window, mode: WriteMode, late: LateRows, metadata: dict[str, str]
) -> None:
    """With `target.late_rows`, replace the window's slice of that table by its too-late rows (idempotent, like
    the target); a forward window with none has nothing to replace."""
    ref = prepared.job.target.late_rows_ref
    if ref is None or late.rows is None or not (late.count or not mode.forward):
        return
    rows = late.rows
    rec = prepared.rec
    partitioning = default_partitioning(None, rec, prepared.uom)
    ensure_target(prepared.spark, ref, rows.schema, partitioning, deletion_vectors=True)
    rec_type = rows.schema[rec].dataType
    first, last = (sql_literal(from_index(unit, prepared.uom), rec_type) for unit in (window.start, window.end))
    condition = f"`{rec}` >= {first} AND `{rec}` <= {last}"
    replace_where(Destination(prepared.spark, ref, metadata), lay_out(rows, partitioning, rec), condition)
