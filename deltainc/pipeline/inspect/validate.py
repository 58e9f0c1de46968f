"""`validate`: a job checked against its sources without running it, from the Delta logs where they answer
and with Spark where they cannot: its settings, its join against the sources' schemas, the target's layout."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from pyspark.sql import SparkSession

from deltainc.errors import ConfigError, SchemaError
from deltainc.pipeline.controller.before_spark import check_from_logs
from deltainc.pipeline.controller.planned_target import not_run_yet
from deltainc.pipeline.controller.prepared_job import job_session, prepare_job
from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.snapshot import look, one_look
from deltainc.pipeline.delta.sources import shape_from_log, table_exists
from deltainc.pipeline.delta.table import open_handle
from deltainc.pipeline.inspect.status import status
from deltainc.pipeline.inspect.status_from_logs import status_from_log
from deltainc.pipeline.job.chain_suffixes import picked_suffixes
from deltainc.pipeline.job.job_config import JobConfig, load
from deltainc.pipeline.job.kinds.two_source import TwoSourceJoin, TwoSourcePlan, kind_of
from deltainc.pipeline.state import JobStatus, refusal
from deltainc.pipeline.target.layout import (
    TargetLayout,
    holds_open_rows_apart,
    layout_of,
    layout_warnings,
    read_layout,
)
from deltainc.settings import Settings
from deltainc.storage import commit_warnings
from deltainc.time_units import unit_label

__all__ = ["JobValidation", "validate_job", "validate_from_logs"]


@dataclass(frozen=True)
class JobValidation:
    """A valid job: where it stands, the RecDates its next window reads, whether its target exists, and
    warnings about the target's layout (an empty tuple when there is no target yet)."""

    job: JobConfig
    status: JobStatus
    next_reads: dict[str, tuple[int, int]] | None  # units each source is read in, by role; None: nothing pending
    target_exists: bool
    warnings: tuple[str, ...]
    joins: tuple[tuple[str, str], ...] = ()  # the sources and their joins as they fit: (label, text) lines
    # What the job was checked against besides its sources' tables: (label, text) lines, e.g. a source that is the
    # target of a job that has not run yet (checked against the columns its first run will write), and the
    # suffixes a job on another job's target picked (`chain_suffixes`).
    notes: tuple[tuple[str, str], ...] = ()

    def next_read_labels(self) -> dict[str, tuple[str, str]] | None:
        """`next_reads` as the first and last RecDate of each source: {'source_a': ('2025-02-27', ...), ...}."""
        if self.next_reads is None:
            return None
        uom = self.job.join.time_uom
        return {
            role: (unit_label(first, uom), unit_label(last, uom)) for role, (first, last) in self.next_reads.items()
        }


@one_look()
def validate_job(
    job: JobConfig | str | Path, spark: SparkSession | None = None, settings: Settings | None = None
) -> JobValidation:
    """Check the job against its sources (columns, types, keys) and its remembered settings, writing nothing;
    raises ConfigError, SchemaError or SettingsChangedError naming what does not fit. A source that is the target
    of a job that has not run yet is checked against the columns that job's first run will write
    (`planned_target`), so a chain is checked before any of it runs."""
    config, settings = load(job, settings)
    spark = job_session(spark, settings, config.on_s3)
    planned = [
        ("planned", f"{role}: the target of job {ref.job} does not exist yet; checked against the columns its "
         "first run will write")
        for role, ref in config.sources
        if not_run_yet(spark, ref)
    ]  # fmt: skip
    try:
        prepared = prepare_job(config, spark, settings, planned=True)  # the sources, the join, the output
    except (ConfigError, SchemaError) as exc:  # said with the sources that are not there yet
        if not planned:
            raise
        raise type(exc)("; ".join([str(exc), *(text for _, text in planned)])) from None
    state = status(config, spark=spark, settings=settings, runs=1)
    layout = read_layout(spark, config.target) if table_exists(spark, config.target) else None
    notes = (*planned, *_suffix_notes(config, prepared.join))
    return _validation(config, state, layout, settings, notes)


