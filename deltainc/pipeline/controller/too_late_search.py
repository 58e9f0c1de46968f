"""A window's too-late B rows (docs/design.md#the-b-side-and-too-late-rows): counted beside the window's write,
kept in `target.late_rows` after the target's commit.

"Too late" is defined against what the job published: the A rows come from the target's final rows before the
window (output RecDate < s, which the window's own write never changes) plus the window's own final rows, so the
result is the same whether an A row's final row was written by an earlier window or by this one, and whether a
crashed attempt of this window already committed its rows (those dated >= s are not read). The search starts
once the window's output is computed and runs in a second thread beside the write; its rows are written (when
the job keeps them) only after the window's own commit, under the same lock check.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql.types import DataType

from deltainc.errors import ConfigError, InternalError
from deltainc.join.join_spec import JoinSpec, resolve_join_cond
from deltainc.join.windows import Window
from deltainc.pipeline.controller.prepared_job import PreparedJob
from deltainc.pipeline.controller.too_late_from_logs import late_inputs_from_logs
from deltainc.pipeline.delta.sources import read, table_exists
from deltainc.pipeline.job.kinds import LateSearch
from deltainc.pipeline.target.forward_write import replace_where, sql_literal
from deltainc.pipeline.target.found import TargetFound
from deltainc.pipeline.target.layout import default_partitioning, ensure_target, lay_out
from deltainc.pipeline.target.too_late import a_side, too_late_rows, window_a_rows
from deltainc.pipeline.target.write_mode import Destination, WriteMode
from deltainc.spark_compat import labelled_jobs
from deltainc.time_units import from_index

__all__ = [
    "LateRows",
    "searches_output",
    "count_too_late",
    "search_too_late",
    "count_written_too_late",
    "search_written_too_late",
    "too_late_found",
    "settled",
    "keep_too_late",
    "create_late_rows_table",
    "search_a_rows",
    "replace_late_rows",
    "late_rows_slice",
]

log = logging.getLogger("deltainc")
_told: set[tuple[str, str]] = set()  # (job, why) of the fallbacks to source_a already logged by this process


@dataclass(frozen=True)
class LateRows:
    """A window's too-late B rows once counted: how many, and the rows themselves (persisted) when the job keeps
    them in `target.late_rows`."""

    count: int
    rows: DataFrame | None


def searches_output(prepared: PreparedJob, window: Window) -> bool:
    """Whether the window's too-late search needs the window's own output: its final rows are A rows of its too-late
    B rows only when the window spans more than one unit (a B row of unit u is too late for A rows dated before
    u - mw, and a window's output holds A rows dated s - mw or later)."""
    return prepared.join.late_search is not None and window.end > window.start


def count_too_late(
    prepared: PreparedJob, found: TargetFound, window: Window, mode: WriteMode, output: DataFrame | None
) -> LateRows | None:
    """Count the window's too-late B rows, given the target as the window `found` it (before its commit) and its
    `output` (persisted, with the target's columns; None where `searches_output` says the search does without);
    None when the job does not look for them (`late_horizon = 0`, asof and feature jobs:
    `PreparedJoin.late_search`)."""
    job, search = prepared.job, prepared.join.late_search
    if search is None:
        return None
    spec = replace(search.spec, start=window.start, end=window.end)
    logged = None if output is not None or mode.replaces_columns else late_inputs_from_logs(prepared, search, window)
    if logged is not None:
        if logged.empty and job.target.late_rows_ref is None:  # no key met: nothing is too late, no Spark job
            return LateRows(0, None)
        first, identity = window.start - search.horizon, [*job.target.keys, job.inc_col_of("source_a")]
        a_rows: DataFrame | None = window_a_rows(
            logged.target_rows, None, logged.columns, identity, prepared.rec, prepared.uom, first, window.start
        )
        b_rows = logged.b_rows
    else:
        a_rows, b_rows = _a_rows(prepared, found, search, window, mode, output), search.rows
    return _late_rows(prepared, search, spec, a_rows, b_rows)


def count_written_too_late(prepared: PreparedJob, window: Window) -> LateRows | None:
    """`count_too_late` of a window once its commit is done, from the target as written: its final rows dated
    in [s - horizon, e] are those the target held before the window (dated before s, which the write never
    changes) and the window's own, so a window that spans several units searches without keeping its output.
    None when the job does not look for them."""
    search = prepared.join.late_search
    if search is None:
        return None
    spec = replace(search.spec, start=window.start, end=window.end)
    written = read(prepared.spark, prepared.job.target)
    a_rows = search_a_rows(prepared, search, written, None, window.start - search.horizon, window.end + 1)
    return _late_rows(prepared, search, spec, a_rows, search.rows)


def _late_rows(
    prepared: PreparedJob, search: LateSearch, spec: JoinSpec, a_rows: DataFrame | None, b_rows: DataFrame
) -> LateRows:
    """The too-late B rows of `b_rows` for the A rows `a_rows`, counted (and persisted when the job keeps them)."""
    job = prepared.job
    if a_rows is None:  # nothing published: no A row, so no too-late B row
        return LateRows(0, None)
    rows = too_late_rows(a_rows, b_rows, spec, prepared.identity, job.target.keys, job.target.b_keys,
                         search.horizon)  # fmt: skip
    if job.target.late_rows_ref is None:
        return LateRows(rows.count(), None)
    rows = rows.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        return LateRows(rows.count(), rows)
    except BaseException:
        rows.unpersist(blocking=True)
        raise


def _a_rows(
    prepared: PreparedJob,
    found: TargetFound,
    search: LateSearch,
    window: Window,
    mode: WriteMode,
    output: DataFrame | None,
) -> DataFrame | None:
    """The A rows the window's too-late search joins: the published ones (the target's final rows dated in
    [s - horizon, s - 1], and the window's own `output`'s when given; a rebuild's target is the window's output
    alone). None when the window `found` no target and there is no output."""
    job = prepared.job
    earlier = None
    if not mode.replaces_columns and found.exists:
        earlier = read(prepared.spark, job.target)
    return search_a_rows(prepared, search, earlier, output, window.start - search.horizon, window.start)


def search_a_rows(
    prepared: PreparedJob,
    search: LateSearch,
    earlier: DataFrame | None,
    output: DataFrame | None,
    first: int,
    start: int,
) -> DataFrame | None:
    """The A rows a too-late search joins, one per A row in the source's names: the final rows of `earlier` (the
    target; None: none) dated in units [first, start - 1] and those of `output` (None: none), as `window_a_rows`
    takes them; source_a itself where the target cannot answer, which is logged once per job. None when there
    is neither `earlier` nor `output`. E.g. `search_a_rows(prepared, search, target, None, s - horizon, e + 1)`
    gives the A rows of every B row of [s, e] from the target alone."""
    job = prepared.job
    inc, keys = job.inc_col_of("source_a"), job.target.keys
    if output is None:
        if earlier is None:
            return None
        columns = earlier.columns
    else:
        columns = [c for c in output.columns if earlier is None or c in earlier.columns]
    side = a_side(job.outcome_kind, search.spec.layout, columns, [*job.join.join_cols, *keys, inc])
    why = side.why
    if side.from_target:
        rows = window_a_rows(earlier, output, side.columns, [*keys, inc], prepared.rec, prepared.uom, first, start)
        why = _unresolved_join_cond(search, rows)
        if why is None:
            return rows
    if (job.name, str(why)) not in _told:
        _told.add((job.name, str(why)))
        log.warning("%s: too-late rows are searched in source_a, not in the target: %s", job.name, why)
    return prepared.join.frames["source_a"]


def _unresolved_join_cond(search: LateSearch, rows: DataFrame) -> str | None:
    """Why the job's join_cond cannot be evaluated on the A rows taken from the target, or None if it can (or
    there is none). Analysis only, no Spark job."""
    spec = search.spec
    if spec.join_cond is None:
        return None
    try:
        resolve_join_cond(rows, search.rows, spec.join_cond, spec.settings)
    except ConfigError:
        return (
            f"join_cond uses A columns the target does not hold (it holds {', '.join(rows.columns)}); "
            "add them to join.output_select to search the target"
        )
    return None


def search_too_late(
    pool: ThreadPoolExecutor,
    prepared: PreparedJob,
    found: TargetFound,
    window: Window,
    mode: WriteMode,
    output: DataFrame | None,
) -> Future[LateRows | None]:
    """`count_too_late` started in `pool`'s thread, to run beside the window's write; its Spark jobs are labelled
    as the search's (group `deltainc-too-late`) in Spark's UI."""

    return _labelled(pool, prepared, window, lambda: count_too_late(prepared, found, window, mode, output))


def search_written_too_late(pool: ThreadPoolExecutor, prepared: PreparedJob, window: Window) -> Future[LateRows | None]:
    """`count_written_too_late` in `pool`'s thread, once the window's commit is done; labelled as the search's."""
    return _labelled(pool, prepared, window, lambda: count_written_too_late(prepared, window))


def _labelled(
    pool: ThreadPoolExecutor, prepared: PreparedJob, window: Window, count: Callable[[], LateRows | None]
) -> Future[LateRows | None]:
    """`count` started in `pool`'s thread, its Spark jobs labelled as the search's (group `deltainc-too-late`)."""

    def search() -> LateRows | None:
        with labelled_jobs(prepared.spark, "deltainc-too-late", f"{prepared.job.name} {window}: the too-late search"):
            return count()

    return pool.submit(search)


def too_late_found(search: Future[LateRows | None]) -> LateRows | None:
    """Wait for the search's count (its error, if it failed, is raised here, in the window's thread)."""
    return search.result()


def settled(search: Future[LateRows | None] | None) -> LateRows | None:
    """The search's rows once it ended, whatever the window's fate; None when it failed or never started."""
    if search is None or search.cancelled() or search.exception() is not None:
        return None
    return search.result()


def create_late_rows_table(prepared: PreparedJob, window: Window) -> bool:
    """Create the job's `target.late_rows` table, empty, with the columns and layout its rows get, unless it
    exists; True if created. Called as the target is created, so a reader of the too-late rows finds the table
    before the first too-late row arrives. The columns are those `too_late_rows` gives over the sources (analysis
    only, no Spark job); an A column keeps its type in the target, so they are the columns of the rows kept later.
    Without deletion vectors: a window's write replaces whole days (a day job's partitions, an hour job's files of
    that window), and a rerun that cuts a file rewrites it, so delta-rs' pyarrow readers can read the table.
    """
    ref, search = prepared.job.target.late_rows_ref, prepared.join.late_search
    if ref is None or search is None or table_exists(prepared.spark, ref):
        return False
    target = prepared.job.target
    spec = replace(search.spec, start=window.start, end=window.end)
    rows = too_late_rows(prepared.join.frames["source_a"], search.rows, spec, prepared.identity, target.keys,
                         target.b_keys, search.horizon)  # fmt: skip
    partitioning = default_partitioning(None, prepared.rec, prepared.uom)
    return ensure_target(prepared.spark, ref, rows.schema, partitioning, deletion_vectors=False)


def keep_too_late(
    prepared: PreparedJob, window: Window, mode: WriteMode, late: LateRows, metadata: dict[str, str]
) -> None:
    """With `target.late_rows`, replace the window's slice of that table by its too-late rows (idempotent, like
    the target); a forward window with none has nothing to replace."""
    ref = prepared.job.target.late_rows_ref
    if ref is None or late.rows is None or not (late.count or not mode.forward):
        return
    replace_late_rows(prepared, window, late.rows, metadata)


def replace_late_rows(prepared: PreparedJob, window: Window, rows: DataFrame, metadata: dict[str, str]) -> int | None:
    """Replace the rows of `target.late_rows` dated in `window` by `rows` in one commit (the table is created
    when missing), and give the commit's version. E.g. `replace_late_rows(prepared, Window(s, e), rows, meta)`."""
    ref = prepared.job.target.late_rows_ref
    if ref is None:
        raise InternalError(
            f"{prepared.job.name}: replace_late_rows on a job that keeps no too-late rows (target.late_rows)"
        )
    rec = prepared.rec
    partitioning = default_partitioning(None, rec, prepared.uom)
    ensure_target(prepared.spark, ref, rows.schema, partitioning, deletion_vectors=False)
    condition = late_rows_slice(prepared, window, rows.schema[rec].dataType)
    destination = Destination(prepared.spark, ref, metadata)
    return replace_where(destination, lay_out(rows, partitioning, rec), condition).version


def late_rows_slice(prepared: PreparedJob, window: Window, rec_type: DataType) -> str:
    """The SQL condition of the too-late rows dated in `window`, with literals typed like their RecDate column
    `rec_type` (so Delta prunes), e.g. "`RecDate` >= DATE'2025-03-01' AND `RecDate` <= DATE'2025-03-04'"."""
    first, last = (sql_literal(from_index(unit, prepared.uom), rec_type) for unit in (window.start, window.end))
    return f"`{prepared.rec}` >= {first} AND `{prepared.rec}` <= {last}"
