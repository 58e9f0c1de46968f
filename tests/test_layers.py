"""The design reads from the tree: deltainc/pipeline's layers import only the layers below them, nothing but the
command line and the demo imports through the package's lazy public fronts, and no module of deltainc or of
benchmarks imports itself back through others. Read from the source with ast; no Spark here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.pure

PACKAGE = Path(__file__).resolve().parents[1] / "deltainc"
BENCHMARKS = PACKAGE.parent / "benchmarks"
# Each layer of deltainc/pipeline and the layers it may import; the command folders above them may import any layer,
# and no layer imports them.
LAYERS = {"job": set(), "delta": {"job"}, "state": {"job", "delta"}, "target": {"job", "delta"}}
# The modules of deltainc that import nothing of deltainc and that any layer may import (the counting hook of the
# facts a command works out, told by the layer that works one out).
LEAVES = {"deltainc.fact_counts"}
# The folders by command, above the layers, and what each may import besides the layers: the controller (run,
# rerun, backfill, migrate) nothing else; inspect (status, validate, verify) the controller's opening steps (what
# the Delta logs answer before Spark, the job opened in Spark, the plan's start check); explain and profile nothing
# else.
COMMANDS = {
    "controller": {*LAYERS},
    "inspect": {*LAYERS, "controller"},
    "explain": {*LAYERS},
    "profile": {*LAYERS},
}
# What a run asks of the Delta logs before Spark starts: never the modules that start or need Spark (the commands,
# the prepared job, a window's run, its commit and stop).
BEFORE_SPARK = "deltainc.pipeline.controller.before_spark"
SPARK_SIDE = ("commands", "prepared_job", "planned_target", "window", "commit", "stop", "failure_row", "migrate")
# The package's lazy public fronts: they import a name on first use, so an import of a name through them hides
# where it comes from, from a reader and from the tests here. Only the command line and the demo, which call the
# public API as a user does, import through them.
FRONTS = {"deltainc", "deltainc.pipeline"}
FRONT_USERS = ("deltainc.cli", "deltainc.demo")


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str], *, at_load_only: bool, package: str = "deltainc") -> set[str]:
    """The modules of `package` that `path` imports; with `at_load_only`, those imported when it loads (not inside
    a function, not under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text())
    nodes: list[ast.stmt] = list(tree.body) if at_load_only else [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(package):
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & modules  # `from pkg import module`
            found.update(submodules or {node.module})
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith(package))
    return found


def _modules(root: Path = PACKAGE) -> dict[str, Path]:
    return {_module(path): path for path in root.rglob("*.py")}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle a depth-first walk of the import graph meets, each as the modules around it."""
    cycles: list[list[str]] = []
    done: set[str] = set()

    def visit(name: str, trail: list[str]) -> None:
        for nxt in sorted(graph[name]):
            if nxt in trail:
                cycles.append([*trail[trail.index(nxt) :], nxt])
            elif nxt not in done:
                visit(nxt, [*trail, nxt])
        done.add(name)

    for start in sorted(graph):
        if start not in done:
            visit(start, [start])
    return cycles


def _imports_outside(allowed: dict[str, set[str]]) -> list[str]:
    """The imports of each sub-package of deltainc/pipeline named in `allowed` that reach into deltainc/pipeline
    outside the sub-package itself and the names (sub-packages, top-level modules) it may import."""
    wrong = []
    for name, path in _modules().items():
        parts = name.split(".")
        if parts[:2] != ["deltainc", "pipeline"] or len(parts) < 4 or parts[2] not in allowed:
            continue
        package = parts[2]
        for imported in _imports(path, set(_modules()), at_load_only=False):
            target = imported.split(".")
            if target[:2] != ["deltainc", "pipeline"] or len(target) < 3:
                continue
            if target[2] != package and target[2] not in allowed[package]:
                wrong.append(f"{name} imports {imported}")
    return sorted(set(wrong))


def test_each_layer_of_the_pipeline_imports_only_the_layers_below_it() -> None:
    assert _imports_outside(LAYERS) == []


def test_the_modules_every_layer_may_import_import_nothing_of_deltainc() -> None:
    modules = _modules()
    for leaf in LEAVES:
        assert _imports(modules[leaf], set(modules), at_load_only=False) == set(), leaf


def _loaded_with(name: str, modules: dict[str, Path]) -> set[str]:
    """`name` and every module of deltainc that loading it loads (imports at load time, followed)."""
    seen, todo = set[str](), [name]
    while todo:
        module = todo.pop()
        if module in seen or module not in modules:
            continue
        seen.add(module)
        todo += _imports(modules[module], set(modules), at_load_only=True)
    return seen


def _imports_pyspark(path: Path) -> bool:
    return bool(_imports(path, set(), at_load_only=False, package="pyspark"))


def test_the_plan_imports_neither_pyspark_nor_the_writers() -> None:
    """The plan says what to do (windows, mode names) and is pure: `target/` maps a mode's name to its writer."""
    modules = _modules()
    plan = "deltainc.pipeline.controller.plan"
    assert not _imports_pyspark(modules[plan])
    loaded = _loaded_with(plan, modules)
    assert sorted(m for m in loaded if m.startswith("deltainc.pipeline.target")) == []
    assert sorted(m for m in loaded if _imports(modules[m], set(), at_load_only=True, package="pyspark")) == []


