"""The suite's tiers: what a test needs to run, from nothing to a service, and the rules that keep the markers true.

Every test carries one of five markers (registered in pyproject.toml, explained in tests/README.md), on its module
(`pytestmark`) or on itself; a test's tier is the highest it carries, so a module marks what all its tests need and
a test marks itself only where it needs more. `make check` runs the first two tiers. tests/conftest.py applies the
rules below to every test, so that a marker that no longer says what the test needs fails the test, naming the
marker it should have. No pytest, no Spark here: the windows a test ran are counted from the run logs' commit files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

# In order: each tier needs what the ones before it need, and more.
TIERS = ("pure", "spark", "windows", "processes", "service")

# The fixtures that give a test the worker's Spark session, and the ones that start a service.
SPARK_FIXTURES = frozenset({"spark", "worker_spark"})
SERVICE_FIXTURES = frozenset({"server"})

# The audit events (sys.addaudithook) of a new process: what a test of the first two tiers must not raise.
PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.system"})

GUIDE = "tests/README.md: which marker when"


def tier_of(markers: Iterable[str]) -> str | None:
    """The highest tier among a test's marker names, or None when it carries none.

    Example: `tier_of(["smoke", "spark", "processes"])` is `"processes"`.
    """
    found = [TIERS.index(name) for name in markers if name in TIERS]
    return TIERS[max(found)] if found else None


def fixture_problem(tier: str | None, fixtures: Iterable[str]) -> str | None:
    """What is wrong with a test's tier given the fixtures it uses (their closure), or None when nothing is.

    Example: `fixture_problem("pure", ["tmp_path", "spark"])` says that a test of the `spark` fixture is no `pure` test.
    """
    if tier is None:
        return f"no tier marker: mark the test or its module with one of {', '.join(TIERS)} ({GUIDE})"
    used = set(fixtures)
    rank = TIERS.index(tier)
    if used & SERVICE_FIXTURES and rank < TIERS.index("service"):
        return f"marked {tier!r} but uses {', '.join(sorted(used & SERVICE_FIXTURES))}: mark it 'service' ({GUIDE})"
    if used & SPARK_FIXTURES and rank < TIERS.index("spark"):
        return f"marked {tier!r} but uses {', '.join(sorted(used & SPARK_FIXTURES))}: mark it 'spark' ({GUIDE})"
    return None


def process_problem(tier: str, started: Iterable[str]) -> str | None:
    """What is wrong with a test of `tier` that started the processes `started` (their command lines), or None.

    Example: `process_problem("spark", ["python -m deltainc --help"])` asks for the `processes` marker.
    """
    commands = list(started)
    if not commands or TIERS.index(tier) >= TIERS.index("processes"):
        return None
    jvm = next((command for command in commands if "spark-submit" in command), None)
    if jvm is not None:
        return f"marked {tier!r} but started a JVM of its own ({jvm}): take the `spark` fixture ({GUIDE})"
    return f"marked {tier!r} but started a process ({commands[0]}): mark it 'processes' ({GUIDE})"


def window_problem(tier: str, windows: int) -> str | None:
    """What is wrong with a test of `tier` whose jobs wrote `windows` run-log rows (one per window run, failed or
    not, whatever the command), or None: more than one is a job run over many windows or by many commands.

    Example: `window_problem("spark", 3)` asks for the `windows` marker.
    """
    if windows <= 1 or TIERS.index(tier) >= TIERS.index("windows"):
        return None
    return f"marked {tier!r} but its jobs ran {windows} windows (rows of their run logs): mark it 'windows' ({GUIDE})"


def run_logs(roots: Iterable[Path]) -> list[Path]:
    """The run logs under `roots`: each Delta table named `runs` (a state folder's run log, `<state_dir>/runs`).

    A Delta table's own folders (its partitions) are not searched, so that a walk stays as small as the folders that
    hold tables; a root that is a link is left out (pytest links `<name>current` to the newest `<name>N`: each log
    would count twice). Example: `run_logs([tmp_path])` is `[tmp_path / "state" / "runs"]` after a job ran there.
    """
    found: list[Path] = []
    for root in roots:
        if root.is_symlink():
            continue
        for folder, subfolders, _files in os.walk(root):
            if "_delta_log" in subfolders:
                if os.path.basename(folder) == "runs":
                    found.append(Path(folder))
                subfolders.clear()
    return found


def windows_committed_since(run_log: Path, since: float) -> int:
    """How many rows of windows (rows with a `window_end`; a row written by hand to test the state has none) the
    commits of `run_log` made at or after `since` (seconds of the epoch) added: a commit file written then (its
    time, and its commitInfo's timestamp, so that a run log copied from elsewhere adds nothing).

    Example: `windows_committed_since(tmp_path / "state" / "runs", began)` is 2 after a job ran two windows there.
    """
    windows = 0
    with os.scandir(run_log / "_delta_log") as entries:
        # a second of slack: a file's time comes from the kernel's coarser clock, the commitInfo's decides
        commits = [
            entry.path for entry in entries if entry.name.endswith(".json") and entry.stat().st_mtime > since - 1
        ]
    for commit in commits:
        actions = [json.loads(line) for line in Path(commit).read_text().splitlines() if line.strip()]
        stamps = [action["commitInfo"].get("timestamp", 0) for action in actions if "commitInfo" in action]
        if stamps and stamps[0] < since * 1000:
            continue
        for added in (action["add"] for action in actions if "add" in action):
            if added.get("dataChange", True):
                stats = json.loads(added.get("stats") or "{}")  # without statistics: one row of a window
                windows += stats.get("numRecords", 1) - stats.get("nullCount", {}).get("window_end", 0)
    return windows
