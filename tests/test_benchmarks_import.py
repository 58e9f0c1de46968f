"""`make bench` runs: every module of benchmarks/ imports against the package as it stands (a moved pipeline
module once broke the phase profile unnoticed). Importing starts no Spark."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

pytestmark = pytest.mark.pure

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


MODULES = sorted(
    ".".join(("benchmarks", *path.relative_to(BENCHMARKS).with_suffix("").parts)).removesuffix(".__init__")
    for path in BENCHMARKS.rglob("*.py")
)


def test_the_modules_of_the_sub_packages_are_found() -> None:
    assert {"benchmarks.scenarios.daily", "benchmarks.report.render", "benchmarks.harness.registry"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_every_benchmark_module_imports(name: str) -> None:
    importlib.import_module(name)
