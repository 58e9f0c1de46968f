"""One Spark session for the whole suite, and small builders for Delta sources under tmp_path."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jvm_options import process_options, worker_options
from pyspark.sql import SparkSession
from s3_server import S3Server, start, stop
from spark_home import spark_home
from tiers import (
    PROCESS_EVENTS,
    fixture_problem,
    process_problem,
    run_logs,
    tier_of,
    window_problem,
    windows_committed_since,
)

from deltainc.settings import Settings, SparkSettings
from deltainc.spark import get_spark
from deltainc.spark_compat import spark_major
from deltainc.storage import slim_s3_jars

# Every JVM of the suite starts from one Spark distribution (tests/support/spark_home.py), and every process a test
# starts gets the short-lived JVM's options (tests/support/jvm_options.py).
os.environ["SPARK_HOME"] = str(spark_home())
os.environ["SPARK_SUBMIT_OPTS"] = process_options()
# The processes a test starts keep Spark's 1 GB heap: a local session deltainc starts otherwise gets half of the
# machine's memory (deltainc/driver_memory.py), and the suite's timings were measured at 1 GB.
os.environ.setdefault("SPARK_DRIVER_MEMORY", "1g")


# The test files of a minute or more, heaviest first (their seconds in a suite run on two workers, 2026-11-26). The
# workers take files in this order, then the rest as collected (`make test` passes --no-loadscope-reorder: xdist's own
# order, by number of tests, left files of one or two long tests such as the cluster's to the end, where one worker
# ran them alone while the other had nothing left).
_HEAVY_FIRST = (
    "pipeline/controller/test_contract.py",  # 305
    "pipeline/controller/test_recovery.py",  # 292
    "pipeline/controller/test_feature_jobs.py",  # 140
    "pipeline/controller/test_b_side.py",  # 116
    "pipeline/controller/test_connect.py",  # 100
    "join/test_engine_window_invariance.py",  # 81
    # cli/test_cli.py (79) is split by command since: its parts are not measured yet
    "pipeline/target/test_schema_evolution.py",  # 74
    "pipeline/controller/test_object_storage.py",  # 65
    "pipeline/delta/test_reads_from_logs.py",  # 63
    "pipeline/controller/test_cluster.py",  # 56
    "pipeline/controller/test_asof_pipeline.py",  # 54
    "demo/test_demo.py",  # 49
    "pipeline/delta/test_source_partitioning.py",  # 46
)


def pytest_configure(config: pytest.Config) -> None:
    """matplotlib builds its font cache on its first import on a machine, starting `fc-list`: built here, before any
    test, so that a `spark` test drawing a chart on a fresh machine starts no process while it runs
    (tests/support/tiers.py)."""
    import matplotlib.font_manager  # noqa: F401


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The heavy files first (`_HEAVY_FIRST`), each file's tests together and in their order."""

    def rank(item: pytest.Item) -> int:
        path = item.path.as_posix()
        return next((i for i, name in enumerate(_HEAVY_FIRST) if path.endswith("tests/" + name)), len(_HEAVY_FIRST))

    items.sort(key=rank)  # stable: the rest keep the collection's order


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """On Spark 4, whose ANSI SQL mode is on by default, the smoke tests that take `spark` run a second time with
    ANSI off (Spark 3.5's default), in a session of their own on the same JVM (the setting is the session's)."""
    smoke = metafunc.definition.get_closest_marker("smoke") is not None
    if smoke and "spark" in metafunc.fixturenames and spark_major() >= 4:
        metafunc.parametrize("spark", ["ansi_default", "ansi_off"], indirect=True, scope="session")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see the developer's DELTAINC_* variables."""
    for name in list(os.environ):
        if name.startswith("DELTAINC_"):
            monkeypatch.delenv(name)


@pytest.fixture(scope="session")
def worker_spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """The worker's one JVM and its session, with the Spark line's default ANSI setting."""
    warehouse = tmp_path_factory.mktemp("warehouse")
    settings = Settings(
        spark=SparkSettings(master="local[2]", shuffle_partitions=2, ui_enabled=False, log_level="ERROR"),
        warehouse_dir=warehouse,
        state_dir=warehouse / "_deltainc",
    )
    # One JVM serves the whole suite: a heap well above the 1 GB default (2 GB once ran out while building
    # broadcasts), and the UI's history of jobs, stages and SQL executions (kept even with the UI off) bounded,
    # so that it does not fill that heap.
    extra = {
        "spark.default.parallelism": "2",
        "spark.driver.memory": "4g",
        "spark.ui.retainedJobs": "100",
        "spark.ui.retainedStages": "100",
        "spark.ui.retainedTasks": "2000",
        "spark.sql.ui.retainedExecutions": "20",
    }
    if "SUITE_CODEGEN_CACHE" in os.environ:  # tests/tools/suite_jvm_ab.py compares sizes of the compiled-code cache
        extra["spark.sql.codegen.cache.maxEntries"] = os.environ["SUITE_CODEGEN_CACHE"]
    # S3A's jars too where they are small (the main line): tests/pipeline/controller/test_object_storage.py runs
    # jobs on S3.
    os.environ["SPARK_SUBMIT_OPTS"] = worker_options()  # this JVM serves the whole run
    try:
        session = get_spark(settings, extra_conf=extra, s3=slim_s3_jars())
    finally:
        os.environ["SPARK_SUBMIT_OPTS"] = process_options()
    yield session
    session.stop()


