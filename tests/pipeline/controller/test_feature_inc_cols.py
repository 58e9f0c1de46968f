"""A feature job's sources name their own incremental column (docs/reference/job-file.md, `[[features]] inc_col`):
the spine dated by a DATE, a feature source by a TIMESTAMP `RecTs` read by its day in a day job; the output keeps
its `RecDate`-named columns, so the job writes the rows it writes with the columns renamed."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from cli_jobs import refused_run
from expected import same_rows
from frames import frame
from pyspark.sql import SparkSession
from pyspark.sql import types as T

from deltainc.errors import SchemaError
from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds.feature_job import check_feature_job, feature_sources

pytestmark = pytest.mark.windows

START = dt.date(2025, 3, 1)
LAST = START + dt.timedelta(days=5)
LB, MW = 1, 2


def day(n: int) -> dt.date:
    return START + dt.timedelta(days=n)


def at(n: int, hour: int) -> dt.datetime:
    return dt.datetime(START.year, START.month, START.day, hour, 30) + dt.timedelta(days=n)


# The spine's rows (TrxId, Amount, its day); the calls' (CallId, TrxId, Minutes, RecTs). A call at 23:30 is in
# its day; call 13 is a day early, 14 beyond the wait, trx 5 has none (it waits, then times out); trx 6 on the
# last day still waits (the target holds it apart, not final).
TRX = [(1, 10.0, day(0)), (2, 20.0, day(1)), (3, 30.0, day(1)), (4, 40.0, day(2)), (5, 50.0, day(3)), (6, 6.0, day(5))]
CALLS = [(11, 1, 3.0, at(0, 23)), (12, 2, 4.0, at(2, 0)), (13, 3, 5.0, at(0, 12)), (14, 4, 6.0, at(5, 9))]


def feature_job(root: Path, name: str, max_window: int, spine_inc: str | None, calls_inc: str | None) -> JobConfig:
    """The job over root/<spine table> and root/<calls table>: each source's own inc_col when given, else the
    tables whose columns are named RecDate."""
    own = spine_inc is not None
    calls: dict[str, Any] = {"name": "calls", "path": str(root / ("calls_own" if own else "calls")), "how": "left",
                             "join_cols": ["TrxId"], "look_back_time": LB, "max_waiting_time": MW}  # fmt: skip
    spine: dict[str, Any] = {"path": str(root / ("trx_own" if own else "trx"))}
    if spine_inc is not None:
        spine["inc_col"] = spine_inc
    if calls_inc is not None:
        calls["inc_col"] = calls_inc
    return JobConfig.model_validate(
        {"name": name, "start_date": START, "max_window": max_window, "source_a": spine, "features": [calls],
         "target": {"path": str(root / f"target_{name}"), "keys": ["TrxId"]}, "state": {"path": str(root / "state")}}
    )  # fmt: skip


def test_a_feature_source_dated_by_a_timestamp_writes_the_rows_of_the_job_with_the_columns_renamed(
    spark: SparkSession, tmp_path: Path
) -> None:
    frame(spark, TRX, "TrxId long, Amount double, LoadDay date").write.format("delta").save(str(tmp_path / "trx_own"))
    frame(spark, TRX, "TrxId long, Amount double, RecDate date").write.format("delta").save(str(tmp_path / "trx"))
    calls = "CallId long, TrxId long, Minutes double, {} timestamp"
    frame(spark, CALLS, calls.format("RecTs")).write.format("delta").save(str(tmp_path / "calls_own"))
    frame(spark, CALLS, calls.format("RecDate")).write.format("delta").save(str(tmp_path / "calls"))
    daily = feature_job(tmp_path, "daily", 1, "LoadDay", "RecTs")
    once = feature_job(tmp_path, "once", 0, "LoadDay", "RecTs")
    renamed = feature_job(tmp_path, "renamed", 0, None, None)  # today's job: every column named RecDate
    for job in (daily, once, renamed):
        run(job, LAST, spark)
    targets = [spark.read.format("delta").load(job.target.path) for job in (daily, once, renamed)]
    assert dict(targets[0].dtypes)["RecDate"] == "date"  # the output's RecDate, a day
    assert {"RecDate_A", "calls_RecDate"} <= set(targets[0].columns)  # named by [join] inc_col, not LoadDay / RecTs
    assert not {"LoadDay", "RecTs", "calls_RecTs"} & set(targets[0].columns)
    outcomes = {(r.TrxId, r.calls_CallId, r.JoinType) for r in targets[0].collect()}
    # trx 1 meets its call the same day (23:30 read as day 0), 2 a day late, 3 a day early; 4's call is beyond
    # the wait and 5 has none: both time out; 6 waits.
    assert outcomes == {(1, 11, 1), (2, 12, 3), (3, 13, 2), (4, None, 4), (5, None, 4), (6, None, 5)}
    same_rows(targets[0], targets[1])
    same_rows(targets[0], targets[2])


@pytest.mark.spark
def test_a_date_column_of_a_feature_source_in_an_hour_job_is_refused_naming_it_and_nothing_is_written(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spine = [(trx, amount, dt.datetime(rec.year, rec.month, rec.day, 8)) for trx, amount, rec in TRX]
    frame(spark, spine, "TrxId long, Amount double, RecTs timestamp").write.format("delta").save(str(tmp_path / "trx"))
    dated = [(call, trx, minutes, ts.date()) for call, trx, minutes, ts in CALLS]
    frame(spark, dated, "CallId long, TrxId long, Minutes double, CallDay date").write.format("delta").save(
        str(tmp_path / "calls")
    )
    job = f"""name = "hourly"
start_date = {START.isoformat()}

[source_a]
path = "{tmp_path / "trx"}"

[[features]]
name = "calls"
path = "{tmp_path / "calls"}"
how = "left"
join_cols = ["TrxId"]
inc_col = "CallDay"

[join]
inc_col = "RecTs"
time_uom = "hour"

[target]
path = "{tmp_path / "target"}"
keys = ["TrxId"]
"""
    err = refused_run(tmp_path, "hourly", job, monkeypatch, capsys)
    assert "features[calls]" in err and "'CallDay' of the feature source is a date" in err, err


_SPINE = T.StructType([T.StructField("TrxId", T.LongType()), T.StructField("LoadDay", T.DateType())])
_CALLS = T.StructType([T.StructField("CallId", T.LongType()), T.StructField("TrxId", T.LongType()),
                       T.StructField("RecTs", T.TimestampType())])  # fmt: skip


def _check(job: JobConfig) -> None:
    check_feature_job(job, _SPINE, feature_sources(job, {"source_a": _SPINE, "features[calls]": _CALLS}))


@pytest.mark.pure
def test_a_feature_sources_inc_col_missing_from_it_is_refused_naming_the_source_and_the_column(
    tmp_path: Path,
) -> None:
    with pytest.raises(SchemaError, match=r"^features\[calls\]\.inc_col: column 'RecT' missing .*'RecTs'"):
        _check(feature_job(tmp_path, "typo", 1, "LoadDay", "RecT"))


@pytest.mark.pure
def test_the_spines_inc_col_missing_from_it_is_refused_naming_source_a_inc_col(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match=r"^source_a\.inc_col: column 'LoadDate' missing from source_a"):
        _check(feature_job(tmp_path, "typo", 1, "LoadDate", "RecTs"))
