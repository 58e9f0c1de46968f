"""README.md cannot rot: its Python runs, its command lines parse, its reference tables name every key."""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

import deltainc.spark
from deltainc.cli.app import build_parser
from deltainc.pipeline.job.config import FeatureConfig, JobConfig, JoinConfig, StateConfig, TableRef, TargetConfig
from deltainc.pipeline.target.write_mode import TargetWrite
from deltainc.settings import Settings, SparkSettings, StorageSettings

pytestmark = pytest.mark.pure

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
COMMAND = re.compile(r"(?:^|\s)(?:\S*/)?(?:deltainc|jobs/run_job\.py)\s+(.*)$")


def blocks(language: str) -> list[tuple[int, str]]:
    """(first line number, code) of every fenced block in `language`, in order."""
    text = README.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        if match.group(1) == language:
            first_line = text.count("\n", 0, match.start(2)) + 1
            found.append((first_line, match.group(2)))
    return found


def missing_module(code: str) -> str | None:
    """A top-level package the block imports that is not installed here (Airflow), else None."""
    for name in re.findall(r"^\s*(?:from|import)\s+(\w+)", code, re.M):
        if importlib.util.find_spec(name) is None:
            return name
    return None


def scratch_conf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy of the repository's conf/ in tmp_path, made the working directory.

    The job files' relative paths are made absolute against the working directory when they are loaded,
    so everything the snippets write lands under tmp_path, never in the repository.
    """
    shutil.copytree(ROOT / "conf", tmp_path / "conf")
    monkeypatch.chdir(tmp_path)


@pytest.mark.spark
def test_the_python_blocks_run_in_order(spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ```python block, in one namespace, from a scratch folder holding a copy of the repository's conf/."""
    python = blocks("python")
    assert len(python) >= 4
    scratch_conf(tmp_path, monkeypatch)
    monkeypatch.setattr(deltainc.spark, "get_spark", lambda *args, **kwargs: spark)
    namespace: dict[str, object] = {"__name__": "readme"}
    skipped = []
    for first_line, code in python:
        absent = missing_module(code)
        if absent is not None:
            skipped.append(absent)
            continue
        # Padding keeps the line numbers of a traceback equal to README.md's.
        exec(compile("\n" * (first_line - 1) + code, str(README), "exec"), namespace)
    assert set(skipped) <= {"airflow", "pendulum"}
    assert namespace["spark"] is spark
    assert (tmp_path / "data" / "trx_joined" / "_delta_log").is_dir()  # the quickstart wrote under tmp_path only


def test_every_command_line_parses() -> None:
    parser = build_parser()
    lines = [line for _, code in blocks("bash") for line in code.splitlines()]
    commands = [m.group(1) for line in lines if (m := COMMAND.search(line.split("#")[0].rstrip()))]
    assert len(commands) >= 5
    for command in commands:
        words = shlex.split(command.replace("\\", ""))
        parser.parse_args(words)  # raises SystemExit on a usage error


def test_every_command_of_the_cli_is_documented() -> None:
    text = README.read_text(encoding="utf-8")
    parser = build_parser()
    subcommands = next(a for a in parser._actions if a.dest == "command").choices
    for name in subcommands:
        assert f"| `{name}" in text, name
    for option in ("--settings", "--master", "--conf", "--json", "--verbose"):
        assert f"`{option}" in text, option


def test_the_reference_tables_name_every_key() -> None:
    text = README.read_text(encoding="utf-8")
    for model in (JobConfig, JoinConfig, TargetConfig, StateConfig, TableRef, FeatureConfig):
        for name in model.model_fields:
            forms = (f"`{name}`", f"`[{name}]`", f"] `{name}`", f"`[[{name}]]`")
            assert any(form in text for form in forms), f"{model.__name__}.{name}"
    for name in Settings.model_fields:
        if name not in ("spark", "storage"):  # tables: their keys are checked below
            assert f"`{name}`" in text, name
    for name in SparkSettings.model_fields:
        assert f"spark.{name}" in text, name
    for name in StorageSettings.model_fields:
        assert f"storage.{name}" in text, name


def test_the_run_log_reference_names_every_way_a_window_is_written() -> None:
    text = README.read_text(encoding="utf-8")
    listed = text[text.index("how it wrote (`target_write`:") :].split(")", 1)[0]
    assert [way for way in TargetWrite if f"`{way}`" not in listed] == []
