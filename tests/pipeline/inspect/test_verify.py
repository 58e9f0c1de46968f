"""`deltainc verify`: the target against a one-shot recompute of a range, row for row, without writing."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from cli_jobs import Sources, settings_env, write_job
from frames import frame
from pyspark.sql import SparkSession

from deltainc.cli.app import main
from deltainc.pipeline.delta.sources import latest_commit
from deltainc.pipeline.delta.sql import table_name
from deltainc.pipeline.job.sections import TableRef

pytestmark = pytest.mark.spark

D1, D2 = dt.date(2025, 3, 1), dt.date(2025, 3, 2)


@pytest.fixture(scope="module")
def job_root(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A left job run over two days: TrxId 1 and 3 matched, 2's B a day late, 4 still waiting."""
    tmp_path = tmp_path_factory.mktemp("verify")
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    frame(
        spark, [(1, 10.0, D1), (2, 20.0, D1), (3, 30.0, D2), (4, 40.0, D2)], "TrxId long, Amount double, RecDate date"
    ).write.format("delta").partitionBy("RecDate").save(a)
    b_rows = [(10, 1, "NL", D1), (11, 2, "NL", D2), (12, 3, "DE", D2)]
    b_schema = "SepaId long, TrxId long, Country string, RecDate date"
    frame(spark, b_rows, b_schema).write.format("delta").partitionBy("RecDate").save(b)
    write_job(tmp_path, Sources(a=a, b=b, b_string_key="", b_without_key="", a_duplicates=""))
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        for name, value in settings_env(tmp_path).items():
            patch.setenv(name, value)
        assert main(["run", "trx"]) == 0
    return tmp_path


@pytest.fixture()
def processed(job_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The processed job's folder, its settings in the environment."""
    monkeypatch.chdir(job_root)
    for name, value in settings_env(job_root).items():
        monkeypatch.setenv(name, value)
    return job_root


def verify(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["verify", "trx", *args])
    return code, capsys.readouterr().out


def test_a_target_built_by_the_job_equals_its_reload(processed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code, out = verify([], capsys)
    assert code == 0
    assert out == (
        "verify trx 2025-03-01..2025-03-02 (watermark 2025-03-02): target 4 rows, recompute 4 rows: equal\n"
        "  read 2 file(s) of A, 2 of B, 3 of the target\n"  # 03-01's final rows, 03-02's final and its open rows
    )  # an equal range in --json: the drift test's range on the 1st


@pytest.mark.windows  # verify, three times, after the run that built the target
def test_a_row_changed_behind_the_jobs_back_is_drift(
    spark: SparkSession, processed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = TableRef(path=str(processed / "target_trx"))
    version = latest_commit(spark, target)["version"]  # type: ignore[index]
    spark.sql(f"UPDATE {table_name(target)} SET JoinType = 4 WHERE TrxId = 4")  # waiting -> timed out, by hand
    capsys.readouterr()
    code, out = verify([], capsys)
    assert code == 1
    assert "recompute 4 rows: DRIFT" in out
    assert "  only in the target: a_timed_out 1\n" in out and "  only in the recompute: a_waiting 1\n" in out
    assert out.endswith(  # the hint names the earliest drifted date, from which a rerun makes the target a reload
        "  the target drifted from a reload from 2025-03-02 on; `deltainc rerun trx --start 2025-03-02` rewrites it\n"
    )
    code, out = verify(["--json"], capsys)
    document = json.loads(out)
    assert (code, document["equal"], document["only_in_target"], document["only_in_recompute"]) == (
        1, False, {"a_timed_out": 1}, {"a_waiting": 1})  # fmt: skip
    assert [row["TrxId"] for row in document["sample_only_in_target"]] == [4]
    assert document["earliest_drift"] == "2025-03-02"
    code, out = verify(["--start", "2025-03-01", "--end", "2025-03-01", "--json"], capsys)  # the drift is on the 2nd
    document = json.loads(out)
    assert (code, document["equal"], document["only_in_target"], document["only_in_recompute"]) == (0, True, {}, {})
    assert (document["window"], document["watermark"], document["earliest_drift"]) == ("2025-03-01", "2025-03-02", None)
    read = (document["files_read_a"], document["files_read_b"], document["files_read_target"])
    assert read == (1, 1, 1)  # only the range's partitions
    assert latest_commit(spark, target)["version"] == version + 1  # type: ignore[index]  # verify wrote nothing
    spark.sql(f"RESTORE TABLE {table_name(target)} TO VERSION AS OF {version}")  # for the other tests


def test_a_range_past_the_watermark_or_a_job_never_run_cannot_be_verified(
    processed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["verify", "trx", "--start", "2025-03-01", "--end", "2025-03-03"]) == 2
    assert "verify: --end 2025-03-03 is after the watermark 2025-03-02" in capsys.readouterr().err
    write_job(processed, Sources(a=str(processed / "a"), b=str(processed / "b"), b_string_key="", b_without_key="",
                                 a_duplicates=""), name="fresh")  # fmt: skip
    assert main(["verify", "fresh"]) == 2
    assert "verify: job 'fresh' has not run yet" in capsys.readouterr().err