@pytest.fixture(scope="session")
def spark(request: pytest.FixtureRequest, worker_spark: SparkSession) -> SparkSession:
    """The session a test runs in: the worker's, or for a smoke test's `ansi_off` case a new session on the same
    JVM with ANSI SQL mode off (Delta's extension and catalog come with it, from the JVM's configuration)."""
    if getattr(request, "param", "ansi_default") == "ansi_default":
        return worker_spark
    session = worker_spark.newSession()
    session.conf.set("spark.sql.ansi.enabled", "false")
    assert session.sql("SELECT CAST('x' AS INT) AS n").first()[0] is None  # off here, as 3.5 has it: NULL, no error
    return session


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """A real S3-compatible server (MinIO, tests/support/s3_server.py) on loopback, started by the first test of this
    worker that asks for it, and this process's AWS_* variables pointing at it (restored at the end)."""
    running = start(tmp_path_factory.mktemp("s3_server"))
    saved = {name: os.environ.get(name) for name in running.environment()}
    os.environ.update(running.environment())
    try:
        yield running
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        stop(running)


# --- the tiers (tests/support/tiers.py, tests/README.md) --------------------------------------------------------------
# Every test says what it needs with one marker; these hooks fail a test whose marker says less than it uses: no
# marker, the `spark` fixture in a `pure` test, a service in a lower tier, a process started by a `pure` test (set-up
# or body) or by a `spark` or `windows` test's body, or a `spark` test whose jobs ran more than one window (set-up
# and body).
# Processes are seen through Python's audit events, windows through the rows the run logs under the worker's temporary
# folders gained: nothing is replaced.
_started: list[str] | None = None  # the processes started while a test is watched; None: not watching


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _started is not None and event in PROCESS_EVENTS:
        command = args[1] if event == "subprocess.Popen" else args[0] if args else ""
        _started.append(" ".join(map(str, command)) if isinstance(command, list | tuple) else str(command) or event)


sys.addaudithook(_audit)


def _tier(item: pytest.Item) -> str | None:
    return tier_of(marker.name for marker in item.iter_markers())


class _Folders:
    """The temporary folders a test of the current module can write to: those made since the module began (its
    tests' tmp_path, its fixtures' mktemp), in the worker's base folder; and when the test began."""

    base: Path | None = None  # the worker's base temporary folder, known from the first test's set-up on
    module: str = ""
    before: frozenset[str] = frozenset()  # what the base folder held when the module began
    test_began: float = 0.0

    @classmethod
    def begin(cls, item: pytest.Item) -> None:
        cls.test_began = time.time()
        if item.path.as_posix() != cls.module:
            cls.module = item.path.as_posix()
            cls.before = frozenset(os.listdir(cls.base)) if cls.base else frozenset()

    @classmethod
    def windows(cls) -> int:
        """The rows of windows written to run logs since the test began, under the module's folders."""
        if cls.base is None:
            return 0
        roots = [cls.base / name for name in os.listdir(cls.base) if name not in cls.before]
        return sum(windows_committed_since(runs, cls.test_began) for runs in run_logs(roots))


@pytest.fixture(autouse=True, scope="session")
def _base_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The worker's base temporary folder, where the run logs of the tests' jobs are looked for."""
    _Folders.base = tmp_path_factory.getbasetemp()


def _watched(item: pytest.Item, phase: str) -> Iterator[None]:
    """Run one phase of `item` (a hook wrapper's yield), failing it if it started a process its tier forbids, or ran
    more windows than its tier allows."""
    global _started
    tier = _tier(item)
    watch = tier == "pure" or (tier in ("spark", "windows") and phase == "call")
    _started = [] if watch else None
    try:
        yield
    finally:
        started, _started = _started or [], None
    problem = process_problem(tier, started) if tier else None
    if not problem and tier == "spark":
        problem = window_problem(tier, _Folders.windows())
    if problem:
        pytest.fail(f"{item.nodeid}: {problem}", pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    _Folders.begin(item)
    problem = fixture_problem(_tier(item), getattr(item, "fixturenames", ()))
    if problem:
        pytest.fail(f"{item.nodeid}: {problem}", pytrace=False)
    return (yield from _watched(item, "setup"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    return (yield from _watched(item, "call"))