@one_look()
def validate_from_logs(job: JobConfig | str | Path, settings: Settings | None = None) -> JobValidation:
    """`validate_job` answered from the Delta logs alone, without starting Spark: the sources' schemas, the
    state and the target's layout. LogUnreadable when the logs cannot answer (a catalog table, a remote path, a
    `join_cond` of the join or of a feature source, or a source's `where`, which only Spark's analyzer resolves;
    a source named by `job = "..."` has one, `IsFinal`, so a job in a chain, whose upstream may not have run yet,
    is planned with Spark): then `validate_job` answers with Spark (`from_logs_else_spark`)."""
    config, settings = load(job, settings)
    conditions = (*kind_of(config).join_conds(), *(ref.where for _, ref in config.sources))
    if any(c is not None for c in conditions):
        raise LogUnreadable("a join_cond or a source's where is resolved by Spark's analyzer")
    handle = open_handle(config.target, "target")
    layout = handle.answer("the target's layout", _layout_from_log, _spark_answers, missing_ok=True, on_disk=True)
    plan = check_from_logs(config)  # raises what does not fit, naming the setting
    state = status_from_log(config, settings, runs=1)
    return _validation(config, state, layout, settings, _suffix_notes(config, plan))


def _suffix_notes(config: JobConfig, checked: object) -> tuple[tuple[str, str], ...]:
    """The line on the suffixes a two-source job on another job's target picked, from its checked join (a plan or
    a prepared join: both hold the engine's spec); none for a feature job or a job that sets them."""
    if not isinstance(checked, (TwoSourcePlan, TwoSourceJoin)):
        return ()
    text = picked_suffixes(config, checked.spec.settings)
    return () if text is None else (("suffixes", text),)


def _spark_answers(why: Exception) -> NoReturn:
    """The target's log cannot answer here (a catalog table, a table in S3): validate_job answers with Spark."""
    raise LogUnreadable(f"the target's layout is read with Spark: {why}") from why


def _layout_from_log(location: str) -> TargetLayout | None:
    """`read_layout` of the local table at `location` from its log; None when no table is there yet."""
    return layout_of(shape_from_log(location)) if look(location).found is not None else None


def _validation(
    config: JobConfig,
    state: JobStatus,
    layout: TargetLayout | None,
    settings: Settings,
    notes: tuple[tuple[str, str], ...] = (),
) -> JobValidation:
    """What validate says of a job that fits its sources: refused when its settings changed, else where it
    stands, what its next window reads, the existing target's layout warnings, and whether its commits are
    safe where the target lives (deltainc.storage.commit_warnings)."""
    if state.changed_settings:
        raise refusal(config, state.changed_settings, "validate")
    join, kind = config.join, kind_of(config)
    reads = None
    if state.pending is not None:
        upcoming = state.pending.next
        reads = kind.read_ranges(upcoming.start, upcoming.end)
    warnings: list[str] = []
    if layout is not None:
        target = config.target
        warnings = layout_warnings(
            layout, join.inc_col, join.time_uom, target.change_data_feed, config.name, target.deletion_vectors
        )
        warnings += _late_rows_of_an_earlier_release(config, layout)
    targets = (config.target.path, config.target.late_rows)
    warnings = [*warnings, *commit_warnings(targets, settings.spark.conf)]
    return JobValidation(config, state, reads, layout is not None, tuple(warnings), tuple(kind.described()), notes)


def _late_rows_of_an_earlier_release(config: JobConfig, layout: TargetLayout) -> list[str]:
    """The warning for a job that keeps too-late rows in a target of the layout before `IsFinal` (which `migrate`
    can bring up to date): an earlier release built it, and its too-late rows may follow that release's rule
    (pipeline/controller/migrate.py). No warning otherwise."""
    asked = config.target.partition_by  # None: the default layout, which holds the open rows apart
    migratable = asked is None or holds_open_rows_apart(asked)
    if config.target.late_rows is None or not config.join.horizon or not migratable:
        return []
    if holds_open_rows_apart(layout.partition_by):
        return []
    return [
        "target.late_rows: the target is in the layout of an earlier release, whose too-late rows were only the B "
        f"rows of A rows that had timed out; `deltainc migrate {config.name}` also recomputes them under the current "
        f"rule from start_date to the watermark (the rows `deltainc rerun {config.name} --start START_DATE` would "
        "write)"
    ]
