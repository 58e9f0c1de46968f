"""[target] change_data_feed: the target is created with Delta's Change Data Feed, and a consumer reads one run's
changes: a waiting row replaced by its match is a delete and an insert."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from test_schema_evolution import A_SCHEMA, B_SCHEMA, D1, D2, append, make_job

from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.delta.sources import latest_commit
from deltainc.pipeline.target.layout import read_layout

pytestmark = pytest.mark.windows


def test_a_consumer_reads_one_runs_changes_from_the_change_data_feed(spark: SparkSession, tmp_path: Path) -> None:
    append(spark, tmp_path / "a", [(1, 10.0, D1), (2, 20.0, D1)], A_SCHEMA)
    append(spark, tmp_path / "b", [(10, 1, D1)], B_SCHEMA)
    job = make_job(tmp_path, change_data_feed=True)
    run(job, spark=spark)
    assert read_layout(spark, job.target).change_data_feed
    append(spark, tmp_path / "a", [(3, 30.0, D2)], A_SCHEMA)
    append(spark, tmp_path / "b", [(11, 2, D2)], B_SCHEMA)
    run(job, spark=spark)  # TrxId 2's B arrives; TrxId 3 starts waiting

    day_two = latest_commit(spark, job.target)["version"]  # type: ignore[index]
    changes = (
        spark.read.format("delta")
        .option("readChangeFeed", "true")
        .option("startingVersion", day_two)
        .option("endingVersion", day_two)
        .load(job.target.path)
    )
    seen = sorted((r.TrxId, r._change_type, r.JoinType) for r in changes.collect())
    assert seen == [(2, "delete", 5), (2, "insert", 3), (3, "insert", 5)]
