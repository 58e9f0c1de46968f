"""The job's state read from its Delta logs with delta-rs: the watermark, the lock's holder, the remembered
settings and the latest runs, with the Python values pyspark would give. No Spark, no JVM.

LogUnreadable where delta-rs cannot read a state table; `store.read_state` turns that into a ConfigError.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from deltainc.fact_counts import LATEST_AVAILABLE, STATE_READ, asked
from deltainc.pipeline.delta.delta_log import (
    LogUnreadable,
    Row,
    column_types,
    instant,
    job_rows,
    open_table,
    require,
    spark_row,
)
from deltainc.pipeline.delta.table import open_handle
from deltainc.pipeline.job.field_types import absolute_location
from deltainc.pipeline.state.model import JobState, LockHolder, RunStatus, StatePaths, state_paths
from deltainc.pipeline.state.processes import decode
from deltainc.time_units import TimeUnit, whole_units_through

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from deltainc.pipeline.job.job_config import JobConfig
    from deltainc.pipeline.job.sections import SourceRef

__all__ = [
    "read_state_from_log",
    "read_runs_from_log",
    "read_state_and_runs_from_log",
    "watermark_from_log",
    "upstream_watermark",
    "latest_in_sources",
]


def _max_unit(location: str, job: str, column: str) -> int | None:
    """max(`column`) over the rows of `job` in the table at `location`, None if absent or all null."""
    table = open_table(location)
    if table is None:
        return None
    require(column_types(table, location), location, "job", column)
    units = [row[column] for row in job_rows(table, location, job, [column]) if row[column] is not None]
    return max(units) if units else None


def read_state_from_log(paths: StatePaths, job: str, read: RunRows | None = None) -> JobState:
    """`state.read_state` from the logs: the job's watermark, its lock's holder and the settings it was built with.
    Counted as the command's one read of its job's state (`fact_counts.STATE_READ`); another job's watermark is
    `watermark_from_log`'s.

    Watermark: the greatest `watermark_unit` of the job's run-log rows and of the 0.1 watermark table. The holder
    is `finished` once its run_id has a run-log row with `releases_lock` true. Settings: the JSON `job_settings`
    of the latest (by started_at) succeeded row that moved the watermark. A run log without `releases_lock` (0.1)
    moves no watermark and releases no lock; a lock table without `heartbeat_at` has no heartbeat. `read`: the
    job's run-log rows read already (`_run_rows`), so that the run log is scanned once.
    """
    asked(STATE_READ)
    return _state_from_log(paths, job, read)


def watermark_from_log(paths: StatePaths, job: str) -> int | None:
    """Another job's watermark (an upstream's, a downstream's), from its logs: not the command's own job's state,
    so not counted as its state read."""
    return _state_from_log(paths, job).watermark


def _state_from_log(paths: StatePaths, job: str, read: RunRows | None = None) -> JobState:
    held: Row | None = None
    locks = open_table(paths.locks)
    if locks is not None:
        lock_types = column_types(locks, paths.locks)
        require(lock_types, paths.locks, "job", "run_id", "owner", "acquired_at")
        optional_lock = ("heartbeat_at", "processes")
        lock_columns = [name for name in ("run_id", "owner", "acquired_at", *optional_lock) if name in lock_types]
        rows = job_rows(locks, paths.locks, job, lock_columns)
        held = spark_row(rows[0], lock_types) if rows else None
    watermark: int | None = None
    finished = False
    settings: dict[str, object] | None = None
    read = read or _run_rows(paths, job, ("run_id", "status", "started_at", "watermark_unit", "releases_lock",
                                          "job_settings"))  # fmt: skip
    if read is not None:
        run_types, rows = read[0], [dict(row) for row in read[1]]  # filled in below: the caller's rows stay
        require(run_types, paths.runs, "run_id", "status", "started_at")
        if "releases_lock" in run_types:
            require(run_types, paths.runs, "watermark_unit")
        for row in rows:
            if "releases_lock" not in run_types:  # a run log of deltainc 0.1: no watermark, no lock release
                row["watermark_unit"], row["releases_lock"] = None, False
            row.setdefault("job_settings", None)  # written before settings were remembered
        units = [row["watermark_unit"] for row in rows if row["watermark_unit"] is not None]
        watermark = max(units) if units else None
        holder_run = None if held is None else held["run_id"]
        finished = holder_run is not None and any(
            row["run_id"] == holder_run and row["releases_lock"] is True for row in rows
        )
        built = [
            row
            for row in rows
            if row["status"] == RunStatus.SUCCEEDED
            and row["watermark_unit"] is not None
            and row["job_settings"] is not None
            and row["started_at"] is not None
        ]
        if built:
            latest = max(built, key=lambda row: instant(row["started_at"]))
            settings = json.loads(latest["job_settings"])
    legacy = _max_unit(paths.legacy_watermarks, job, "watermark_unit")
    if legacy is not None:
        watermark = legacy if watermark is None else max(watermark, legacy)
    holder = None
    if held is not None:
        holder = LockHolder(
            run_id=held["run_id"],
            owner=held["owner"],
            acquired_at=held["acquired_at"],
            heartbeat_at=held.get("heartbeat_at"),
            finished=finished,
            processes=decode(held.get("processes")),
        )
    return JobState(watermark=watermark, holder=holder, settings=settings)


RunRows = tuple[dict[str, str], list[Row]]  # the run log's column types, and the job's rows with some of them


def _run_rows(paths: StatePaths, job: str, columns: Sequence[str] | None = None) -> RunRows | None:
    """The job's run-log rows with `columns` (those the run log has; None = all) and the run log's column types;
    None when no run log has committed yet."""
    runs = open_table(paths.runs)
    if runs is None:
        return None
    types = column_types(runs, paths.runs)
    require(types, paths.runs, "job")
    wanted = list(types) if columns is None else [name for name in columns if name in types]
    return types, job_rows(runs, paths.runs, job, wanted)


def read_state_and_runs_from_log(paths: StatePaths, job: str, limit: int) -> tuple[JobState, list[dict[str, object]]]:
    """`read_state_from_log` and `read_runs_from_log` from one scan of the run log (status, report, check)."""
    read = _run_rows(paths, job)
    return read_state_from_log(paths, job, read), read_runs_from_log(paths, job, limit, read)


def read_runs_from_log(paths: StatePaths, job: str, limit: int, read: RunRows | None = None) -> list[dict[str, object]]:
    """`[row.asDict() for row in state.read_runs(...)]` from the log: the job's latest `limit` runs, newest first.

    Every column of the run log, in its order, with pyspark's Python values (timestamps naive local time);
    ordered by started_at descending, rows without one last (Spark's order); no run log yet gives []. `read`: the
    job's rows with every column, read already (`_run_rows`).
    """
    if limit < 0:
        raise LogUnreadable(f"limit {limit}: Spark refuses a negative limit")
    read = read or _run_rows(paths, job)
    if read is None:
        return []
    types, rows = read
    require(types, paths.runs, "started_at")
    dated = sorted((row for row in rows if row["started_at"] is not None), key=lambda row: instant(row["started_at"]))
    ordered = [*reversed(dated), *(row for row in rows if row["started_at"] is None)]
    return [spark_row(row, types) for row in ordered[:limit]]


def upstream_watermark(ref: SourceRef, state_dir: Path, uom: TimeUnit | str | None = None) -> int | None:
    """The watermark of the job whose target `ref` reads (`job = "..."`): its final rows reach no further, though
    its target holds later open rows (and, after a stopped run, rows its next run recomputes). With `uom`, the
    reading job's unit, in it: a day job on an hour job reads up to the last day that watermark has passed."""
    root = ref.job_state or absolute_location(str(state_dir))
    watermark = watermark_from_log(state_paths(root), ref.job or "")
    if watermark is None or uom is None or ref.upstream is None:
        return watermark
    return whole_units_through(watermark, ref.upstream.join.time_uom, uom)


def latest_in_sources(job: JobConfig, state_dir: Path, spark: SparkSession | None = None) -> int | None:
    """The latest unit every source of `job` has (the min over its sources; None while one has none): each
    source's table handle answers (`Table.latest_unit`: an upstream job's watermark for another job's target, else
    the table's latest `inc_col`), from its Delta log (LogUnreadable or FileNotFoundError where it cannot answer),
    or with Spark reading the tables when `spark` is given. A source's `where` narrows the rows a window joins,
    not the units the source has.

    Example: ``latest_in_sources(job, settings.state_dir)``; ``latest_in_sources(job, settings.state_dir, spark)``.
    """
    uom = job.join.time_uom

    def watermark(ref: SourceRef) -> int | None:
        return upstream_watermark(ref, state_dir, uom)

    units = [
        open_handle(ref, role, spark).latest_unit(job.inc_col_of(role), uom, watermark, with_spark=spark is not None)
        for role, ref in job.sources
    ]
    asked(LATEST_AVAILABLE)  # once worked out: a log that cannot answer raised before, and Spark works it out
    return None if None in units else min(u for u in units if u is not None)
