"""The benchmarks are one harness (issue 62): every scenario runs in the harness's process, and none patches the
package to see a run's phases. Read from the source with ast; no Spark here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.pure

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
# The modules started as `python -m benchmarks.X`: the harness, the tool comparing two runs' results files, and the
# children that host a session of another configuration (one SparkContext per JVM): `fixed-cost`'s, and `memory`'s
# (a fresh process with its driver's heap as configured and its UI on, read through Spark's REST API).
ENTRY_POINTS = {"run", "compare_lines", "scenarios.fixed_cost", "scenarios.memory"}


def _trees() -> dict[str, ast.Module]:
    """Every module of benchmarks/, by its dotted name below the package (`scenarios.daily`)."""
    return {
        ".".join(path.relative_to(BENCHMARKS).with_suffix("").parts): ast.parse(path.read_text(), str(path))
        for path in sorted(BENCHMARKS.rglob("*.py"))
    }


def _is_main_block(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":`"""
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Compare)
        and isinstance(node.test.left, ast.Name)
        and node.test.left.id == "__name__"
    )


def test_no_scenario_module_is_a_script_the_harness_starts() -> None:
    scripts = {name for name, tree in _trees().items() if any(_is_main_block(node) for node in tree.body)}
    assert scripts <= ENTRY_POINTS, f"scenario modules with a command line of their own: {scripts - ENTRY_POINTS}"


def test_the_harness_starts_no_process() -> None:
    trees = _trees()
    harness = [name for name in trees if name == "run" or name.startswith("harness.")]
    assert "harness.runner" in harness and "harness.registry" in harness  # it found the harness
    for name in harness:
        imported = {
            alias.name.split(".")[0]
            for node in ast.walk(trees[name])
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
        } | {(node.module or "").split(".")[0] for node in ast.walk(trees[name]) if isinstance(node, ast.ImportFrom)}
        assert "subprocess" not in imported, f"benchmarks.{name} imports subprocess"


def test_no_benchmark_patches_a_module_with_setattr() -> None:
    patched = [
        f"benchmarks.{name}:{node.lineno}"
        for name, tree in _trees().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
    ]
    assert not patched, f"setattr in benchmarks/: {patched}"
