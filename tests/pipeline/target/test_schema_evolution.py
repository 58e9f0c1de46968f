"""Sources that evolve: a new column reaches the target when the job allows it ([target] schema_evolution); a
dropped or retyped column is refused, naming it, before anything is written."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from chispa import assert_df_equality
from frames import frame
from pyspark.sql import SparkSession

from deltainc.errors import SchemaError
from deltainc.pipeline.controller.commands import rerun, run
from deltainc.pipeline.delta.sources import latest_commit
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.state.store import read_state, state_paths
from deltainc.time_units import to_index
from jobs import job_config

pytestmark = pytest.mark.windows

D1, D2, D3 = dt.date(2025, 3, 1), dt.date(2025, 3, 2), dt.date(2025, 3, 3)
A_SCHEMA = "TrxId long, Amount double, RecDate date"
B_SCHEMA = "SepaId long, TrxId long, RecDate date"


def make_job(root: Path, name: str = "trx", max_window: int = 1, **target: Any) -> JobConfig:
    join = {"how": "left", "join_cols": ["TrxId"], "look_back_time": 1, "max_waiting_time": 2}
    return job_config(root, name, D1, join, keys=["TrxId"], b_keys=["SepaId"], max_window=max_window, target=target)


def append(spark: SparkSession, path: Path, rows: list[tuple[Any, ...]], schema: str, **options: str) -> None:
    frame(spark, rows, schema).write.format("delta").mode("append").options(**options).save(str(path))


@pytest.fixture()
def day_one(spark: SparkSession, tmp_path: Path) -> Path:
    """Day 1 loaded: TrxId 1 matched, TrxId 2 waiting for its B."""
    append(spark, tmp_path / "a", [(1, 10.0, D1), (2, 20.0, D1)], A_SCHEMA)
    append(spark, tmp_path / "b", [(10, 1, D1)], B_SCHEMA)
    return tmp_path


def b_gains_a_column(spark: SparkSession, root: Path) -> None:
    """Day 2: B's load brings a new column, Channel; TrxId 2's B arrives with it."""
    append(spark, root / "a", [(3, 30.0, D2)], A_SCHEMA)
    append(spark, root / "b", [(11, 2, D2, "SEPA")], B_SCHEMA + ", Channel string", mergeSchema="true")


def test_a_new_source_column_is_refused_by_default_naming_it_and_the_setting(
    spark: SparkSession, day_one: Path
) -> None:
    job = make_job(day_one)
    run(job, spark=spark)
    version = latest_commit(spark, job.target)["version"]  # type: ignore[index]
    b_gains_a_column(spark, day_one)
    with pytest.raises(SchemaError, match=r"new column\(s\) .*'Channel' \(source_b column 'Channel'\).*"
                                          r'schema_evolution = "add_columns"'):  # fmt: skip
        run(job, spark=spark)
    assert latest_commit(spark, job.target)["version"] == version  # type: ignore[index]


def test_a_window_is_checked_only_against_what_it_reads_so_the_days_before_a_new_column_still_run(
    spark: SparkSession, day_one: Path
) -> None:
    job = make_job(day_one)
    run(job, spark=spark)
    append(spark, day_one / "a", [(3, 30.0, D2)], A_SCHEMA)  # day 2 as before; day 3's B brings Channel
    append(spark, day_one / "b", [(11, 2, D2)], B_SCHEMA)
    append(spark, day_one / "a", [(4, 40.0, D3)], A_SCHEMA)
    append(spark, day_one / "b", [(12, 4, D3, "SEPA")], B_SCHEMA + ", Channel string", mergeSchema="true")
    with pytest.raises(SchemaError, match=r"new column\(s\) .*'Channel' \(source_b column 'Channel'\)"):
        run(job, spark=spark)  # catching up: day 2 reads no Channel value and is written; day 3 is refused
    assert read_state(state_paths(str(day_one / "state")), "trx").watermark == to_index(D2, "day")
    target = spark.read.format("delta").load(job.target.path)
    assert "Channel" not in target.columns and {r.TrxId for r in target.collect()} == {1, 2, 3}


@pytest.mark.parametrize("forward_write", ["replace_where", "merge"])
def test_with_add_columns_a_new_source_column_reaches_the_target_without_a_rewrite(
    spark: SparkSession, day_one: Path, forward_write: str
) -> None:
    job = make_job(day_one, schema_evolution="add_columns", forward_write=forward_write)
    run(job, spark=spark)
    b_gains_a_column(spark, day_one)
    report = run(job, spark=spark).windows[0].record
    target = spark.read.format("delta").load(job.target.path)
    assert "Channel" in target.columns
    rows = {(r.TrxId, r.Channel, r.JoinType) for r in target.collect()}
    assert rows == {(1, None, 1), (2, "SEPA", 3), (3, None, 5)}  # the row from before the change reads NULL
    # No final file of day 1 rewritten: the file of its open row went whole, no row copied, no deletion vector.
    assert (report.target_files_removed, report.target_rows_copied, report.target_deletion_vectors) == (1, 0, 0)
    once = make_job(day_one, name="once", max_window=0)
    run(once, spark=spark)
    reloaded = spark.read.format("delta").load(once.target.path)
    assert_df_equality(target, reloaded.select(*target.columns), ignore_row_order=True, ignore_nullable=True)
    version = latest_commit(spark, job.target)["version"]  # type: ignore[index]
    rerun(job, D1, spark=spark)  # recomputes 1..2 against rows that read NULL: nothing changed
    assert latest_commit(spark, job.target)["version"] == version  # type: ignore[index]


@pytest.mark.parametrize(
    ("new_a", "message"),
    [
        ("TrxId long, RecDate date", r"has column\(s\) \['Amount'\] that the join no longer produces"),
        ("TrxId long, Amount string, RecDate date", r"'Amount' is double in the target but string in the join output"),
    ],
)
def test_a_dropped_or_retyped_column_is_refused_naming_it(
    spark: SparkSession, day_one: Path, new_a: str, message: str
) -> None:
    job = make_job(day_one, schema_evolution="add_columns")
    run(job, spark=spark)
    version = latest_commit(spark, job.target)["version"]  # type: ignore[index]
    rows = [(1, D1), (2, D1), (3, D2)] if "Amount" not in new_a else [(1, "10", D1), (2, "20", D1), (3, "30", D2)]
    frame(spark, rows, new_a).write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(
        str(day_one / "a")
    )
    append(spark, day_one / "b", [(11, 2, D2)], B_SCHEMA)
    with pytest.raises(SchemaError, match=message):
        run(job, spark=spark)
    assert latest_commit(spark, job.target)["version"] == version  # type: ignore[index]
