"""A chain of jobs checked before its first run (issue 78, item 3): `deltainc validate` of a job whose source is
another job's target that does not exist yet checks it against the columns that job's first run will write; and a
job on another job's target picks suffixes of its own where it sets none (item 4)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from cli_jobs import settings_env
from delta_rows import column_names, write_rows
from pyspark.sql import SparkSession

from deltainc.cli.app import main
from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.controller.planned_target import planned_schema
from deltainc.pipeline.job.job_config import load_job

pytestmark = pytest.mark.spark

D1, D2 = dt.date(2025, 3, 1), dt.date(2025, 3, 2)


@pytest.fixture()
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A job directory under tmp_path whose sources hold a row each; the settings point under tmp_path."""
    monkeypatch.chdir(tmp_path)
    for name, value in settings_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    (tmp_path / "jobs").mkdir()
    write_rows(tmp_path / "a", [(1, 10, D1)], "TrxId long, Amount int, RecDate date")
    write_rows(tmp_path / "b", [(1, 5, D1)], "TrxId long, SepaId long, RecDate date")
    write_rows(tmp_path / "scans", [(1, 100, D2)], "TrxId long, ScanId long, RecDate date")
    write_rows(tmp_path / "fees", [(1, 7, D2)], "TrxId long, FeeId long, RecDate date")
    return tmp_path


def job_file(root: Path, name: str, a: str, b: str, b_key: str, join: str = "") -> Path:
    """`root/jobs/<name>.toml`: a left job on TrxId, source A `a` (`path = ...` or `job = ...`), B `root/b`."""
    text = (
        f'name = "{name}"\nstart_date = {D1}\n[source_a]\n{a}\n[source_b]\npath = "{root / b}"\n'
        f'[join]\nhow = "left"\njoin_cols = ["TrxId"]\nmax_waiting_time = 1\n{join}\n'
        f'[target]\npath = "{root / name}"\nkeys = ["TrxId"]\nb_keys = ["{b_key}"]\n'
    )
    path = root / "jobs" / f"{name}.toml"
    path.write_text(text)
    return path


def chain(root: Path, scans_keys: str = "") -> None:
    """trx (a with b), trx_scans (trx's target with scans, no aliases set), risk (a feature job: trx_scans' target
    with its fees)."""
    job_file(root, "trx", f'path = "{root / "a"}"', "b", "SepaId")
    job_file(root, "trx_scans", 'job = "trx"', "scans", "ScanId")
    if scans_keys:
        text = (root / "jobs" / "trx_scans.toml").read_text()
        (root / "jobs" / "trx_scans.toml").write_text(text.replace('keys = ["TrxId"]', f"keys = {scans_keys}"))
    (root / "jobs" / "risk.toml").write_text(
        f'name = "risk"\nstart_date = {D1}\n[source_a]\njob = "trx_scans"\n[join]\nalias_a = "A3"\n'
        f'[[features]]\nname = "fees"\npath = "{root / "fees"}"\nhow = "left"\njoin_cols = ["TrxId"]\n'
        f'keys = ["FeeId"]\ncolumns = ["FeeId"]\nmax_waiting_time = 1\n'
        f'[target]\npath = "{root / "risk"}"\nkeys = ["TrxId"]\n'
    )


def test_a_chain_of_three_jobs_validates_before_any_has_run_in_run_order(
    spark: SparkSession, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chain(root)
    assert main(["validate"]) == 0
    out = capsys.readouterr().out
    heads = re.findall(r"^(\w+): valid", out, re.M)
    assert heads == ["trx", "trx_scans", "risk"]  # each after the job whose target it reads
    for job, upstream in (("trx_scans", "trx"), ("risk", "trx_scans")):
        section = out.split(f"{job}: valid")[1].split(": valid")[0]
        assert (
            f"planned          source_a: the target of job {upstream} does not exist yet; checked against the "
            "columns its first run will write" in section
        )
    assert not (root / "trx").exists() and not (root / "state").exists()


def test_a_downstream_naming_a_column_the_upstream_will_not_have_is_refused_before_anything_runs(
    spark: SparkSession, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chain(root, scans_keys='["TrxId", "Nope"]')
    assert main(["validate", "trx_scans"]) == 2
    err = capsys.readouterr().err
    assert "target.keys: column 'Nope' missing from source_a" in err
    assert "source_a: the target of job trx does not exist yet" in err
    written = [name for name in ("trx", "trx_scans", "risk", "state") if (root / name).exists()]
    assert written == []


@pytest.mark.windows  # two jobs run a window each
def test_the_planned_target_schema_is_the_schema_the_first_run_writes(spark: SparkSession, root: Path) -> None:
    chain(root)
    jobs = {name: load_job(root / "jobs" / f"{name}.toml") for name in ("trx", "trx_scans")}
    planned = {name: planned_schema(spark, job) for name, job in jobs.items()}  # before any run
    for name, job in jobs.items():
        run(job, spark=spark)
        assert planned[name] == spark.read.format("delta").load(str(root / name)).schema, name


@pytest.mark.windows  # two jobs run a window each
def test_a_job_on_another_jobs_target_without_aliases_picks_suffixes_that_collide_with_nothing(
    spark: SparkSession, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chain(root)
    assert main(["validate", "trx_scans"]) == 0
    assert re.search(r"^  suffixes +A2 / B2 \(picked, ", capsys.readouterr().out, re.M)
    run(load_job(root / "jobs" / "trx.toml"), spark=spark)
    run(load_job(root / "jobs" / "trx_scans.toml"), spark=spark)
    assert column_names(root / "trx_scans") == [
        "TrxId", "RecDate", "RecDate_A2", "Amount", "RecDate_A", "SepaId", "RecDate_B", "DiffArrivalTime_A2",
        "WaitingTime_A2", "JoinType_A2", "IsFinal_A2", "ScanId", "RecDate_B2", "DiffArrivalTime", "WaitingTime",
        "JoinType", "IsFinal",
    ]  # fmt: skip


@pytest.mark.windows  # two jobs run a window each
def test_explain_and_profile_of_a_job_that_picked_its_suffixes_read_its_target_and_sources_by_them(
    spark: SparkSession, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chain(root)
    run(load_job(root / "jobs" / "trx.toml"), spark=spark)
    run(load_job(root / "jobs" / "trx_scans.toml"), spark=spark)
    capsys.readouterr()
    assert main(["explain", "trx_scans", "TrxId=1"]) == 0
    out = capsys.readouterr().out
    # trx_scans reaches trx's watermark (D1): its A row waits for its scan; RecDate_B would be trx's own (D1).
    assert re.search(r"^  target +JoinType 5, RecDate 2025-03-01, .*RecDate_B2 None$", out, re.M), out
    assert re.search(r"^  why +waiting since 2025-03-01: no B row yet", out, re.M), out
    assert main(["profile", "trx_scans"]) == 0


@pytest.mark.windows  # two jobs run a window each
def test_a_job_on_another_jobs_target_that_sets_its_aliases_keeps_them(spark: SparkSession, root: Path) -> None:
    job_file(root, "trx", f'path = "{root / "a"}"', "b", "SepaId")
    job_file(root, "trx_scans", 'job = "trx"', "scans", "ScanId", 'alias_a = "Trx"\nalias_b = "Scan"')
    run(load_job(root / "jobs" / "trx.toml"), spark=spark)
    run(load_job(root / "jobs" / "trx_scans.toml"), spark=spark)
    names = column_names(root / "trx_scans")
    assert {"RecDate_Trx", "RecDate_Scan", "JoinType_Trx"} <= set(names)
    assert not [name for name in names if name.endswith(("_A2", "_B2"))]
