"""docs/design.md cannot rot: the code points at its headings, and the tests it cites exist. No Spark here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.pure

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "design.md"
SCANNED = ("deltainc", "jobs", "tests", "benchmarks")
TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".json", ".yml", ".yaml", ".cfg", ".sh"}
REFERENCE = re.compile(r"docs/design\.md#([\w-]+)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _scanned_files() -> list[Path]:
    """The text files of the code, tests and benchmarks, this file left out."""
    return [
        path
        for folder in SCANNED
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in TEXT_SUFFIXES and "__pycache__" not in path.parts and path != Path(__file__).resolve()
    ]


def _anchors(markdown: str) -> set[str]:
    """GitHub's anchors of the headings: lowercase, punctuation dropped, spaces to hyphens, repeats numbered."""
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#+\s+(.+?)\s*$", FENCE.sub("", markdown), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def test_no_file_names_the_external_design_document() -> None:
    external = "DESIGN" + ".md"
    naming = [str(p.relative_to(ROOT)) for p in _scanned_files() if external in p.read_text(errors="replace")]
    assert naming == [], f"point these at docs/design.md#<section> instead: {naming}"


def test_every_design_doc_reference_finds_its_heading() -> None:
    anchors = _anchors(DESIGN.read_text())
    referring = {p: p.read_text(errors="replace") for p in [*_scanned_files(), ROOT / "README.md"]}
    broken = [
        f"{p.relative_to(ROOT)}: #{anchor}"
        for p, text in referring.items()
        for anchor in REFERENCE.findall(text)
        if anchor not in anchors
    ]
    broken += [f"docs/design.md: #{a}" for a in re.findall(r"\]\(#([\w-]+)\)", DESIGN.read_text()) if a not in anchors]
    assert broken == [], f"no such heading in docs/design.md: {broken}"


def test_every_test_the_design_doc_cites_exists() -> None:
    cited = set(re.findall(r"`(test_\w+)`", DESIGN.read_text()))
    defined = {
        name
        for path in (ROOT / "tests").rglob("*.py")
        for name in re.findall(r"^\s*(?:async\s+)?def (test_\w+)\(", path.read_text(), re.M)
    }
    assert cited, "docs/design.md cites no test"
    assert sorted(cited - defined) == []


def test_every_source_file_the_design_doc_names_exists() -> None:
    named = set(re.findall(r"deltainc/[\w/]+\.py", DESIGN.read_text()))
    assert sorted(name for name in named if not (ROOT / name).exists()) == []


def _code_map() -> str:
    """The section "Where the code is": which folder each command enters, what each folder holds."""
    text = DESIGN.read_text()
    return text[text.index("## Where the code is") : text.index("What a command returns has one type per level.")]


def test_the_code_map_names_every_folder_of_the_package() -> None:
    folders = {f"{path.parent.relative_to(ROOT)}/" for path in (ROOT / "deltainc").rglob("__init__.py")}
    rows = set(re.findall(r"^\| `(deltainc/(?:\w+/)*)(?:\*\.py)?` \|", _code_map(), re.M))
    assert sorted(folders - rows) == []


def test_every_module_the_code_map_names_exists_in_its_folder() -> None:
    missing = [
        f"{folder}{name}"
        for folder, held in re.findall(r"^\| `(deltainc/(?:\w+/)*)(?:\*\.py)?` \| ([^|]*) \|", _code_map(), re.M)
        for name in re.findall(r"`(\w+\.py)`", held)
        if not (ROOT / folder / name).exists()
    ]
    missing += [
        path
        for path in re.findall(r"`((?:cli|pipeline)/[\w/]+\.py)`", _code_map())
        if not (ROOT / "deltainc" / path).exists()
    ]
    assert missing == []
