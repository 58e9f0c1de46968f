"""`deltainc profile` through `deltainc.cli.app.main`: the delay profile printed and its chart drawn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_commands import nothing_written
from cli_jobs import Sources, write_job
from pyspark.sql import SparkSession

from deltainc.cli.app import main

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("settings_under_tmp")]


# --- profile (the demo runs once, through the command line, in tests/demo/test_demo.py) ---------------------------


def test_profile_prints_the_delay_profile_and_draws_the_chart(
    spark: SparkSession, tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str]
) -> None:
    write_job(tmp_path, sources)
    assert main(["profile", "trx", "--chart", "chart.png", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["pairs"], document["unmatched_a"], document["chart"]) == (3, 1, "chart.png")
    assert (tmp_path / "chart.png").stat().st_size > 0
    assert main(["profile", "trx", "--start", "2025-03-02"]) == 0
    assert capsys.readouterr().out.startswith("Delay profile of job trx:")
    assert nothing_written(tmp_path)
