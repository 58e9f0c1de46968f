"""A job whose source A is another job's target (docs/concepts/target-as-source.md): it reads the target's final
rows (`where = "IsFinal"`), dated by the unit they became final, and names its own columns apart from the
target's `_A` / `_B` columns with aliases of its own."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from delta_rows import column_names, read_rows, write_rows
from pyspark.sql import SparkSession

from deltainc import ConfigError, JoinType, SchemaError
from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.inspect.validate import validate_job
from deltainc.pipeline.job.job_config import JobConfig, load_job

pytestmark = pytest.mark.spark

D1, D2, D3 = dt.date(2025, 3, 1), dt.date(2025, 3, 2), dt.date(2025, 3, 3)


def job(root: Path, name: str, a: str, b: str, b_key: str, join: dict[str, Any], where: str | None = None) -> JobConfig:
    return JobConfig.model_validate(
        {
            "name": name,
            "start_date": D1,
            "source_a": {"path": a, "where": where},
            "source_b": {"path": b},
            "join": {"how": "left", "join_cols": ["TrxId"], **join},
            "target": {"path": str(root / name), "keys": ["TrxId"], "b_keys": [b_key]},
            "state": {"path": str(root / "state")},
        }
    )


@pytest.fixture(scope="module")
def upstream(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Job 1 run to D3: trx 1 and 3 matched on their day, trx 2 timed out on D2 (max_waiting_time 1)."""
    root = tmp_path_factory.mktemp("chain")
    write_rows(root / "a", [(1, 10, D1), (2, 20, D1), (3, 30, D3)], "TrxId long, Amount int, RecDate date")
    write_rows(root / "b", [(1, 5, D1), (3, 6, D3)], "TrxId long, SepaId long, RecDate date")
    write_rows(root / "scans", [(1, 100, D2), (2, 200, D2), (3, 300, D3)], "TrxId long, ScanId long, RecDate date")
    run(job(root, "trx", str(root / "a"), str(root / "b"), "SepaId", {"max_waiting_time": 1}), spark=spark)
    return root


def scans_job(root: Path, **join: Any) -> JobConfig:
    """Job 2: source A is job 1's target path, its final rows only; source B the scans."""
    return job(root, "trx_scans", str(root / "trx"), str(root / "scans"), "ScanId", {"max_waiting_time": 2, **join},
               where="IsFinal")  # fmt: skip


def test_a_job_on_a_target_with_the_default_aliases_is_refused_naming_the_columns_and_the_aliases_that_fit(
    spark: SparkSession, upstream: Path
) -> None:
    second = scans_job(upstream)
    message = (
        r"^output column collision: 'RecDate_A' from source_a column 'RecDate_A' collides with source_a column "
        r"'RecDate' \(suffixed with alias_a 'A': source_b has a 'RecDate' too\); .* alias_a = \"A2\" and "
        r"alias_b = \"B2\" under \[join\]"
    )
    with pytest.raises(SchemaError, match=message):
        validate_job(second, spark=spark)
    with pytest.raises(SchemaError, match=message):
        run(second, spark=spark)
    assert not (upstream / "trx_scans" / "_delta_log").exists()


def test_a_job_on_another_jobs_target_validates_and_runs_on_its_final_rows(spark: SparkSession, upstream: Path) -> None:
    second = scans_job(upstream, alias_a="A2", alias_b="B2")
    reads = validate_job(second, spark=spark).next_read_labels()
    assert reads is not None and reads["source_a"][1] == reads["source_b"][1] == str(D3)
    run(second, spark=spark)
    out = upstream / "trx_scans"  # read back with delta-rs: the rule is the job's columns and rows
    assert column_names(out) == [
        "TrxId", "RecDate", "RecDate_A2", "Amount", "RecDate_A", "SepaId", "RecDate_B", "DiffArrivalTime_A2",
        "WaitingTime_A2", "JoinType_A2", "IsFinal_A2", "ScanId", "RecDate_B2", "DiffArrivalTime", "WaitingTime",
        "JoinType", "IsFinal",
    ]  # fmt: skip
    # By hand: job 1's final rows are trx 1 (matched, D1), trx 2 (timed out on D2, WaitingTime 1), trx 3 (matched,
    # D3); each is job 2's A row on the day it became final, and its scan arrives 1, 0 and 0 days after that.
    b_late, same, timed_out = int(JoinType.B_LATE), int(JoinType.SAME_TIME), int(JoinType.A_TIMED_OUT)
    expected = [
        (1, D2, D1, 10, D1, 5, D1, 0, None, same, True, 100, D2, 1, None, b_late, True),
        (2, D2, D2, 20, D1, None, None, None, 1, timed_out, True, 200, D2, 0, None, same, True),
        (3, D3, D3, 30, D3, 6, D3, 0, None, same, True, 300, D3, 0, None, same, True),
    ]
    assert read_rows(out) == expected


def job_file(root: Path, name: str, a: str, b: str, b_key: str, join: str) -> Path:
    """A job file `root/name.toml`: source A `a` (a path, or `job = "..."`), source B the table `root/b`."""
    text = f"""\
name = "{name}"
start_date = {D1}
[source_a]
{a}
[source_b]
path = "{root / b}"
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
    return root / f"{name}.toml"


@pytest.mark.windows
def test_a_source_named_by_job_reaches_no_further_than_that_jobs_watermark(spark: SparkSession, tmp_path: Path) -> None:
    write_rows(tmp_path / "a", [(1, 10, D1), (2, 20, D1), (3, 30, D3)], "TrxId long, Amount int, RecDate date")
    write_rows(tmp_path / "b", [(1, 5, D1), (3, 6, D3)], "TrxId long, SepaId long, RecDate date")
    write_rows(tmp_path / "scans", [(1, 100, D2), (2, 200, D2), (3, 300, D3)], "TrxId long, ScanId long, RecDate date")
    up = load_job(job_file(tmp_path, "trx", f'path = "{tmp_path / "a"}"', "b", "SepaId", "max_waiting_time = 1"))
    join = 'max_waiting_time = 2\nalias_a = "A2"\nalias_b = "B2"'
    down = load_job(job_file(tmp_path, "trx_scans", 'job = "trx"', "scans", "ScanId", join))
    with pytest.raises(ConfigError, match=r"source_a: no Delta table at .* \(the target of job trx, which has not run"):
        run(down, spark=spark)
    assert not (tmp_path / "trx_scans").exists()
    run(up, until=D2, spark=spark)

    def stop_after_the_commit(step: str) -> None:
        if step == "written":
            raise RuntimeError("stopped after trx's commit of D3, before its watermark")

    with pytest.raises(RuntimeError, match="stopped after"):
        run(up, spark=spark, on_step=stop_after_the_commit)
    assert {row[0] for row in read_rows(tmp_path / "trx", ["TrxId"])} == {1, 2, 3}  # trx 3, final on D3, is there
    result = run(down, spark=spark)
    assert result.watermark == D2.isoformat()  # trx's watermark, not its target's latest RecDate
    assert [row[0] for row in read_rows(tmp_path / "trx_scans", ["TrxId"])] == [1, 2]
