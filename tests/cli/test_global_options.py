"""The global options of every command through `deltainc.cli.app.main`: --settings, --master and --conf
reach the settings and the Spark session; the JSON documents the commands print."""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_jobs import D1, D2, edit
from pyspark.sql import SparkSession

from deltainc.cli import context, spark_start
from deltainc.cli.app import main
from deltainc.settings import load_settings

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("settings_under_tmp")]


# --- global options ----------------------------------------------------------------------------------------------


def test_a_settings_file_is_given_to_load_settings_under_the_environment_which_is_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "chosen.toml").write_text('log_level = "DEBUG"\n[spark]\nmaster = "local[3]"\n')
    before = dict(os.environ)
    settings = load_settings(tmp_path / "chosen.toml")
    assert (settings.log_level, settings.spark.master) == ("DEBUG", "local[2]")  # DELTAINC_SPARK__MASTER on top
    assert load_settings(tmp_path / "chosen.toml", log_level="ERROR").log_level == "ERROR"
    assert load_settings().log_level == "INFO"  # $DELTAINC_SETTINGS_FILE (absent here): the defaults
    assert dict(os.environ) == before
    monkeypatch.setenv("DELTAINC_SETTINGS_FILE", str(tmp_path / "chosen.toml"))
    assert load_settings().log_level == "DEBUG"


def test_json_documents_write_the_types_they_hold_and_refuse_any_other() -> None:
    import decimal

    from pydantic import BaseModel

    from deltainc.cli.output import to_json

    class Model(BaseModel):
        when: dt.date

    @dataclass(frozen=True)
    class Point:
        at: dt.datetime
        path: Path

    document = {
        "date": D1,
        "amount": decimal.Decimal("10.50"),
        "tags": frozenset({"a"}),
        "pair": (1, 2),
        "model": Model(when=D2),
        "point": Point(dt.datetime(2025, 3, 1, 10, 30), Path("x/y")),
        "bytes": b"\x01\xff",
    }
    assert json.loads(to_json(document)) == {
        "date": "2025-03-01",
        "amount": "10.50",
        "tags": ["a"],
        "pair": [1, 2],
        "model": {"when": "2025-03-02"},
        "point": {"at": "2025-03-01T10:30:00", "path": "x/y"},
        "bytes": "01ff",
    }
    with pytest.raises(TypeError, match="does not write object as JSON"):
        to_json({"x": object()})


def test_settings_master_and_conf_options_reach_the_spark_session(
    spark: SparkSession,
    tmp_path: Path,
    trx_job: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, Any] = {}
    real_load_settings = context.load_settings

    def load(settings_file: Path | None = None, **overrides: object) -> Any:
        seen.update(file=str(settings_file))  # --settings is handed to load_settings, not to the environment
        return real_load_settings(settings_file, **overrides)

    def start(
        settings: Any, extra_conf: dict[str, str], verbose: bool, log_name: str, s3: bool
    ) -> tuple[SparkSession, None]:
        seen.update(settings=settings, conf=extra_conf, verbose=verbose, log_name=log_name, s3=s3)
        return spark, None

    monkeypatch.setattr(context, "load_settings", load)
    monkeypatch.setattr(spark_start, "start_spark", start)
    # A join_cond only Spark's analyzer resolves: validate starts Spark for it.
    edit(trx_job, 'join_cols = ["TrxId"]', 'join_cols = ["TrxId"]\njoin_cond = "A.Amount >= 0"')
    (tmp_path / "settings.toml").write_text('[spark]\nmaster = "local[2]"\nexecutor_memory = "1g"\n')
    argv = [
        "--settings",
        "settings.toml",
        "--conf",
        "spark.x.a=1",
        "validate",
        "trx",
        "--master",
        "local[1]",
        "--conf",
        "spark.x.b=k=v",
    ]
    monkeypatch.delenv("DELTAINC_SPARK__MASTER")
    assert main(argv) == 0
    assert seen["file"] == "settings.toml"
    assert (seen["settings"].spark.master, seen["settings"].spark.executor_memory) == ("local[1]", "1g")
    assert seen["conf"] == {"spark.x.a": "1", "spark.x.b": "k=v"}
    assert seen["verbose"] is False and seen["log_name"] == "trx"  # Spark's log goes to the job's own file
    assert seen["s3"] is False  # a job on local paths: no S3A jars
    assert capsys.readouterr().out.startswith("trx: valid")
