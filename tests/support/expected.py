"""What the contract says a job's target must hold (docs/design.md#the-contract): the engine's output over the
whole history as one fresh `inc_join` call, and the comparison of a target with it. Shared by the pipeline tests
of every kind of job (left, full_outer, as-of; local, Connect, a standalone cluster, the Spark 3.5 tables)."""

from __future__ import annotations

import datetime as dt

from chispa import assert_df_equality
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deltainc import inc_join
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds.two_source import plan_join


def engine_output(spark: SparkSession, job: JobConfig, end: dt.date) -> DataFrame:
    """`inc_join` over [start_date, end] with the job's settings (the B side waiting, as-of ties broken by the
    b_keys) and the target's columns. Computed once and held (a local checkpoint): a test compares it with the
    targets of several schedules."""
    a, b = (spark.read.format("delta").load(ref.path) for ref in (job.source_a, job.source_b))
    spec, _ = plan_join(job, a.schema, b.schema)  # the output columns the job's target takes
    settings = job.join.engine_settings(job.target.b_keys).model_copy(
        update={name: getattr(spec.settings, name) for name in ("output_select", "inc_col_name_a", "inc_col_name_b")}
    )
    join = job.join
    return inc_join(a, b, join.how, join.join_cols, None, join.look_back_time, join.max_waiting_time,
                    job.start_date, end, settings).localCheckpoint()  # fmt: skip


OPEN_TYPES = (5, 6, 7)  # A_WAITING, B_WAITING, PROVISIONAL: the rows a later window may still change


def same_rows(actual: DataFrame, expected: DataFrame) -> None:
    """The same rows (any order, nullability aside), in `actual`'s column order. A target that holds its open
    rows apart has one column more than the engine's output, `IsFinal`: false exactly for the open rows."""
    if "IsFinal" in actual.columns and "IsFinal" not in expected.columns:
        expected = expected.withColumn("IsFinal", ~F.col("JoinType").isin(*OPEN_TYPES))
    assert_df_equality(actual, expected.select(*actual.columns), ignore_row_order=True, ignore_nullable=True)
