"""A job is checked against its sources' schemas from their Delta logs, before Spark starts (log_checks).

The tables here are written with delta-rs (no JVM), and Spark reads them as the oracle of what a schema is."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from pyspark.sql import SparkSession

from deltainc.errors import ConfigError, SchemaError
from deltainc.pipeline.job.config import JobConfig
from deltainc.pipeline.log_checks import check_from_logs, log_schema

D1 = dt.date(2025, 3, 1)


def _table(path: Path, columns: dict[str, pa.Array]) -> str:
    write_deltalake(str(path), pa.table(columns))
    return str(path)


def _job(a: str, b: str | dict[str, str], **join: object) -> JobConfig:
    return JobConfig.model_validate(
        {
            "name": "trx",
            "start_date": D1,
            "source_a": {"path": a},
            "source_b": {"path": b} if isinstance(b, str) else b,
            "join": {"how": "left", "join_cols": ["TrxId"], "look_back_time": 1, "max_waiting_time": 2, **join},
            "target": {"path": "/nowhere/target", "keys": ["TrxId"], "b_keys": ["SepaId"]},
        }
    )


@pytest.fixture()
def sources(tmp_path: Path) -> tuple[str, str]:
    a = _table(tmp_path / "a", {"TrxId": pa.array([1], pa.int64()), "RecDate": pa.array([D1], pa.date32())})
    b = _table(
        tmp_path / "b",
        {"SepaId": pa.array([7], pa.int64()), "TrxId": pa.array([1], pa.int64()), "RecDate": pa.array([D1])},
    )
    return a, b


def test_the_schema_from_the_log_is_the_schema_spark_reads(spark: SparkSession, tmp_path: Path) -> None:
    moment = dt.datetime(2025, 3, 1, 12, 30)
    path = _table(
        tmp_path / "t",
        {
            "Id": pa.array([1], pa.int32()),
            "Amount": pa.array([Decimal("1.25")], pa.decimal128(12, 2)),
            "At": pa.array([moment], pa.timestamp("us", tz="UTC")),
            "Local": pa.array([moment], pa.timestamp("us")),
            "Tags": pa.array([["x"]], pa.list_(pa.string())),
            "Where": pa.array([{"city": "Utrecht"}], pa.struct([("city", pa.string())])),
            "RecDate": pa.array([D1], pa.date32()),
        },
    )
    assert log_schema(path).simpleString() == spark.read.format("delta").load(path).schema.simpleString()


def test_a_job_that_fits_its_sources_gives_its_join_and_target_identity(sources: tuple[str, str]) -> None:
    checked = check_from_logs(_job(*sources))
    assert checked is not None
    assert checked.identity.columns == ["TrxId", "RecDate_A", "SepaId", "RecDate_B"]


def test_a_missing_source_is_named_with_its_path(sources: tuple[str, str], tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=rf"^source_b: no Delta table at path {tmp_path / 'missing'}$"):
        check_from_logs(_job(sources[0], str(tmp_path / "missing")))


def test_a_source_given_by_catalog_name_is_left_to_spark(sources: tuple[str, str]) -> None:
    assert check_from_logs(_job(sources[0], {"table": "shop.payments"})) is None


@pytest.mark.parametrize(
    ("join", "message"),
    [
        ({"join_cols": ["Id"]}, r"^join_cols: column 'Id' missing from source_a \(columns: TrxId, RecDate\)"),
        ({"time_uom": "hour"}, r"^time_uom: 'hour' needs a timestamp 'RecDate'"),
        ({"join_cols": ["TrxID"]}, r"^join_cols: column 'TrxID' missing from .*; did you mean 'TrxId'\?$"),
        ({"inc_col": "BookedOn"}, r"^join\.inc_col: column 'BookedOn' missing from source_a"),
    ],
    ids=[
        "a_missing_join_key_is_named_with_the_columns_there_are",
        "an_hour_job_on_a_date_column_is_refused",
        "a_misspelt_column_is_answered_with_the_closest_name",
        "a_missing_rec_date_names_the_job_files_key_inc_col",
    ],
)
def test_a_join_its_sources_cannot_serve_is_refused_naming_the_setting(
    sources: tuple[str, str], join: dict[str, object], message: str
) -> None:
    with pytest.raises(SchemaError, match=message):
        check_from_logs(_job(*sources, **join))
