"""The exit codes 1 and 2 of the commands through `deltainc.cli.app.main`: an unexpected failure, and a job
file, settings file or command line that is invalid, each refused naming the culprit before Spark starts."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import pytest
from cli_commands import nothing_written
from cli_jobs import Sources, edit, write_job
from pyspark.sql import SparkSession

from deltainc.cli import app as cli
from deltainc.cli.app import main

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("settings_under_tmp")]


# --- exit codes 1 and 2 --------------------------------------------------------------------------------------------


def test_an_unexpected_failure_exits_1_with_one_line_and_the_trace_only_with_verbose(
    spark: SparkSession, trx_job: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from deltainc.pipeline.inspect import status_from_logs as status_module

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(status_module, "status_from_log", broken)
    assert main(["status", "trx"]) == 1
    assert capsys.readouterr().err == "deltainc: error: RuntimeError: boom (--verbose for the full trace)\n"
    assert main(["status", "trx", "--verbose"]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last):" in err
    assert err.endswith("deltainc: error: RuntimeError: boom\n")


def test_py4j_tracebacks_of_a_lost_jvm_connection_are_shown_only_with_verbose(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    # Py4J logs on the root logger from its own module when a SIGTERM stops the JVM under a call; the command's
    # own line says what happened. Other libraries' root records and the package's warnings still show, once.
    import py4j.java_gateway

    def logged(verbose: bool) -> tuple[list[str], str]:
        caplog.clear()
        with cli.command_logging("INFO", verbose):
            for message, path in [("lost connection", py4j.java_gateway.__file__), ("other library", __file__)]:
                fields = {"msg": message, "pathname": path, "levelno": logging.ERROR, "levelname": "ERROR"}
                logging.getLogger().handle(logging.makeLogRecord(fields))
            logging.getLogger("deltainc").warning("a package warning")
        return caplog.messages, capsys.readouterr().err

    assert logged(verbose=False) == (["other library"], "deltainc: WARNING: a package warning\n")
    assert logged(verbose=True) == (["lost connection", "other library"], "deltainc: WARNING: a package warning\n")


@pytest.mark.parametrize(
    "old, new, message",
    [
        ('how = "left"', 'how = "left', r"jobs/trx\.toml: invalid TOML: "),
        ("look_back_time = 1", "lookback_time = 1", r"jobs/trx\.toml: join\.lookback_time: unknown key"),
        ("look_back_time = 1", "look_back_time = -1", r"jobs/trx\.toml: join\.look_back_time: must be >= 0 \(got -1\)"),
        ('how = "left"', 'how = "right"', r"jobs/trx\.toml: join\.how: expected one of inner, .*, got 'right'"),
        ('keys = ["TrxId"]', "keys = []", r"jobs/trx\.toml: target\.keys: must list at least one column"),
    ],
    ids=["does_not_parse", "unknown_key", "negative_look_back_time", "unknown_join_type", "empty_keys"],
)
def test_a_job_file_that_is_invalid_exits_2_naming_the_field_before_spark_starts(
    tmp_path: Path,
    sources: Sources,
    capsys: pytest.CaptureFixture[str],
    no_spark: None,
    old: str,
    new: str,
    message: str,
) -> None:
    edit(write_job(tmp_path, sources), old, new)
    assert main(["run", "trx"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert re.match(rf"deltainc: error: .*{message}", err), err
    assert nothing_written(tmp_path)


def test_validate_of_a_job_file_with_a_misspelt_key_exits_2_naming_it_and_the_key_it_means(
    tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str], no_spark: None
) -> None:
    edit(write_job(tmp_path, sources), "max_waiting_time =", "max_wating_time =")
    assert main(["validate", "trx"]) == 2
    err = capsys.readouterr().err
    assert "join.max_wating_time: unknown key; did you mean 'max_waiting_time'?" in err, err
    assert nothing_written(tmp_path)


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("missing_source", r"source_a: no Delta table at path .*/missing"),
        ("missing_key_column", r"join_cols: column 'TrxId' missing from source_b \(columns: SepaId, Country, "),
        ("missing_target_key", r"target\.keys: column 'AccountId' missing from source_a \(columns: TrxId, Amount, "),
        ("mismatched_key_types", r"join_cols: key 'TrxId' has type bigint in source_a but string in source_b"),
        (
            "output_column_collision",
            r"output column collision: 'RecDate' from the output inc_col collides with "
            r"join_cols",
        ),
        ("hour_job_on_a_date_column", r"time_uom: 'hour' needs a timestamp 'RecDate', but column 'RecDate' of "),
    ],
)
def test_a_job_that_does_not_fit_its_sources_exits_2_naming_the_culprit_before_spark_starts(
    tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str], no_spark: None, case: str, message: str
) -> None:
    job = write_job(tmp_path, sources)
    if case == "missing_source":
        edit(job, sources.a, str(tmp_path / "missing"))
    elif case == "missing_key_column":
        edit(job, sources.b, sources.b_without_key)
    elif case == "missing_target_key":
        edit(job, 'keys = ["TrxId"]', 'keys = ["AccountId"]')
    elif case == "mismatched_key_types":
        edit(job, sources.b, sources.b_string_key)
    elif case == "hour_job_on_a_date_column":
        edit(job, 'how = "left"', 'how = "left"\ntime_uom = "hour"')
    else:
        edit(job, 'join_cols = ["TrxId"]', 'join_cols = ["TrxId", "RecDate"]')
    for command in ("run", "validate"):
        assert main([command, "trx"]) == 2
        out, err = capsys.readouterr()
        assert out == ""
        assert re.match(rf"deltainc: error: {message}", err), err
    assert nothing_written(tmp_path)


def test_ambiguous_source_rows_exit_2_before_the_target_is_written(
    spark: SparkSession, tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str]
) -> None:
    write_job(tmp_path, sources, a=sources.a_duplicates)
    assert main(["run", "trx"]) == 2
    assert re.match(
        r"deltainc: error: target identity TrxId, RecDate_A, SepaId, RecDate_B is not unique in the join "
        r"output: TrxId=1, .*\(2 rows\)",
        capsys.readouterr().err,
    )
    assert not (tmp_path / "target_trx").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["rerun", "trx", "--start", "2025-03-02", "--end", "2025-03-01"],
            r"deltainc: error: --start 2025-03-02 is after --end 2025-03-01: invalid window\n",
        ),
        (
            ["backfill", "trx", "--start", "2025-03-02", "--end", "2025-03-01"],
            r"deltainc: error: --start 2025-03-02 is after --end 2025-03-01: invalid window\n",
        ),
        (
            ["run", "trx", "--until", "2025-13-01"],
            r"usage: deltainc run .*\ndeltainc: error: argument --until: expected a date like 2025-03-07, "
            r"got '2025-13-01'\n",
        ),
        (
            ["run", "trx", "--conf", "spark.executor.memory"],
            r"usage: .*\ndeltainc: error: argument --conf: expected key=value "
            r"\(e\.g\. spark\.executor\.memory=4g\), got 'spark\.executor\.memory'\n",
        ),
        (
            ["run", "nosuchjob"],
            r"deltainc: error: job 'nosuchjob': no such job file and no .*jobs/nosuchjob\.toml "
            r"\(jobs in .*: trx\)\n",
        ),
        (["status", "trx", "--settings", "missing.toml"], r"deltainc: error: --settings: no such file missing\.toml\n"),
    ],
    ids=[
        "rerun_window_start_after_end",
        "backfill_window_start_after_end",
        "bad_date",
        "bad_conf",
        "unknown_job",
        "missing_settings_file",
    ],
)
def test_invalid_command_line_input_exits_2_before_spark_starts(
    tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str], no_spark: None, argv: list[str], message: str
) -> None:
    write_job(tmp_path, sources)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert re.fullmatch(message, err, re.S), err
    assert nothing_written(tmp_path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[spark\n", r"deltainc: error: settings\.toml: invalid TOML: "),
        (
            '[spark]\nmastr = "local[1]"\n',
            r"deltainc: error: settings \(settings\.toml or DELTAINC_\* variables\): "
            r"spark\.mastr: Extra inputs are not permitted",
        ),
        (
            "lock_expiry_seconds = 0\n",
            r"deltainc: error: settings \(.*\): lock_expiry_seconds: Input should "
            r"be greater than or equal to 10 \(got 0\)",
        ),
    ],
    ids=["does_not_parse", "unknown_key", "out_of_range"],
)
def test_an_invalid_settings_file_exits_2_naming_the_file_and_field(
    tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str], no_spark: None, text: str, message: str
) -> None:
    write_job(tmp_path, sources)
    (tmp_path / "settings.toml").write_text(text)
    assert main(["--settings", "settings.toml", "validate", "trx"]) == 2
    assert re.match(message, capsys.readouterr().err)
    assert os.environ["DELTAINC_SETTINGS_FILE"].endswith("no-settings-file.toml")  # the command never writes it
