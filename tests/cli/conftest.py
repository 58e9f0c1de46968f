"""The fixtures the command-line tests share (tests/cli/test_*_command.py and the others split from one file):
the module's Delta sources, a job over them, one job processed through the CLI, and guards. Only the tests that
ask for one get it: `settings_under_tmp` through each module's `pytestmark` (`usefixtures`)."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_commands import Processed
from cli_jobs import A_ROWS, A_SCHEMA, B_ROWS, B_SCHEMA, D1, Sources, settings_env, write_job
from delta_rows import write_rows
from pyspark.sql import SparkSession

from deltainc.cli import spark_start
from deltainc.cli.app import main


@pytest.fixture(scope="module")
def sources(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Sources:
    """The module's source tables, written with delta-rs (no JVM); `spark` starts the worker's session, which the
    commands run in-process then use."""
    root = tmp_path_factory.mktemp("sources")

    def write(name: str, rows: list[tuple[Any, ...]], schema: str) -> str:
        return write_rows(root / name, rows, schema)

    return Sources(
        a=write("a", A_ROWS, A_SCHEMA),
        b=write("b", B_ROWS, B_SCHEMA),
        b_string_key=write("b_str", [(10, "1", "NL", D1)], "SepaId long, TrxId string, Country string, RecDate date"),
        b_without_key=write("b_nokey", [(10, "NL", D1)], "SepaId long, Country string, RecDate date"),
        a_duplicates=write("a_dup", [(1, 10.0, D1), (1, 10.0, D1)], A_SCHEMA),
    )


@pytest.fixture()
def settings_under_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test in its own tmp_path (the working directory) with every setting under it."""
    monkeypatch.chdir(tmp_path)
    for name, value in settings_env(tmp_path).items():
        monkeypatch.setenv(name, value)


@pytest.fixture()
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if the command starts Spark."""

    def refuse(*_args: object) -> None:
        raise AssertionError("the command started Spark")

    monkeypatch.setattr(spark_start, "start_spark", refuse)


@pytest.fixture()
def trx_job(tmp_path: Path, sources: Sources) -> Path:
    """jobs/trx.toml under tmp_path over the module's sources: the first step of tests that start from that job."""
    return write_job(tmp_path, sources)


@pytest.fixture(scope="module")
def processed(spark: SparkSession, sources: Sources, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Processed]:
    """A job run twice through the CLI: `run --until 2025-03-01`, then `run` (2025-03-02)."""
    root = tmp_path_factory.mktemp("processed")
    job = write_job(root, sources)
    outputs = []
    with pytest.MonkeyPatch.context() as patch:
        for name, value in settings_env(root).items():
            patch.setenv(name, value)
        for argv in (["run", str(job), "--until", "2025-03-01"], ["run", str(job)]):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                assert main(argv) == 0
            outputs.append(out.getvalue())
    yield Processed(root, job, tuple(outputs))
