"""Each source's own incremental column (docs/reference/job-file.md, `[source_a] inc_col`): A dated by a TIMESTAMP
`RecTs`, B by a DATE `RecDate`, in a day job; the output keeps its `RecDate`."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from cli_jobs import refused_run
from expected import engine_output, same_rows
from frames import frame
from pyspark.sql import SparkSession
from pyspark.sql import types as T

from deltainc.errors import SchemaError
from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds.two_source import plan_join
from jobs import job_config

pytestmark = pytest.mark.windows

START = dt.date(2025, 3, 1)
LAST = START + dt.timedelta(days=5)
LB, MW = 1, 2
A_SCHEMA = "TrxId long, Amount double, RecTs timestamp"
B_SCHEMA = "TrxId long, SepaId long, RecDate date"


def at(day: int, hour: int) -> dt.datetime:
    return dt.datetime(START.year, START.month, START.day + day, hour, 30)


# A's rows: (TrxId, Amount, RecTs); B's: (TrxId, SepaId, RecDate). Hours late in the day stay in their day.
A_ROWS = [(1, 10.0, at(0, 23)), (2, 20.0, at(1, 0)), (3, 30.0, at(1, 12)), (4, 40.0, at(2, 5)), (5, 50.0, at(4, 9))]
B_ROWS = [(1, 11, START), (2, 21, START), (3, 31, START + dt.timedelta(days=3)), (5, 51, START + dt.timedelta(days=7))]


def make_job(root: Path, name: str, max_window: int, inc_col_a: str = "RecTs", **join: Any) -> JobConfig:
    join = {"how": "left", "join_cols": ["TrxId"], "look_back_time": LB, "max_waiting_time": MW, **join}
    return job_config(
        root, name, START, join, keys=["TrxId"], b_keys=["SepaId"], max_window=max_window,
        source_a={"inc_col": inc_col_a},
    )  # fmt: skip


def rules(a_rows: list[tuple[Any, ...]], b_rows: list[tuple[Any, ...]], end: int) -> list[tuple[Any, ...]]:
    """The left join's rules in plain Python, in day indexes from START (A by its RecTs' day): (TrxId, SepaId,
    output day, JoinType) of every row up to `end`, waiting rows included."""
    out = []
    for key, _, ts in a_rows:
        a = (ts.date() - START).days
        matches = [(sepa, (day - START).days) for k, sepa, day in b_rows if k == key]
        matches = [(sepa, b) for sepa, b in matches if a - LB <= b <= a + MW and b <= end]
        for sepa, b in matches:
            out.append((key, sepa, max(a, b), 1 if b == a else 2 if b < a else 3))
        if not matches:
            waited = min(MW, end - a)
            out.append((key, None, a + waited, 4 if waited == MW else 5))
    return sorted(out, key=lambda row: tuple(-1 if v is None else v for v in row))


def test_a_timestamp_source_in_a_day_job_is_read_by_its_day_daily_and_in_one_run_alike(
    spark: SparkSession, tmp_path: Path
) -> None:
    frame(spark, A_ROWS, A_SCHEMA).write.format("delta").partitionBy("RecTs").save(str(tmp_path / "a"))
    frame(spark, B_ROWS, B_SCHEMA).write.format("delta").partitionBy("RecDate").save(str(tmp_path / "b"))
    daily, once = make_job(tmp_path, "daily", 1), make_job(tmp_path, "once", 0)
    run(daily, LAST, spark)
    run(once, LAST, spark)
    targets = [spark.read.format("delta").load(job.target.path) for job in (daily, once)]
    # A run reaches the latest day both sources have, at most LAST: A's latest, day 4 (B has day 7).
    reached = min(LAST, max(ts.date() for *_, ts in A_ROWS), max(day for *_, day in B_ROWS))
    expected = rules(A_ROWS, B_ROWS, (reached - START).days)
    for target in targets:
        assert dict(target.dtypes)["RecDate"] == "date"  # the output's RecDate, a day
        assert {"RecTs", "RecDate_B"} <= set(target.columns)  # A's own column keeps its name, B's is suffixed
        found = [(r.TrxId, r.SepaId, (r.RecDate - START).days, r.JoinType) for r in target.collect()]
        assert sorted(found, key=lambda row: tuple(-1 if v is None else v for v in row)) == expected
    same_rows(targets[0], targets[1])
    same_rows(targets[0], engine_output(spark, daily, reached))


@pytest.mark.spark
def test_a_date_column_in_an_hour_job_is_refused_naming_its_source_and_nothing_is_written(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    frame(spark, A_ROWS, A_SCHEMA).write.format("delta").save(str(tmp_path / "a"))
    frame(spark, B_ROWS, B_SCHEMA).write.format("delta").save(str(tmp_path / "b"))
    job = f"""name = "hourly"
start_date = {START.isoformat()}

[source_a]
path = "{tmp_path / "a"}"

[source_b]
path = "{tmp_path / "b"}"
inc_col = "RecDate"

[join]
how = "left"
join_cols = ["TrxId"]
inc_col = "RecTs"
time_uom = "hour"

[target]
path = "{tmp_path / "target"}"
keys = ["TrxId"]
"""
    err = refused_run(tmp_path, "hourly", job, monkeypatch, capsys)
    assert "'RecDate' of source_b is a date" in err, err


_A = T.StructType([T.StructField("TrxId", T.LongType()), T.StructField("Amount", T.DoubleType()),
                   T.StructField("RecTs", T.TimestampType())])  # fmt: skip
_B = T.StructType([T.StructField("TrxId", T.LongType()), T.StructField("SepaId", T.LongType()),
                   T.StructField("RecDate", T.DateType())])  # fmt: skip


@pytest.mark.pure
def test_a_source_inc_col_missing_from_its_source_is_refused_naming_the_setting_and_the_column(
    tmp_path: Path,
) -> None:
    job = make_job(tmp_path, "typo", 1, inc_col_a="RecT")
    with pytest.raises(SchemaError, match=r"^source_a\.inc_col: column 'RecT' missing from source_a .*'RecTs'"):
        plan_join(job, _A, _B)


@pytest.mark.pure
def test_output_select_tokens_inc_col_a_and_inc_col_b_name_each_sources_own_column(tmp_path: Path) -> None:
    job = make_job(tmp_path, "tokens", 1, output_select="join_cols, inc_col, inc_col_a, inc_col_b, JoinType")
    spec, identity = plan_join(job, _A, _B)
    assert spec.layout.selected[:4] == ("TrxId", "RecDate", "RecTs", "RecDate_B")
    assert (identity.a_rec, identity.b_rec) == ("RecTs", "RecDate_B")
