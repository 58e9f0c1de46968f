"""`deltainc explain JOB KEY=VALUE`: on the README's seven transactions (look back 2, wait 11; and wait 10, where
transaction 6 times out and its B row is too late), each key's outcome, window and the facts of its sentence; a key
after the watermark, a key nowhere (exit 1), and bad keys (exit 2, naming the column)."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest
from cli_jobs import settings_env
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from seven_transactions import SEVEN

from deltainc.cli.app import main
from deltainc.demo.seed_example import SEED_A_SCHEMA, seed_example
from deltainc.join.options import JoinType

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def root(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seven transactions as Delta tables, and two jobs over them: wait 11 and wait 10 (too-late rows kept)."""
    root = tmp_path_factory.mktemp("explain")
    a, b = seed_example(spark)
    # A reaches the 18th too (a transaction of its own), so that runs reach B's last day.
    filler = (dt.datetime(2025, 3, 18, 9, tzinfo=dt.timezone.utc), "Credit", Decimal("1.00"), "Mr. Y", 100,
              dt.date(2025, 3, 18))  # fmt: skip
    a = a.unionByName(spark.createDataFrame([filler], SEED_A_SCHEMA))
    a.write.format("delta").partitionBy("RecDate").save(str(root / "a"))
    b.write.format("delta").partitionBy("RecDate").save(str(root / "b"))
    (root / "jobs").mkdir()
    jobs = (
        ("bank", 11, ""),
        ("bank10", 10, f'late_rows = "{root / "late"}"\n'),
        ("daily", 10, "change_data_feed = true\n"),
        ("daily_log", 10, 'partition_by = ["RecDate"]\n'),  # the earlier layout, no change data feed
        ("vacuumed", 10, "change_data_feed = true\n"),
        ("vacuumed_log", 10, ""),
    )
    for name, wait, extra in jobs:
        (root / "jobs" / f"{name}.toml").write_text(
            f'name = "{name}"\nstart_date = 2025-03-04\n[source_a]\npath = "{root / "a"}"\n'
            f'[source_b]\npath = "{root / "b"}"\n[join]\nhow = "left"\njoin_cols = ["TrxId"]\n'
            f'look_back_time = 2\nmax_waiting_time = {wait}\n[target]\npath = "{root / f"t_{name}"}"\n'
            f'keys = ["TrxId"]\n{extra}'
        )
    return root


