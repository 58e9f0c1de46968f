"""`make bench` runs: every module of benchmarks/ imports against the package as it stands (a moved pipeline
module once broke the phase profile unnoticed). Importing starts no Spark."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

pytestmark = pytest.mark.pure

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.parametrize("name", sorted(p.stem for p in BENCHMARKS.glob("*.py") if p.stem != "__init__"))
def test_every_benchmark_module_imports(name: str) -> None:
    importlib.import_module(f"benchmarks.{name}")
