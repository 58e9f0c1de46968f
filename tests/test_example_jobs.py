"""The example job files of conf/jobs cannot rot: each loads, and the hourly one runs its first hour on rows written
here."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from delta.tables import DeltaTable
from frames import frame
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.inspect.validate import validate_job
from deltainc.pipeline.job.job_config import load_job
from deltainc.settings import Settings
from deltainc.time_units import TimeUnit, from_index, to_index

pytestmark = pytest.mark.pure

EXAMPLES = Path(__file__).resolve().parents[1] / "conf" / "jobs"
HOURLY = EXAMPLES / "parcel_scans.toml"
T0 = dt.datetime(2025, 3, 1)  # 00:00 UTC of the hourly example's start_date


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda path: path.stem)
def test_every_example_job_file_loads_and_is_named_after_its_file(path: Path) -> None:
    assert load_job(path).name == path.stem  # so `deltainc run NAME` finds it in the job directory


def test_the_hourly_example_counts_hours_from_the_first_hour_of_its_start_date() -> None:
    job = load_job(HOURLY)
    assert job.join.time_uom == "hour"
    assert to_index(job.start_date, TimeUnit.HOUR) == to_index(T0, TimeUnit.HOUR)
    assert (job.join.look_back_time, job.join.max_waiting_time, job.max_window) == (2, 30, 24)


@pytest.mark.spark
def test_the_hourly_example_validates_and_runs_its_first_hour(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parcel 1 is scanned in its own hour (JoinType 1); parcel 2 has no scan yet and waits (5); the next hour's
    parcel and scan are not read by a run up to the first hour."""
    monkeypatch.chdir(tmp_path)  # the example's relative paths (data/...) and the default state_dir land here
    data = tmp_path / "data"  # Spark's JVM takes a relative path against its own directory: absolute ones here
    hour = dt.timedelta(hours=1)
    parcels = [(1, 1.5, T0), (2, 0.5, T0), (3, 2.0, T0 + hour)]
    scans = [(101, 1, "AMS", T0), (102, 2, "AMS", T0 + hour)]
    frame(spark, parcels, "ParcelId long, Weight double, RecDate timestamp").write.format("delta").save(
        str(data / "parcels")
    )
    schema = "ScanId long, ParcelId long, Depot string, RecDate timestamp"
    frame(spark, scans, schema).write.format("delta").save(str(data / "carrier_scans"))
    job, settings = load_job(HOURLY), Settings()

    assert validate_job(job, spark=spark, settings=settings).next_read_labels() is not None
    [report] = run(job, until=T0.isoformat(), spark=spark, settings=settings).windows

    assert (from_index(report.window.start, "hour"), from_index(report.window.end, "hour")) == (T0, T0)
    target = spark.read.format("delta").load(str(data / "parcels_scanned"))
    hours = target.select("ParcelId", "ScanId", F.date_format("RecDate", "yyyy-MM-dd HH:mm"), "JoinType", "IsFinal")
    assert {tuple(r) for r in hours.collect()} == {(1, 101, "2025-03-01 00:00", 1, True),
                                                   (2, None, "2025-03-01 00:00", 5, False)}  # fmt: skip
    assert DeltaTable.forPath(spark, str(data / "parcels_scanned")).detail().first()["partitionColumns"] == ["IsFinal"]
    assert DeltaTable.isDeltaTable(spark, str(data / "parcel_scans_too_late"))  # created with the target
