"""The target as a window finds it (issue 76, "each fact once"): whether it exists, its columns and partition
columns, whether it holds its open rows apart, and the output's new columns against it.

A window finds its target once, before anything of the window asks (`find_target`), and passes the value down to
every step that needs it: whether the write can count its rows, the output's check against the target's columns,
the layout the rows are written under, the write itself and the too-late search. It is found again only by the
next window, after this one's commit (the snapshot of the target's log is retaken after a commit:
`delta.snapshot.retake`). So a window that creates the target finds it absent, and the one after finds it there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql import SparkSession
from pyspark.sql import types as T

from deltainc.errors import ConfigError
from deltainc.fact_counts import TARGET_FOUND, asked
from deltainc.pipeline.delta.sources import table_exists, table_shape
from deltainc.pipeline.job.sections import TableRef
from deltainc.pipeline.target.layout import holds_open_rows_apart, new_columns

__all__ = ["TargetFound", "find_target"]


@dataclass(frozen=True)
class TargetFound:
    """The target as one window finds it before its commit.

    `schema` is None when the target does not exist yet; `partition_by` is then the job's layout, which the
    window's write creates it in (an existing target keeps its own, read from its Delta log). `open_rows_apart`
    says whether the target keeps its open rows in files of their own (`IsFinal` is a partition column), decided
    here alone (`layout.holds_open_rows_apart`).
    """

    label: str  # the target, for messages
    exists: bool
    schema: T.StructType | None
    partition_by: tuple[str, ...]
    open_rows_apart: bool

    def existing_schema(self) -> T.StructType:
        """The existing target's columns; a ConfigError naming the target when there is none yet."""
        if self.schema is None:
            raise ConfigError(f"target: no Delta table at {self.label}")
        return self.schema

    def new_columns(self, output: T.StructType, origins: Mapping[str, tuple[str, str]], evolution: str) -> list[str]:
        """The `output`'s columns the existing target lacks, checked as `layout.new_columns` checks them (a dropped
        or retyped column, or a new one `evolution` does not allow, is a SchemaError)."""
        return new_columns(self.existing_schema(), output, origins, self.label, evolution)


def find_target(spark: SparkSession, ref: TableRef, partition_by: Sequence[str]) -> TargetFound:
    """The target behind `ref` as the window finds it: its shape from the command's snapshot of its Delta log
    (`table_shape`: no Spark job where delta-rs reads it), or absent, to be created under `partition_by` (the
    job's layout). Counted as `TARGET_FOUND` (`fact_counts`).

    >>> find_target(spark, job.target, prepared.partition_by).open_rows_apart  # doctest: +SKIP
    True
    """
    asked(TARGET_FOUND)
    if not table_exists(spark, ref):
        layout = tuple(partition_by)
        return TargetFound(ref.label, False, None, layout, holds_open_rows_apart(layout))
    shape = table_shape(spark, ref, "target")
    return TargetFound(ref.label, True, shape.schema, shape.partition_by, holds_open_rows_apart(shape.partition_by))
