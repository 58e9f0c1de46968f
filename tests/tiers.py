"""The suite's tiers: what a test needs to run, from nothing to a service, and the rules that keep the markers true.

Every test carries one of four markers (registered in pyproject.toml, explained in tests/README.md), on its module
(`pytestmark`) or on itself; a test's tier is the highest it carries, so a module marks what all its tests need and
a test marks itself only where it needs more. `make check` runs the first two tiers. tests/conftest.py applies the
rules below to every test, so that a marker that no longer says what the test needs fails the test, naming the
marker it should have. Pure logic: no pytest, no Spark here.
"""

from __future__ import annotations

from collections.abc import Iterable

# In order: each tier needs what the ones before it need, and more.
TIERS = ("pure", "spark", "processes", "service")

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
