"""The Airflow recipes the docs show are the DAG files `make airflow-check` runs under Airflow 3
(docs/production/airflow/, tests/tools/airflow_check.py): every Airflow block of the pages is one of them word for word,
and each file is shown. Read as text; Airflow is not installed here."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_readme import blocks

pytestmark = pytest.mark.pure

DOCS = Path(__file__).resolve().parents[1] / "docs"
RECIPES = sorted((DOCS / "production" / "airflow").glob("*.py"))
PAGES = [DOCS / "production" / "scheduling.md", DOCS / "production" / "checks.md"]


def test_every_airflow_block_of_the_docs_is_a_tested_dag_file_and_each_file_is_shown() -> None:
    files = {path.read_text(encoding="utf-8"): path.name for path in RECIPES}
    shown = [(page.name, line, code) for page, line, code in blocks("python", PAGES) if "airflow" in code]
    assert shown, "the pages show no Airflow recipe"
    strays = [(page, line) for page, line, code in shown if code not in files]
    assert strays == [], f"Airflow blocks that are no file of docs/production/airflow/: {strays}"
    assert {files[code] for _, _, code in shown} == {path.name for path in RECIPES}
