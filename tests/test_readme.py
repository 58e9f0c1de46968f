"""README.md and the documentation site cannot rot: their Python runs, their command lines parse, their reference
pages name every key and command, and the README's links find their files."""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from pyspark.sql import SparkSession

import deltainc.spark
from deltainc.cli.app import build_parser
from deltainc.pipeline.job.checks_section import ChecksConfig
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.sections import FeatureConfig, JoinConfig, StateConfig, TableRef, TargetConfig
from deltainc.pipeline.target.write_mode import TargetWrite
from deltainc.settings import Settings, SparkSettings, StorageSettings

pytestmark = pytest.mark.pure

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# A fenced block, indented or not (a block inside a list item is indented in Markdown).
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```", re.S | re.M)
COMMAND = re.compile(r"(?:^|\s)(?:\S*/)?(?:deltainc|jobs/run_job\.py)\s+(.*)$")
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)\s]*)?\)")


def _nav_pages(nav: list[Any]) -> list[str]:
    """The pages of mkdocs.yml's nav, in order (a section's pages in place of the section)."""
    pages: list[str] = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages.extend(_nav_pages(value) if isinstance(value, list) else [value])
    return pages


def site_pages() -> list[Path]:
    """The documentation site's pages in the order of its navigation (the order a reader meets them)."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return [DOCS / page for page in _nav_pages(config["nav"])]


def blocks(language: str, pages: list[Path]) -> list[tuple[Path, int, str]]:
    """(page, first line number, code) of every fenced block in `language`, page by page, in order."""
    found = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match.group(2) == language:
                first_line = text.count("\n", 0, match.start(3)) + 1
                found.append((page, first_line, textwrap.dedent(match.group(3))))
    return found


def missing_module(code: str) -> str | None:
    """A top-level package the block imports that is not installed here (Airflow), else None."""
    for name in re.findall(r"^\s*(?:from|import)\s+(\w+)", code, re.M):
        if importlib.util.find_spec(name) is None:
            return name
    return None


@pytest.mark.windows
def test_the_python_blocks_of_the_readme_and_the_docs_run_in_order(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ```python block of the README, then of the site's pages in the order of its navigation, in one
    namespace, from a scratch folder holding a copy of the repository's conf/. A block that a page repeats word
    for word (the README's quickstart is also Getting started's) runs once.

    The job files' relative paths are made absolute against the working directory when they are loaded, so
    everything the snippets write lands under tmp_path, never in the repository.
    """
    readme, site = blocks("python", [README]), blocks("python", site_pages())
    assert len(readme) >= 2 and len(site) >= 6
    shutil.copytree(ROOT / "conf", tmp_path / "conf")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(deltainc.spark, "get_spark", lambda *args, **kwargs: spark)
    namespace: dict[str, object] = {"__name__": "docs"}
    skipped, ran = [], set()
    for page, first_line, code in [*readme, *site]:
        absent = missing_module(code)
        if absent is not None:
            skipped.append(absent)
            continue
        if code in ran:
            continue
        ran.add(code)
        # Padding keeps the line numbers of a traceback equal to the page's.
        exec(compile("\n" * (first_line - 1) + code, str(page), "exec"), namespace)
    assert set(skipped) <= {"airflow", "pendulum"}
    assert namespace["spark"] is spark
    assert (tmp_path / "data" / "trx_joined" / "_delta_log").is_dir()  # the quickstart wrote under tmp_path only


def test_every_command_line_parses() -> None:
    parser = build_parser()
    lines = [line for _, _, code in blocks("bash", [README, *site_pages()]) for line in code.splitlines()]
    commands = [m.group(1) for line in lines if (m := COMMAND.search(line.split("#")[0].rstrip()))]
    assert len(commands) >= 10
    for command in commands:
        words = shlex.split(command.replace("\\", ""))
        parser.parse_args(words)  # raises SystemExit on a usage error


def test_every_command_of_the_cli_is_documented() -> None:
    text = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    parser = build_parser()
    subcommands = next(a for a in parser._actions if a.dest == "command").choices
    for name in subcommands:
        assert f"| `{name}" in text, name
    for option in ("--settings", "--master", "--conf", "--json", "--verbose", "--version"):
        assert f"`{option}" in text, option


def test_the_reference_pages_name_every_key() -> None:
    job_file = (DOCS / "reference" / "job-file.md").read_text(encoding="utf-8")
    for model in (JobConfig, JoinConfig, TargetConfig, StateConfig, TableRef, FeatureConfig, ChecksConfig):
        for name in model.model_fields:
            forms = (f"`{name}`", f"`[{name}]`", f"] `{name}`", f"`[[{name}]]`")
            assert any(form in job_file for form in forms), f"{model.__name__}.{name}"
    settings = (DOCS / "reference" / "settings.md").read_text(encoding="utf-8")
    for name in Settings.model_fields:
        if name not in ("spark", "storage"):  # tables: their keys are checked below
            assert f"`{name}`" in settings, name
    for name in SparkSettings.model_fields:
        assert f"spark.{name}" in settings, name
    for name in StorageSettings.model_fields:
        assert f"storage.{name}" in settings, name


def test_the_run_log_reference_names_every_way_a_window_is_written() -> None:
    text = (DOCS / "production" / "state.md").read_text(encoding="utf-8")
    listed = text[text.index("how it wrote (`target_write`:") :].split(")", 1)[0]
    assert [way for way in TargetWrite if f"`{way}`" not in listed] == []


def test_the_readmes_links_find_their_files() -> None:
    """The README is read on the repository's page, outside the site's strict build: its relative links are
    checked here."""
    targets = [t for t in LINK.findall(README.read_text(encoding="utf-8")) if "://" not in t]
    assert targets, "the README links to no page"
    assert [t for t in targets if not (ROOT / t).exists()] == []


def test_the_version_the_pages_name_is_the_packages() -> None:
    """The wheel's file name and the release the pages name follow deltainc/_version.py."""
    pages = [README, *site_pages()]
    forms = r"deltainc-(\d+\.\d+\.\d+)-py3|release (\d+\.\d+\.\d+)|`deltainc (\d+\.\d+\.\d+)`"
    named = {v for page in pages for found in re.findall(forms, page.read_text(encoding="utf-8")) for v in found if v}
    assert named == {deltainc.__version__}