def test_each_command_folder_imports_the_layers_and_only_the_folders_below_it() -> None:
    assert {name.split(".")[2] for name in _modules() if name.count(".") >= 3} >= set(COMMANDS)  # where it says
    assert _imports_outside(COMMANDS) == []


def test_nothing_but_the_commands_imports_a_command_folder() -> None:
    """The layers never import a command folder, and of the modules beside the pipeline only the command line,
    the demo, the report and the fronts do."""
    modules = _modules()
    wrong = [
        f"{name} imports {imported}"
        for name, path in sorted(modules.items())
        if not name.startswith(("deltainc.pipeline.", "deltainc.cli", "deltainc.demo", "deltainc.report"))
        and name not in FRONTS
        for imported in _imports(path, set(modules), at_load_only=False)
        if imported.startswith("deltainc.pipeline.")
    ]
    assert wrong == []


def test_what_a_run_asks_the_delta_logs_before_spark_imports_nothing_that_starts_spark() -> None:
    modules = _modules()
    imported = _imports(modules[BEFORE_SPARK], set(modules), at_load_only=False)
    spark_side = {f"deltainc.pipeline.controller.{name}" for name in SPARK_SIDE}
    assert sorted(imported & spark_side) == []


def _through_a_front(path: Path, modules: set[str]) -> list[str]:
    """The imports of `path` (anywhere in it) that go through a lazy public front: `from deltainc.pipeline import
    run`, `from deltainc import pipeline` (whose names are then looked up lazily), `import deltainc.pipeline`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module in FRONTS:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            found += [
                f"from {node.module} import {n.rsplit('.', 1)[1]}" for n in names if n in FRONTS or n not in modules
            ]
        elif isinstance(node, ast.Import):
            found += [f"import {alias.name}" for alias in node.names if alias.name in FRONTS]
    return found


def test_no_module_but_the_command_line_and_the_demo_imports_through_a_lazy_public_front() -> None:
    modules = _modules()
    wrong = [
        f"{name}: {line}"
        for name, path in sorted(modules.items())
        if name not in FRONTS and not name.startswith(FRONT_USERS)
        for line in _through_a_front(path, set(modules))
    ]
    assert wrong == []


def test_the_command_line_calls_the_pipeline_only_through_its_front() -> None:
    modules = _modules()
    wrong = [
        f"{name} imports {imported}"
        for name, path in sorted(modules.items())
        if name.startswith("deltainc.cli")
        for imported in _imports(path, set(modules), at_load_only=False)
        if imported.startswith("deltainc.pipeline.")
    ]
    assert wrong == []


def test_no_module_imports_itself_back_through_others() -> None:
    """Every import counts, also one inside a function or under TYPE_CHECKING: an import made late, to dodge the
    circle at load time, still runs back up."""
    modules = _modules()
    graph = {
        name: {i for i in _imports(path, set(modules), at_load_only=False) if i in modules and i != name}
        for name, path in modules.items()
    }
    assert _cycles(graph) == []


def test_no_benchmark_module_imports_itself_back_through_others() -> None:
    """Every import counts here, also one inside a function or under TYPE_CHECKING: the harness registers the
    scenarios and imports the report, the report never names the harness."""
    modules = _modules(BENCHMARKS)
    graph = {
        name: {
            i
            for i in _imports(path, set(modules), at_load_only=False, package="benchmarks")
            if i in modules and i != name
        }
        for name, path in modules.items()
    }
    assert {name for name in graph if name.startswith("benchmarks.")}  # it read the benchmarks
    assert _cycles(graph) == []
