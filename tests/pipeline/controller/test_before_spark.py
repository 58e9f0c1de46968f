"""What the Delta logs answer before Spark starts (deltainc/pipeline/controller/before_spark.py): a job checked
against its sources' schemas, a run with nothing pending; and what they cannot answer starts Spark, saying why once.

The tables here are written with delta-rs (no JVM), and Spark reads them as the oracle of what a schema is (and
of what a job that does not fit is refused with)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from pyspark import SparkContext
from pyspark.sql import SparkSession
from pyspark.sql import types as T

from deltainc.errors import ConfigError, SchemaError
from deltainc.join import feature_source, join_spec
from deltainc.pipeline.controller.before_spark import check_from_logs, hold_lock, nothing_pending
from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.controller.prepared_job import prepare_job
from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.sources import shape_from_log
from deltainc.pipeline.inspect.status_from_logs import status_with_problem
from deltainc.pipeline.inspect.validate import validate_from_logs
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds import JobKind, JoinPlan
from deltainc.pipeline.job.kinds.feature_job import FeatureJob
from deltainc.pipeline.job.kinds.two_source import TwoSourceJob
from deltainc.pipeline.job.sections import StateConfig
from deltainc.pipeline.state.job_status import UNREAD
from deltainc.settings import Settings, load_settings
from deltainc.time_units import TimeUnit, to_index
from jobs import feature_job_config

pytestmark = pytest.mark.pure

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
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything starts Spark, or uses the session an earlier test of this process started."""

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("Spark was started")

    monkeypatch.setattr(SparkSession.Builder, "getOrCreate", refuse)
    monkeypatch.setattr(SparkSession, "_instantiatedSession", None)
    monkeypatch.setattr(SparkSession, "_activeSession", None)
    monkeypatch.setattr(SparkContext, "_active_spark_context", None)


def _feature_job(root: Path, **pay: object) -> JobConfig:
    """A feature job: the spine root/trx with a `left` source root/pay (that may match several rows: keys PayId)
    and an `asof` source root/risk; `pay` changes the pay source's settings."""
    left = {"name": "pay", "path": str(root / "pay"), "how": "left", "join_cols": ["TrxId"], "keys": ["PayId"],
            "look_back_time": 1, "max_waiting_time": 2, **pay}  # fmt: skip
    asof = {"name": "risk", "path": str(root / "risk"), "how": "asof", "join_cols": ["CustomerId"],
            "look_back_time": 3, "max_waiting_time": 1, "columns": ["Risk"]}  # fmt: skip
    return feature_job_config(root, "trx_features", D1, [left, asof], max_window=0)


def _feature_tables(root: Path, pay: dict[str, pa.Array] | None = None) -> Path:
    """The feature job's three sources under `root`, one row each; `pay` replaces the pay source's columns."""
    one, day = pa.array([1], pa.int64()), pa.array([D1], pa.date32())
    _table(root / "trx", {"TrxId": one, "CustomerId": pa.array([7], pa.int64()), "RecDate": day})
    _table(root / "pay", pay or {"PayId": pa.array([70], pa.int64()), "TrxId": one, "RecDate": day})
    _table(root / "risk", {"CustomerId": pa.array([7], pa.int64()), "Risk": pa.array([0.5]), "RecDate": day})
    return root


@pytest.fixture()
def sources(tmp_path: Path) -> tuple[str, str]:
    a = _table(tmp_path / "a", {"TrxId": pa.array([1], pa.int64()), "RecDate": pa.array([D1], pa.date32())})
    b = _table(
        tmp_path / "b",
        {"SepaId": pa.array([7], pa.int64()), "TrxId": pa.array([1], pa.int64()), "RecDate": pa.array([D1])},
    )
    return a, b


@pytest.mark.spark
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
    assert shape_from_log(path).schema.simpleString() == spark.read.format("delta").load(path).schema.simpleString()


def test_a_job_that_fits_its_sources_gives_its_join_and_target_identity(sources: tuple[str, str]) -> None:
    checked = check_from_logs(_job(*sources))
    assert checked.identity.columns == ["TrxId", "RecDate_A", "SepaId", "RecDate_B"]


