"""The columns a job's target will have before its first run, so that a chain of jobs is checked before any of them
has run (`deltainc validate` of a job whose source is another job's target that does not exist yet).

They are not written down by hand: the upstream's own planning runs on empty frames of its sources' schemas (read
from their Delta tables, or planned the same way where a source is the target of a job that has not run either),
its first window's output is taken as the engine builds it, and `IsFinal` is added where the target's layout holds
the open rows apart, as the first write does (`controller/commit.shaped`). What a run writes and what is planned here
come from the same code, so they cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.sources import SourceFrames, read_source, table_exists, where_applied
from deltainc.pipeline.delta.table import open_handle, shape_from_log
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds.two_source import kind_of
from deltainc.pipeline.job.sections import SourceRef
from deltainc.pipeline.target.layout import holds_open_rows_apart, target_partitioning, with_is_final
from deltainc.time_units import to_index

__all__ = ["not_run_yet", "planned_schema", "source_frames"]


def not_run_yet(spark: SparkSession, ref: SourceRef) -> bool:
    """Whether `ref` is the target of another job (`job = "..."`) that does not exist yet."""
    return ref.job is not None and ref.upstream is not None and not table_exists(spark, ref)


def source_frames(spark: SparkSession, job: JobConfig, planned: bool = False) -> SourceFrames:
    """The rows of each of the job's sources by role, source_a first (`read_source`), each read by Spark when first
    asked (`SourceFrames`); its columns from its Delta log where that says what Spark reads (`_columns_from_log`),
    its `where` checked against them now, else from Spark's read, made now. With `planned`, a source that is the
    target of a job that has not run yet is an empty frame of the columns that job's first run will write
    (`planned_schema`), its `where` applied as to the table; without, such a source is refused as before.

    Example: ``source_frames(spark, load_job("jobs/down.toml"), planned=True)["source_a"].columns``.
    """
    schemas: dict[str, T.StructType] = {}
    reads: dict[str, Callable[[], DataFrame]] = {}
    made: dict[str, DataFrame] = {}
    for role, ref in job.sources:
        if planned and not_run_yet(spark, ref):
            empty = spark.createDataFrame([], planned_schema(spark, ref.upstream))
            made[role] = where_applied(empty, ref, role)
        elif (columns := _columns_from_log(spark, ref, role)) is not None:
            if ref.where is not None:  # a bad `where` is refused before any read
                where_applied(_no_rows(spark, columns), ref, role)
            schemas[role], reads[role] = columns, partial(read_source, spark, ref, role)
            continue
        else:
            made[role] = read_source(spark, ref, role)
        schemas[role], reads[role] = made[role].schema, partial(made.__getitem__, role)
    return SourceFrames(schemas, reads)


def _columns_from_log(spark: SparkSession, ref: SourceRef, role: str) -> T.StructType | None:
    """A source's columns from its Delta log where they are what Spark's read of the table gives: no column carries
    metadata (column mapping, a generated or identity column, a comment, which Spark's read may drop); else None."""

    def from_log(location: str) -> T.StructType:
        schema = shape_from_log(location).schema
        if _carries_metadata(schema):
            raise LogUnreadable(f"{role}: a column of its log carries metadata, which Spark's read may drop")
        return schema

    return open_handle(ref, role, spark).answer(f"{role}'s columns", from_log, lambda _why: None)


def _no_rows(spark: SparkSession, schema: T.StructType) -> DataFrame:
    """A frame of `schema`'s columns and no row, for Spark's analyzer alone (no Spark job, unlike an empty
    `createDataFrame`, which takes a second in a fresh process)."""
    from pyspark.sql import functions as F

    return spark.range(0).select(*[F.lit(None).cast(f.dataType).alias(f.name) for f in schema.fields])


def _carries_metadata(kind: T.DataType) -> bool:
    """Whether a field of `kind`, nested ones included, has metadata."""
    if isinstance(kind, T.StructType):
        return any(bool(f.metadata) or _carries_metadata(f.dataType) for f in kind.fields)
    if isinstance(kind, T.ArrayType):
        return _carries_metadata(kind.elementType)
    if isinstance(kind, T.MapType):
        return _carries_metadata(kind.keyType) or _carries_metadata(kind.valueType)
    return False


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