@pytest.fixture(autouse=True)
def settings_under_root(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(root)
    for name, value in settings_env(root).items():
        monkeypatch.setenv(name, value)


def explained(capsys: pytest.CaptureFixture[str], job: str, *pairs: str) -> tuple[int, dict[str, object]]:
    code = main(["explain", job, *pairs, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_each_of_the_seven_transactions_has_its_outcome_and_is_matched_on_the_later_of_its_days(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "bank"]) == 0
    capsys.readouterr()
    for trx, (a, b, outcome) in SEVEN.items():
        code, found = explained(capsys, "bank", f"TrxId={trx}")
        (target,) = found["target_rows"]  # type: ignore[misc]
        assert (code, target["JoinType"], target["RecDate"]) == (0, int(outcome), max(a, b)), trx
        [(a_row,), (b_row,)] = found["a_rows"], found["b_rows"]  # type: ignore[misc]
        assert (a_row["RecDate"], b_row["RecDate"]) == (a, b), trx
        (why,) = found["why"]  # type: ignore[misc]
        assert why.startswith(f"matched on {max(a, b)}: "), why
        days = abs(dt.date.fromisoformat(b) - dt.date.fromisoformat(a)).days
        assert (f"{days} day" in why) if days else ("the same day" in why), why
        assert str(found["history_read"]).startswith("the log entries of 1 commit(s)")  # one run, no change feed
        assert [entry["outcome"] for entry in found["history"]] == [outcome.outcome], trx  # type: ignore[attr-defined]


@pytest.mark.windows  # two runs of the job
def test_with_a_wait_of_10_transaction_6_timed_out_on_the_17th_and_its_b_row_is_in_the_too_late_table(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "bank10", "--until", "2025-03-07"]) == 0
    capsys.readouterr()
    code, found = explained(capsys, "bank10", "TrxId=7")  # its A row of the 8th: after the watermark
    assert code == 0 and found["target_rows"] == [] and found["watermark"] == "2025-03-07"
    assert found["why"] == ["its A row of 2025-03-08 is in a window not yet run (the watermark 2025-03-07)"]
    assert main(["run", "bank10"]) == 0
    capsys.readouterr()
    assert main(["explain", "bank10", "TrxId=6"]) == 0
    out = capsys.readouterr().out
    assert "timed out on 2025-03-17" in out and "arrived on 2025-03-18, 1 day after the window closed" in out
    assert "too-late table" in out
    assert f"target  JoinType {int(JoinType.A_TIMED_OUT)}, RecDate 2025-03-17" in out


def test_a_key_nowhere_exits_1_and_a_bad_key_exits_2_naming_the_column(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = explained(capsys, "bank", "TrxId=99")
    assert (code, found["found"], found["why"]) == (1, False, ["no A row has these keys: nothing to join"])
    assert main(["explain", "bank", "Amount=5"]) == 2
    assert "Amount: not one of target.keys (TrxId)" in capsys.readouterr().err
    assert main(["explain", "bank", "TrxId=abc"]) == 2
    assert "TrxId: 'abc' is not a bigint" in capsys.readouterr().err
    assert main(["explain", "bank", "TrxId"]) == 2
    assert "TrxId: give each key as KEY=VALUE" in capsys.readouterr().err


def test_a_job_whose_source_names_its_own_inc_col_is_refused_naming_the_field(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (root / "jobs" / "own_inc.toml").write_text(
        (root / "jobs" / "bank.toml").read_text().replace('name = "bank"', 'name = "own_inc"')
        .replace("[join]", 'inc_col = "LoadedAt"\n[join]').replace("t_bank", "t_own_inc")
    )  # fmt: skip
    assert main(["explain", "own_inc", "TrxId=6"]) == 2
    assert "source_b.inc_col: explain reads both sources by [join] inc_col ('RecDate')" in capsys.readouterr().err
    assert not (root / "t_own_inc").exists()


def test_explain_writes_nothing(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "bank"]) == 0  # the target and the state exist (a second run: nothing pending)
    logs = sorted(str(p) for p in root.rglob("_delta_log/*"))
    for pair in ("TrxId=6", "TrxId=99", "TrxId=abc"):
        main(["explain", "bank", pair])
    capsys.readouterr()
    assert sorted(str(p) for p in root.rglob("_delta_log/*")) == logs


@pytest.mark.windows  # a window a day, two jobs
def test_the_history_shows_each_commit_that_wrote_the_row_with_its_run_and_window_with_or_without_a_change_feed(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    histories = {}
    for job in ("daily", "daily_log"):  # the current layout with a change data feed; the earlier one without
        text = (root / "jobs" / f"{job}.toml").read_text()
        (root / "jobs" / f"{job}.toml").write_text(
            text.replace("start_date = 2025-03-04\n", "start_date = 2025-03-04\nmax_window = 1\n")
        )
        assert main(["run", job]) == 0
        capsys.readouterr()
        code, found = explained(capsys, job, "TrxId=6")
        assert code == 0 and isinstance(found["history"], list)
        histories[job] = found
    history = histories["daily"]["history"]
    first, last = history[0], history[-1]  # type: ignore[index]
    assert (first["outcome"], first["window"]) == ("a_waiting", "2025-03-07..2025-03-07")
    assert (last["outcome"], last["window"], last["RecDate"]) == ("a_timed_out", "2025-03-17..2025-03-17", "2025-03-17")
    assert all(entry["run_id"] and entry["command"] == "run" for entry in history)  # type: ignore[attr-defined]
    assert [e["version"] for e in history] == sorted(e["version"] for e in history)  # type: ignore[attr-defined]
    facts = {job: [(e["version"], e["outcome"], e["RecDate"], e["window"]) for e in found["history"]]  # type: ignore[attr-defined]
             for job, found in histories.items()}  # fmt: skip
    assert facts["daily_log"] == facts["daily"]
    from_log = histories["daily_log"]
    assert str(from_log["history_read"]).startswith("the log entries of 11 commit(s) of the runs")
    files = from_log["files_read"]["target history"]  # type: ignore[index]
    assert len(history) <= files <= 11, files  # one file a commit that wrote the key, none of the other days
    # The log's retention removes the commit files before a checkpoint: the history reads the ones left, says so.
    log = root / "t_daily_log" / "_delta_log"
    assert (log / f"{10:020d}.checkpoint.parquet").is_file()
    for version in range(10):
        (log / f"{version:020d}.json").unlink()
    code, found = explained(capsys, "daily_log", "TrxId=6")
    left = [entry["version"] for entry in found["history"]]  # type: ignore[attr-defined]
    assert code == 0 and left == [v for v, *_ in facts["daily"] if v >= 10] and left, left
    assert "removed by the log's retention" in str(found["history_read"]), found["history_read"]


@pytest.mark.windows  # four windows a job, two jobs
def test_after_a_vacuum_explain_reads_the_history_left_and_says_which_commits_files_vacuum_removed(
    spark: SparkSession, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check = "spark.databricks.delta.retentionDurationCheck.enabled"
    for job in ("vacuumed", "vacuumed_log"):  # with a change data feed and without
        for until in ("2025-03-07", "2025-03-08", "2025-03-09", None):  # transaction 6 waits 3 days, times out
            assert main(["run", job, *(["--until", until] if until else [])]) == 0
        capsys.readouterr()
        _, before = explained(capsys, job, "TrxId=6")
        waiting = [e["version"] for e in before["history"] if e["outcome"] == "a_waiting"]  # type: ignore[attr-defined]
        assert len(waiting) == 3, before["history"]
        kept = spark.conf.get(check)
        spark.conf.set(check, "false")
        try:
            spark.sql(f"VACUUM delta.`{root / f't_{job}'}` RETAIN 0 HOURS").collect()
        finally:
            spark.conf.set(check, kept)
        code, found = explained(capsys, job, "TrxId=6")
        assert code == 0, found
        same = ("a_rows", "b_rows", "target_rows", "why", "watermark")
        assert {k: found[k] for k in same} == {k: before[k] for k in same}
        left = [e["version"] for e in found["history"]]  # type: ignore[attr-defined]
        assert left and not set(left) & set(waiting), found["history"]  # the waiting rows' files are gone
        read = str(found["history_read"])
        removed = ", ".join(str(v) for v in waiting)
        assert f"removed by VACUUM (versions {removed})" in read and found["history_vacuumed"] == waiting, read
        assert main(["explain", job, "TrxId=6"]) == 0
        assert f"removed by VACUUM (versions {removed})" in capsys.readouterr().out


def test_an_a_row_the_jobs_where_leaves_out_is_said_to_be_left_out(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (root / "jobs" / "bank.toml").read_text().replace('name = "bank"', 'name = "bank_where"')
    text = text.replace(
        f'[source_a]\npath = "{root / "a"}"\n', f'[source_a]\npath = "{root / "a"}"\nwhere = "TrxId <> 3"\n'
    )
    (root / "jobs" / "bank_where.toml").write_text(text.replace('t_bank"', 't_bank_where"'))
    code, found = explained(capsys, "bank_where", "TrxId=3")
    assert (code, len(found["a_rows"]), found["why"]) == (0, 1, ["its A row is left out by the job's where condition"])  # type: ignore[arg-type]
    code, found = explained(capsys, "bank_where", "TrxId=2")  # kept: not run yet
    assert found["why"] == ["its A row of 2025-03-06 is in a window not yet run (no run yet)"]


def test_a_b_row_of_a_full_outer_job_is_explained_by_its_b_keys(
    spark: SparkSession, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, b = seed_example(spark)
    only_b = spark.createDataFrame([(50, "DE", dt.date(2025, 3, 9))], b.schema)  # a payment no ledger row has
    b.unionByName(only_b).withColumn("PayId", F.col("TrxId") * 10).write.format("delta").save(str(root / "b_full"))
    text = (root / "jobs" / "bank.toml").read_text().replace('name = "bank"', 'name = "bank_full"')
    text = text.replace('how = "left"', 'how = "full_outer"').replace(str(root / "b"), str(root / "b_full"))
    (root / "jobs" / "bank_full.toml").write_text(text.replace('t_bank"', 't_bank_full"') + 'b_keys = ["PayId"]\n')
    assert main(["run", "bank_full"]) == 0
    capsys.readouterr()
    code, found = explained(capsys, "bank_full", "PayId=500")
    assert (code, [(t["JoinType"], t["RecDate"]) for t in found["target_rows"]]) == (  # type: ignore[attr-defined]
        0,
        [(int(JoinType.NOT_MATCHED), "2025-03-11")],  # it waited look_back_time (2 days) for an A row
    )
    (why,) = found["why"]  # type: ignore[misc]
    assert why.startswith("not matched on 2025-03-11: ") and "2025-03-09" not in why.split(":")[0], why
    code, found = explained(capsys, "bank_full", "PayId=50")  # transaction 5's payment
    (why,) = found["why"]  # type: ignore[misc]
    assert (code, why.startswith("matched on 2025-03-12: the A row of 2025-03-07")) == (0, True), why
    assert main(["explain", "bank_full", "PayId=x"]) == 2
    assert "PayId: 'x' is not a bigint (the column's type in source_b)" in capsys.readouterr().err