def test_a_missing_source_is_named_with_its_path(sources: tuple[str, str], tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=rf"^source_b: no Delta table at path {tmp_path / 'missing'}$"):
        check_from_logs(_job(sources[0], str(tmp_path / "missing")))


def test_a_source_given_by_catalog_name_is_left_to_spark(sources: tuple[str, str]) -> None:
    with pytest.raises(LogUnreadable, match="shop.payments"):
        check_from_logs(_job(sources[0], {"table": "shop.payments"}))


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


def test_a_feature_job_that_fits_its_sources_is_checked_from_the_logs_without_spark(
    tmp_path: Path, no_spark: None
) -> None:
    checked = check_from_logs(_feature_job(_feature_tables(tmp_path)))
    assert {role: schema.fieldNames() for role, schema in checked.schemas.items() if role != "source_a"} == {
        "features[pay]": ["PayId", "TrxId", "RecDate"],
        "features[risk]": ["CustomerId", "Risk", "RecDate"],
    }
    assert checked.identity.columns == ["TrxId", "RecDate_A", "pay_PayId", "pay_RecDate"]


def test_validate_answers_a_feature_job_from_the_logs_without_spark(tmp_path: Path, no_spark: None) -> None:
    validation = validate_from_logs(_feature_job(_feature_tables(tmp_path)), load_settings())
    assert validation.next_read_labels() == {
        "source_a": ("2025-02-27", "2025-03-01"),
        "features[pay]": ("2025-02-26", "2025-03-01"),
        "features[risk]": ("2025-02-24", "2025-03-01"),
    }


@pytest.mark.spark
@pytest.mark.parametrize(
    ("pay", "message"),
    [
        (
            {"PayId": pa.array([70], pa.int64()), "RecDate": pa.array([D1], pa.date32())},
            r"^features\[pay\]: join_cols: column 'TrxId' missing from the feature source \(columns: PayId, RecDate\)$",
        ),
        (
            {"PayId": pa.array([70], pa.int64()), "TrxId": pa.array([1], pa.int64()), "LoadDate": pa.array([D1])},
            r"^features\[pay\]: join\.inc_col: column 'RecDate' missing from the feature source "
            r"\(columns: PayId, TrxId, LoadDate\)$",
        ),
    ],
    ids=["its_join_column", "its_rec_date"],
)
def test_a_feature_source_missing_a_column_is_refused_from_the_logs_as_spark_refuses_it(
    spark: SparkSession, tmp_path: Path, pay: dict[str, pa.Array], message: str
) -> None:
    job = _feature_job(_feature_tables(tmp_path, pay))
    with pytest.raises(SchemaError, match=message) as from_logs:
        check_from_logs(job)
    with pytest.raises(SchemaError) as from_spark:
        prepare_job(job, spark, load_settings())
    assert str(from_logs.value) == str(from_spark.value)


def test_a_feature_sources_join_cond_is_left_to_spark(tmp_path: Path, no_spark: None) -> None:
    job = _feature_job(_feature_tables(tmp_path), join_cond="B.NoSuchColumn > 0")
    check_from_logs(job)  # raises nothing: every other check passed; resolving the condition needs Spark
    with pytest.raises(LogUnreadable, match="join_cond"):  # so validate asks Spark
        validate_from_logs(job, load_settings())


def test_a_run_with_nothing_pending_is_answered_from_the_logs_without_spark(
    sources: tuple[str, str], tmp_path: Path, no_spark: None
) -> None:
    def spark() -> SparkSession:
        raise AssertionError("Spark was asked")

    result = run(_job(*sources), "2025-02-28", spark, Settings(state_dir=tmp_path / "state"))
    assert result.nothing_pending
    assert result.message.startswith("nothing pending for trx until 2025-02-28")


def test_a_run_until_a_processed_unit_says_the_rerun_that_recomputes_it() -> None:
    # An hourly job processed up to 06:00; a scheduler's cleared past hour asks for `run --until 04:00`.
    job = _job("/nowhere/a", "/nowhere/b", time_uom="hour")
    hour = to_index(dt.datetime(2025, 3, 1, 4), TimeUnit.HOUR)
    message = nothing_pending(job, hour + 2, hour + 2, hour)
    assert message.startswith("nothing pending for trx until 2025-03-01T04:00:00: watermark 2025-03-01T06:00:00")
    assert message.endswith("`deltainc rerun trx --start 2025-03-01T04:00:00 --end 2025-03-01T04:00:00`")
    # before start_date nothing is processed, and there is no rerun to name
    assert "rerun" not in nothing_pending(job, hour + 2, hour + 2, to_index(D1, TimeUnit.HOUR) - 1)


