"""No module of deltainc/ is longer than 300 lines (issue 62): a longer one holds more than one concept, and each
change to it means reading all of them. Read from the source; no Spark here."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.pure

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 300


def test_no_module_of_the_package_is_longer_than_300_lines() -> None:
    lengths = {
        path.relative_to(ROOT).as_posix(): len(path.read_text().splitlines())
        for path in sorted((ROOT / "deltainc").rglob("*.py"))
    }
    longer = {name: lines for name, lines in lengths.items() if lines > MAX_LINES}
    assert longer == {}, f"split these modules into ones of one concept each, at most {MAX_LINES} lines: {longer}"
