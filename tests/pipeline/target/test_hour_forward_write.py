"""An hour target's forward write (deltainc/pipeline/target/forward_write.py): its open rows' files are replaced
whole when its Delta log shows nothing else in the two slices, and row by row when a crashed attempt left rows
after the watermark; both give the target an uninterrupted run gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import deltalake
import pyarrow as pa
import pytest
from delta.tables import DeltaTable
from expected import same_rows
from hour_sources import ZERO, at, land
from pyspark.sql import SparkSession

from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.job.job_config import JobConfig
from jobs import job_config

pytestmark = [pytest.mark.spark, pytest.mark.windows]

JOIN = {"how": "left", "join_cols": ["ShipmentId"], "time_uom": "hour", "look_back_time": 1, "max_waiting_time": 2}


def _job(root: Path, name: str) -> JobConfig:
    return job_config(root, name, ZERO.date(), JOIN, keys=["ShipmentId"], b_keys=["ScanId"],
                      sources=("shipments", "scans"))  # fmt: skip


def _until(hour: int) -> str:
    return at(hour, 0).replace(tzinfo=None).isoformat()


def _commit(job: JobConfig) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The actions of the target's newest commit and its operation metrics."""
    log = Path(job.target.path or "") / "_delta_log"
    newest = sorted(log.glob("*.json"))[-1]
    actions = [json.loads(line) for line in newest.read_text().splitlines()]
    info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
    return actions, info.get("operationMetrics", {})


def test_an_hourly_run_removes_its_open_rows_files_whole_and_reads_none(spark: SparkSession, tmp_path: Path) -> None:
    for hour in range(4):
        land(tmp_path, hour)
    job = _job(tmp_path, "hourly")
    run(job, until=_until(2), spark=spark)
    live = pa.table(deltalake.DeltaTable(job.target.path or "").get_add_actions(flatten=True)).to_pylist()
    open_files = {Path(add["path"]).name for add in live if add["partition.IsFinal"] is False}
    report = run(job, until=_until(3), spark=spark).windows[0].record
    actions, metrics = _commit(job)
    removed = {Path(a["remove"]["path"]).name for a in actions if "remove" in a}
    assert removed == open_files != set()  # the open rows at the watermark: their files, whole
    assert metrics["numCopiedRows"] == "0" and "numDeletionVectorsAdded" not in metrics
    assert report.files_read_target == 0 and report.target_rows_copied == 0
    predicate = next(a for a in actions if "commitInfo" in a)["commitInfo"]["operationParameters"]["predicate"]
    assert "IsFinal" in predicate and "RecDate" not in predicate  # a partition column's condition alone
    reload = _job(tmp_path, "reload")
    run(reload, until=_until(3), spark=spark)
    same_rows(DeltaTable.forPath(spark, job.target.path).toDF(), DeltaTable.forPath(spark, reload.target.path).toDF())


def test_an_hourly_run_after_a_crash_past_its_commit_replaces_the_slices_row_by_row(
    spark: SparkSession, tmp_path: Path
) -> None:
    for hour in range(4):
        land(tmp_path, hour)
    job = _job(tmp_path, "hourly")
    run(job, until=_until(2), spark=spark)

    def crash(step: object) -> None:
        if str(step) == "written":  # the target holds hour 3's rows, the watermark is still hour 2
            raise RuntimeError("injected failure after the target's commit")

    with pytest.raises(RuntimeError, match="injected failure"):
        run(job, until=_until(3), spark=spark, on_step=crash)
    run(job, until=_until(3), spark=spark)
    actions, _ = _commit(job)
    predicate = next(a for a in actions if "commitInfo" in a)["commitInfo"]["operationParameters"]["predicate"]
    assert "RecDate" in predicate  # the rows after the watermark are in the slices too
    reload = _job(tmp_path, "reload")
    run(reload, until=_until(3), spark=spark)
    same_rows(DeltaTable.forPath(spark, job.target.path).toDF(), DeltaTable.forPath(spark, reload.target.path).toDF())