class Stopped(Exception):
    """Raised where Spark would start: the test has seen what it came for."""


@pytest.mark.parametrize(
    ("source_b", "why"),
    [
        (None, "trx: run starts Spark: 2025-03-01 pending"),
        (
            {"table": "shop.payments"},
            "trx: run starts Spark: the Delta logs cannot answer: source_b is a catalog table (shop.payments): its "
            "location needs the metastore",
        ),
    ],
    ids=["work_pending", "a_catalog_table"],
)
def test_what_the_logs_cannot_answer_runs_with_spark_under_the_lock_saying_why_once(
    sources: tuple[str, str],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    no_spark: None,
    source_b: dict[str, str] | None,
    why: str,
) -> None:
    job, settings = _job(sources[0], source_b or sources[1]), Settings(state_dir=tmp_path / "state")
    locks: list[dict[str, object] | None] = []

    def spark() -> SparkSession:  # asked for once the logs could not answer: it sees the lock the run holds
        locks.append(status_with_problem(job, settings, 1, "Spark starts").lock)
        raise Stopped

    with caplog.at_level("INFO", logger="deltainc"), pytest.raises(Stopped):
        run(job, spark=spark, settings=settings)
    assert len(locks) == 1 and locks[0] is not None  # asked once, holding the job's lock
    assert [r.getMessage() for r in caplog.records if "starts Spark" in r.getMessage()] == [why]


@pytest.mark.spark
@pytest.mark.parametrize("kind", ["two_source", "features"])
def test_a_job_is_checked_once_per_command_and_its_windows_are_joined_without_a_check(
    spark: SparkSession, sources: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    job = _job(*sources) if kind == "two_source" else _feature_job(_feature_tables(tmp_path / "features"))
    plans: list[str] = []
    for checked_kind in (TwoSourceJob, FeatureJob):
        real = checked_kind.plan

        def counted(
            self: JobKind, schemas: Mapping[str, T.StructType], real: Callable[..., JoinPlan] = real
        ) -> JoinPlan:
            plans.append(job.name)
            return real(self, schemas)

        monkeypatch.setattr(checked_kind, "plan", counted)
    checked = check_from_logs(job)  # as a command does before Spark starts
    prepared = prepare_job(job, spark, load_settings(), checked)  # takes the logs' plan on
    assert plans == [job.name]

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("checked again")

    for module, name in ((join_spec, "check_join"), (feature_source, "check_join"), (feature_source, "check_features")):
        monkeypatch.setattr(module, name, refuse)
    first = to_index(D1, TimeUnit.DAY)
    for window in ((first, first), (first + 1, first + 3)):
        assert prepared.join.join(*window).output.columns  # planned (analysed), nothing checked


def test_a_job_whose_status_failed_is_shown_with_its_problem_and_what_its_state_tables_say(
    sources: tuple[str, str], tmp_path: Path, no_spark: None
) -> None:
    job, settings = _job(*sources), Settings(state_dir=tmp_path / "state")
    with hold_lock(job, settings) as lease:
        shown = status_with_problem(job, settings, 5, "source_a: the metastore failed")
    assert (shown.problem, shown.pending, shown.read_with) == ("source_a: the metastore failed", None, "delta_log")
    assert shown.lock is not None and shown.lock["run_id"] == lease.run_id


def test_a_job_whose_state_cannot_be_read_either_says_both_and_shows_no_watermark_as_never_run(
    sources: tuple[str, str], no_spark: None
) -> None:
    job = _job(*sources).model_copy(update={"state": StateConfig(path="hdfs://nowhere/state")})
    shown = status_with_problem(job, Settings(), 5, "source_a: the metastore failed")
    assert shown.read_with == UNREAD and shown.watermark is None
    assert shown.problem is not None and shown.problem.startswith("source_a: the metastore failed; its state: ")
    assert "hdfs://nowhere/state" in shown.problem
