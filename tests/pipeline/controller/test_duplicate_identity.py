"""Two rows of one source with the same identity (its keys and RecDate): the run stops before writing, naming the
source that holds them, a sample key and what to put in the job file (docs/production/troubleshooting.md)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from delta.tables import DeltaTable
from delta_rows import write_rows
from pyspark.sql import SparkSession

from deltainc import AmbiguousRowsError
from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.inspect.status import status
from deltainc.pipeline.job.job_config import JobConfig

pytestmark = pytest.mark.spark

D1, D2 = dt.date(2025, 3, 1), dt.date(2025, 3, 2)
A, B = "ShipmentId long, RecDate date", "ShipmentId long, ScanId long, RecDate date"


def shipments_job(root: Path) -> JobConfig:
    return JobConfig.model_validate(
        {
            "name": "shipments",
            "start_date": D1,
            "max_window": 1,
            "source_a": {"path": str(root / "a")},
            "source_b": {"path": str(root / "b")},
            "join": {"how": "left", "join_cols": ["ShipmentId"], "max_waiting_time": 2},
            "target": {"path": str(root / "target"), "keys": ["ShipmentId"], "b_keys": ["ScanId"]},
            "state": {"path": str(root / "state")},
        }
    )


@pytest.mark.windows
def test_a_scan_sent_twice_on_one_day_fails_naming_source_b_the_key_and_the_remedy_and_writes_nothing(
    spark: SparkSession, tmp_path: Path
) -> None:
    write_rows(tmp_path / "a", [(1, D1)], A)
    write_rows(tmp_path / "b", [(1, 7, D1)], B)
    job = shipments_job(tmp_path)
    run(job, spark=spark)
    version = DeltaTable.forPath(spark, job.target.path).history(1).collect()[0]["version"]
    write_rows(tmp_path / "a", [(2, D2)], A, mode="append")
    write_rows(tmp_path / "b", [(2, 9, D2), (2, 9, D2)], B, mode="append")
    with pytest.raises(
        AmbiguousRowsError,
        match=rf"^target identity ShipmentId, RecDate_A, ScanId, RecDate_B is not unique in the join output: "
        rf"ShipmentId=2, RecDate_A={D2}, ScanId=9, RecDate_B={D2} \(2 rows\)\. source_b holds the duplicate: 2 of "
        rf"its rows share ScanId=9, RecDate={D2} \(target\.b_keys and the inc_col identify a row of source_b\)\. "
        r"Keep one of them: leave the others out with a `where` under \[source_b\] .* a view that keeps one row "
        r"per ScanId, RecDate .* add to target\.b_keys a column that tells them apart\. Nothing was written\.$",
    ):
        run(job, spark=spark)
    assert DeltaTable.forPath(spark, job.target.path).history(1).collect()[0]["version"] == version
    assert status(job, spark=spark).watermark == str(D1)


def test_an_a_row_sent_twice_fails_its_first_window_naming_source_a_and_the_key(
    spark: SparkSession, tmp_path: Path
) -> None:
    write_rows(tmp_path / "a", [(1, D1), (1, D1)], A)  # the sources with delta-rs: the rule is the run's
    write_rows(tmp_path / "b", [(1, 7, D1)], B)
    job = shipments_job(tmp_path)
    with pytest.raises(
        AmbiguousRowsError,
        match=rf"source_a holds the duplicate: 2 of its rows share ShipmentId=1, RecDate={D1} \(target\.keys and "
        r"the inc_col identify a row of source_a\)\. Keep one of them: leave the others out with a `where` under "
        r"\[source_a\]",
    ):
        run(job, spark=spark)
    assert not (Path(job.target.path) / "_delta_log").exists()
