"""A source's rows of a window's units, read as the Parquet files its Delta log names (`window_files`), so that
Spark does not load the source's new snapshot state and filter its files inside every window's write.

Where the log cannot answer (a catalog table, Spark Connect or Spark 3.5, a table not partitioned by its DATE
`inc_col`, deletion vectors, column mapping, a NOT NULL column, which a Parquet read would make nullable), None:
the window reads the Delta table, pruned by Spark, as before. Said at info (`--verbose`).
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from deltainc.join.columns import source_filter
from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.delta_log_stats import source_location
from deltainc.pipeline.delta.snapshot import log_else
from deltainc.pipeline.delta.window_files import WindowFiles, window_files
from deltainc.pipeline.job.kinds.job_kind import WindowRows, whole_tables
from deltainc.pipeline.job.table_refs import SourceRef
from deltainc.spark_compat import session_kind

__all__ = ["window_rows", "read_files"]


def window_rows(
    spark: SparkSession, refs: Mapping[str, SourceRef], frames: Mapping[str, DataFrame], inc_col: str, time_uom: str
) -> WindowRows:
    """The job's `WindowRows`: for a role and units [first, last], that source's rows in those units' files (its
    `where` applied), or None where the window reads the Delta table (`frames[role]`).

    E.g. `window_rows(spark, dict(job.sources), frames, "RecDate", "day")("source_b", d - 12, d)`.
    """
    if not session_kind(spark).reads_parquet_as_delta:  # Connect's client may not see the server's files
        return whole_tables
    nullable = {role: _nullable(frame.schema) for role, frame in frames.items()}

    def rows(role: str, first: int, last: int) -> DataFrame | None:
        ref, frame = refs[role], frames[role]

        def from_log() -> DataFrame:
            if not nullable[role]:
                raise LogUnreadable(f"{role} has a NOT NULL column, which a read of its files makes nullable")
            files = window_files(source_location(ref, role), inc_col, time_uom, first, last)
            read = read_files(spark, frame.schema, files)
            read = read.where(source_filter(read, inc_col, time_uom, first, last))  # a file may reach past them
            return read if ref.where is None else read.where(ref.where)

        return log_else(f"{role}'s rows of units {first}..{last}", from_log, lambda _why: None)

    return rows


def read_files(spark: SparkSession, schema: T.StructType, files: WindowFiles) -> DataFrame:
    """The rows of `files` as Spark reads Parquet files of a table's folder: the partition columns' values from
    the folder names, the columns in `schema`'s order (a column a file lacks is NULL, as Delta reads it)."""
    if not files.paths:
        return spark.createDataFrame([], schema)
    read = spark.read.schema(schema).option("basePath", files.root).parquet(*files.paths)
    return read.select(*[F.col("`" + name.replace("`", "``") + "`") for name in schema.fieldNames()])


def _nullable(kind: T.DataType) -> bool:
    """Whether every field of `kind`, nested ones included, may be NULL."""
    if isinstance(kind, T.StructType):
        return all(field.nullable and _nullable(field.dataType) for field in kind.fields)
    if isinstance(kind, T.ArrayType):
        return kind.containsNull and _nullable(kind.elementType)
    if isinstance(kind, T.MapType):
        return kind.valueContainsNull and _nullable(kind.keyType) and _nullable(kind.valueType)
    return True
