"""`status` read with Spark and `status` read from the Delta logs say the same of a job, a job in a chain too: the
latest unit of each source is computed in one place (`state.from_delta_log.latest_in_sources`), another job's
target's being that job's watermark and a source's `where` narrowing the rows joined, not the units arrived."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pytest
from delta_rows import read_rows, write_rows
from pyspark.sql import SparkSession

from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.inspect.status import status
from deltainc.pipeline.inspect.status_from_logs import status_from_log
from deltainc.pipeline.job.job_config import JobConfig, load_job
from deltainc.pipeline.state.job_status import JobStatus
from deltainc.settings import Settings

pytestmark = pytest.mark.windows

D1, D2, D3, D4 = (dt.date(2025, 3, day) for day in (1, 2, 3, 4))


def job_file(root: Path, name: str, source_a: str, source_b: str, b_key: str, join: str) -> JobConfig:
    """The job `root/name.toml` with the sections given, its target and state under `root`."""
    text = f"""\
name = "{name}"
start_date = {D1}
[source_a]
{source_a}
[source_b]
{source_b}
[join]
how = "left"
join_cols = ["TrxId"]
{join}
[target]
path = "{root / name}"
keys = ["TrxId"]
b_keys = ["{b_key}"]
[state]
path = "{root / "state"}"
"""
    (root / f"{name}.toml").write_text(text)
    return load_job(root / f"{name}.toml")


def read_alike(shown: JobStatus) -> JobStatus:
    """The status without what says how it was read."""
    return dataclasses.replace(shown, read_with="")


def test_status_with_spark_and_from_the_logs_agree_on_a_chained_job_whose_upstream_has_a_where_and_a_watermark_behind(
    spark: SparkSession, tmp_path: Path
) -> None:
    write_rows(tmp_path / "a", [(1, 10, D1), (2, 20, D1), (3, 30, D3)], "TrxId long, Amount int, RecDate date")
    write_rows(tmp_path / "b", [(1, 5, D1), (3, 6, D3)], "TrxId long, SepaId long, RecDate date")
    write_rows(tmp_path / "scans", [(1, 100, D2), (2, 200, D2), (3, 300, D4)], "TrxId long, ScanId long, RecDate date")
    up = job_file(
        tmp_path, "trx", f'path = "{tmp_path / "a"}"\nwhere = "Amount > 0"', f'path = "{tmp_path / "b"}"', "SepaId",
        "max_waiting_time = 1",
    )  # fmt: skip
    down = job_file(
        tmp_path, "trx_scans", 'job = "trx"\nwhere = "Amount > 15"', f'path = "{tmp_path / "scans"}"', "ScanId",
        'max_waiting_time = 2\nalias_a = "A2"\nalias_b = "B2"',
    )  # fmt: skip
    run(up, until=D2, spark=spark)

    def stop_after_the_commit(step: str) -> None:
        if step == "written":
            raise RuntimeError("stopped after trx's commit of D3, before its watermark")

    with pytest.raises(RuntimeError, match="stopped after"):
        run(up, spark=spark, on_step=stop_after_the_commit)
    assert {row[0] for row in read_rows(tmp_path / "trx", ["TrxId"])} == {1, 2, 3}  # its D3 rows are there

    from_logs = status_from_log(down, Settings(), runs=5)
    with_spark = status(down, spark=spark, settings=Settings(), runs=5)

    assert (from_logs.read_with, with_spark.read_with) == ("delta_log", "spark")
    assert from_logs.latest_available == D2.isoformat()  # trx's watermark, not its target's latest RecDate
    assert read_alike(with_spark) == read_alike(from_logs)


def test_status_with_spark_and_from_the_logs_agree_that_a_where_narrows_the_rows_joined_not_the_units_arrived(
    spark: SparkSession, tmp_path: Path
) -> None:
    write_rows(tmp_path / "a", [(1, 10, D1), (2, 20, D3)], "TrxId long, Amount int, RecDate date")
    write_rows(tmp_path / "b", [(1, 5, D1), (2, 6, D3)], "TrxId long, SepaId long, RecDate date")
    only_d1 = f'path = "{tmp_path / "b"}"\nwhere = "SepaId < 6"'  # keeps no row of D3
    job = job_file(tmp_path, "trx", f'path = "{tmp_path / "a"}"', only_d1, "SepaId", "max_waiting_time = 1")

    from_logs = status_from_log(job, Settings(), runs=5)
    with_spark = status(job, spark=spark, settings=Settings(), runs=5)

    assert from_logs.latest_available == D3.isoformat()  # D3's rows of source_b have arrived, none is joined
    assert read_alike(with_spark) == read_alike(from_logs)
