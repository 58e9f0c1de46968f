"""The columns a job's target will have before its first run, so that a chain of jobs is checked before any of them
has run (`deltainc validate` of a job whose source is another job's target that does not exist yet).

They are not written down by hand: the upstream's own planning runs on empty frames of its sources' schemas (read
from their Delta tables, or planned the same way where a source is the target of a job that has not run either),
its first window's output is taken as the engine builds it, and `IsFinal` is added where the target's layout holds
the open rows apart, as the first write does (`controller/commit.shaped`). What a run writes and what is planned here
come from the same code, so they cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from deltainc.pipeline.delta.sources import read_source, table_exists, where_applied
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds.two_source import kind_of
from deltainc.pipeline.job.sections import SourceRef
from deltainc.pipeline.target.layout import holds_open_rows_apart, target_partitioning, with_is_final
from deltainc.time_units import to_index

__all__ = ["not_run_yet", "planned_schema", "source_frames"]


def not_run_yet(spark: SparkSession, ref: SourceRef) -> bool:
    """Whether `ref` is the target of another job (`job = "..."`) that does not exist yet."""
    return ref.job is not None and ref.upstream is not None and not table_exists(spark, ref)


def source_frames(spark: SparkSession, job: JobConfig, planned: bool = False) -> dict[str, DataFrame]:
    """The rows of each of the job's sources by role, source_a first (`read_source`). With `planned`, a source that
    is the target of a job that has not run yet is an empty frame of the columns that job's first run will write
    (`planned_schema`), its `where` applied as to the table; without, such a source is refused as before.

    Example: ``source_frames(spark, load_job("jobs/down.toml"), planned=True)["source_a"].columns``.
    """
    frames: dict[str, DataFrame] = {}
    for role, ref in job.sources:
        if planned and not_run_yet(spark, ref):
            empty = spark.createDataFrame([], planned_schema(spark, ref.upstream))
            frames[role] = where_applied(empty, ref, role)
        else:
            frames[role] = read_source(spark, ref, role)
    return frames


def planned_schema(spark: SparkSession, job: JobConfig) -> T.StructType:
    """The schema `job`'s first run writes to its target: its kind's plan on its sources' schemas (a source that is
    the target of a job that has not run yet planned in turn), its first window's output, and `IsFinal` where the
    layout holds the open rows apart. Every column nullable, as Delta writes them. Raises what `validate` of
    `job` raises when its sources do not fit.

    Args:
        spark: the session whose analyzer builds the output (no Spark job runs: the frames are empty).
        job: the upstream job, as `load_job` read it.

    Example: ``planned_schema(spark, load_job("jobs/up.toml")).fieldNames()`` lists the target's columns.
    """
    frames = source_frames(spark, job, planned=True)
    schemas: Mapping[str, T.StructType] = {role: frame.schema for role, frame in frames.items()}
    first = to_index(job.start_date, job.join.time_uom)
    output = kind_of(job).plan(schemas).prepare(frames).join(first, first).output
    partition_by = target_partitioning(job.target.partition_by, job.join.inc_col, job.join.time_uom)
    if holds_open_rows_apart(partition_by):
        output = with_is_final(output)
    return T.StructType([T.StructField(f.name, f.dataType, nullable=True) for f in output.schema.fields])
