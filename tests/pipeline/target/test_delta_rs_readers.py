"""The target and the too-late rows' table carry no Delta reader feature the job's writes do not use, so every Delta
reader its users have reads them (docs/design.md#the-layout-open-rows-in-partitions-of-their-own; issue 75):
delta-rs' pyarrow path, on which pandas and DuckDB read, refuses the deletion-vector feature ("reader features
{'deletionVectors'} not yet supported").

Daily runs with default settings of a job that keeps its too-late rows, then each table read with Spark, with
`deltalake.DeltaTable(path).to_pyarrow_table()` and with `polars.read_delta(path)`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars
import pytest
from delta_rows import write_rows
from deltalake import DeltaTable
from pyspark.sql import SparkSession

from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.delta.sql import path_ref
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.target.layout import (
    DELETION_VECTORS,
    TargetLayout,
    create_table,
    layout_warnings,
)
from deltainc.pipeline.target.reader_features import wants_deletion_vectors

pytestmark = pytest.mark.windows

START = dt.date(2025, 3, 1)
DAYS = 6
# (TrxId, day) of A and (SepaId, TrxId, day) of B, max_waiting_time 1 and late_horizon 4: B 12 and 32 are second
# parcels after their A row's window closed, B 21 arrives after A 2 timed out; all three too late.
A_ROWS = [(1, 1), (2, 1), (3, 2), (4, 5), (5, 6)]
B_ROWS = [(11, 1, 1), (12, 1, 4), (21, 2, 3), (31, 3, 2), (32, 3, 5), (41, 4, 6)]


def day(n: int) -> dt.date:
    return START + dt.timedelta(days=n - 1)


def job_in(root: Path, **target: Any) -> JobConfig:
    """The job over the sources under `root`, one day a window, keeping its too-late rows; `target` adds settings."""
    a = write_rows(root / "a", [(t, day(d)) for t, d in A_ROWS], "TrxId int, RecDate date")
    b = write_rows(root / "b", [(s, t, day(d)) for s, t, d in B_ROWS], "SepaId int, TrxId int, RecDate date")
    return JobConfig.model_validate(
        {
            "name": "trx",
            "start_date": START,
            "max_window": 1,
            "source_a": {"path": a},
            "source_b": {"path": b},
            "join": {
                "how": "left",
                "join_cols": ["TrxId"],
                "look_back_time": 1,
                "max_waiting_time": 1,
                "late_horizon": 4,
            },  # fmt: skip
            "target": {
                "path": str(root / "target"),
                "keys": ["TrxId"],
                "b_keys": ["SepaId"],
                "late_rows": str(root / "late"),
                **target,
            },  # fmt: skip
            "state": {"path": str(root / "state")},
        }
    )


@dataclass(frozen=True)
class Daily:
    """The job after its daily runs: the paths of its target and of its too-late rows' table."""

    job: JobConfig
    target: str
    late: str


@pytest.fixture(scope="module")
def daily(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Daily:
    job = job_in(tmp_path_factory.mktemp("daily"))
    windows = run(job, spark=spark).windows
    assert len(windows) == DAYS
    return Daily(job, job.target.path or "", job.target.late_rows or "")


def spark_rows(spark: SparkSession, path: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The table's columns and its rows as Spark reads them, sorted."""
    frame = spark.read.format("delta").load(path)
    return frame.columns, sorted((tuple(row) for row in frame.collect()), key=repr)


def test_daily_runs_with_default_settings_leave_no_deletion_vector_feature_in_either_table(daily: Daily) -> None:
    for path in (daily.target, daily.late):
        protocol = DeltaTable(path).protocol()
        assert "deletionVectors" not in (protocol.reader_features or []), path
        assert "deletionVectors" not in (protocol.writer_features or []), path


def test_deltalake_to_pyarrow_reads_the_target_and_the_too_late_rows_as_spark_does(
    spark: SparkSession, daily: Daily
) -> None:
    for path in (daily.target, daily.late):
        columns, expected = spark_rows(spark, path)
        table = DeltaTable(path).to_pyarrow_table().select(columns)
        assert sorted((tuple(row.values()) for row in table.to_pylist()), key=repr) == expected, path
    assert len(spark_rows(spark, daily.late)[1]) == 3  # B 12, 21 and 32: the job kept too-late rows


def test_polars_reads_the_target_and_the_too_late_rows_as_spark_does(spark: SparkSession, daily: Daily) -> None:
    for path in (daily.target, daily.late):
        columns, expected = spark_rows(spark, path)
        assert sorted(polars.read_delta(path).select(columns).rows(), key=repr) == expected, path


def test_a_new_target_gets_no_deletion_vectors_from_the_session_default(spark: SparkSession, tmp_path: Path) -> None:
    default = "spark.databricks.delta.properties.defaults.enableDeletionVectors"
    spark.conf.set(default, "true")  # Delta's session default for new tables
    try:
        rows = spark.createDataFrame([(1, START, True)], "TrxId INT, RecDate DATE, IsFinal BOOLEAN")
        create_table(rows, path_ref(str(tmp_path / "t")), ["RecDate", "IsFinal"], deletion_vectors=False)
    finally:
        spark.conf.unset(default)
    table = DeltaTable(str(tmp_path / "t"))
    assert "deletionVectors" not in (table.protocol().reader_features or [])
    assert table.metadata().configuration[DELETION_VECTORS] == "false"


@pytest.mark.parametrize(
    ("asked", "partition_by", "wanted"),
    [
        (None, ["RecDate", "IsFinal"], False),  # the default layout of a day job: whole files
        (None, ["IsFinal"], False),  # an hour or minute job's
        (None, ["RecDate"], True),  # the earlier layout: a daily run deletes rows from the watermark's files
        (None, [], True),
        (True, ["RecDate", "IsFinal"], True),  # as the job asks
        (False, ["RecDate"], False),
    ],
)
def test_deletion_vectors_are_on_only_where_the_layout_s_writes_use_them_unless_the_job_says(
    asked: bool | None, partition_by: list[str], wanted: bool
) -> None:
    assert wants_deletion_vectors(asked, partition_by) is wanted


def test_a_forward_merge_on_the_default_layout_makes_no_deletion_vector_even_with_them_on(
    spark: SparkSession, tmp_path: Path
) -> None:
    job = job_in(tmp_path, forward_write="merge", deletion_vectors=True)
    reports = run(job, spark=spark).windows
    assert [r.record.target_write for r in reports] == ["create"] + ["merge"] * (DAYS - 1)
    assert "deletionVectors" in (DeltaTable(job.target.path or "").protocol().reader_features or [])
    assert [r.record.target_deletion_vectors for r in reports] == [0] * DAYS  # the open rows' files went whole


def test_validate_warns_of_a_target_that_carries_deletion_vectors_its_writes_never_use() -> None:
    carrying = TargetLayout(("RecDate", "IsFinal"), False, features=frozenset({"deletionVectors"}))
    [warning] = layout_warnings(carrying, "RecDate", "day", job="trx")
    assert "reader feature deletionVectors" in warning and "`deltainc migrate trx` drops it" in warning
    assert layout_warnings(carrying, "RecDate", "day", job="trx", deletion_vectors=True) == []  # the job asks for it
