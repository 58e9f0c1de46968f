"""Where Spark lines and session kinds differ, in one place: Spark 3.5 or 4.x, a classic session or a Connect client;
and a session's settings and job labels set for a block and put back after it, as both session kinds allow; and the
seconds get_spark took to start a session, until the first run in it takes them.

Spark 4 (the main line) builds with Scala 2.13 and turns ANSI SQL mode on by default; Spark 3.5 builds with
Scala 2.12 and has it off. A Spark Connect session has no SparkContext and no JVM on the client, so nothing
here or elsewhere may reach for them; the engine and the writers use DataFrames and SQL only, which both
session kinds share (docs/reference/versions.md, docs/production/cluster.md#spark-connect).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from importlib.metadata import version
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "spark_version",
    "spark_major",
    "scala_version",
    "delta_version",
    "delta_packages",
    "SessionKind",
    "session_kind",
    "is_connect",
    "observes_writes",
    "cancel_all_jobs",
    "set_log_level",
    "describe_master",
    "driver_memory",
    "labelled_jobs",
    "session_conf",
    "note_startup_seconds",
    "take_startup_seconds",
]


def spark_version() -> str:
    """The installed pyspark's version, e.g. '4.2.0'."""
    return version("pyspark")


def spark_major() -> int:
    """The installed Spark line's major version: 3 or 4."""
    return int(spark_version().split(".")[0])


def scala_version() -> str:
    """The Scala binary version the installed pyspark's jars are built with: 2.13 from Spark 4, 2.12 before."""
    return "2.13" if spark_major() >= 4 else "2.12"


def delta_version() -> str:
    """The installed delta-spark's version: its jars must be the same version."""
    return version("delta-spark")


def delta_packages() -> str:
    """The Maven coordinates of the Delta jars matching the installed delta-spark and Spark's Scala version."""
    return f"io.delta:delta-spark_{scala_version()}:{delta_version()}"


@dataclass(frozen=True)
class SessionKind:
    """What a session can do, decided once from its kind (classic or Connect) and the Spark line; every guard of
    the package asks this value instead of testing the session itself."""

    connect: bool  # a Spark Connect client: no SparkContext, no JVM in this process
    major: int  # the Spark line: 3 or 4

    @property
    def sees_its_files(self) -> bool:
        """Whether this process sees the files the session's driver reads and writes (a classic session): the
        Delta logs and commit files read here are the session's own."""
        return not self.connect

    @property
    def reads_parquet_as_delta(self) -> bool:
        """Whether a window may read a source's files as Parquet, named by its Delta log (`sources.window_rows`), and
        build frames of rows read here: a classic Spark 4 session (Connect's client may not see the files)."""
        return not self.connect and self.major >= 4

    @property
    def observes_writes(self) -> bool:
        """Whether an `Observation` on a DataFrame reports its metrics when a write reads it: a classic session,
        and a Connect client from Spark 4 (a Spark 3.5 Connect client has no observations)."""
        return not self.connect or self.major >= 4


@functools.lru_cache(maxsize=4)
def _kind_of(module: str) -> SessionKind:
    return SessionKind(module.startswith("pyspark.sql.connect"), spark_major())


def session_kind(spark: SparkSession) -> SessionKind:
    """The `SessionKind` of `spark` (decided once per kind of session in a process).

    >>> session_kind(spark).reads_parquet_as_delta  # doctest: +SKIP
    True
    """
    return _kind_of(type(spark).__module__)


def is_connect(spark: SparkSession) -> bool:
    """Whether `spark` is a Spark Connect client session (no SparkContext, no JVM in this process)."""
    return session_kind(spark).connect


def observes_writes(spark: SparkSession) -> bool:
    """Whether an `Observation` on a DataFrame reports its metrics when a write reads it (`SessionKind`)."""
    return session_kind(spark).observes_writes


def cancel_all_jobs(spark: SparkSession) -> None:
    """Cancel the session's running Spark jobs (best effort: the JVM may be going down with the same signal)."""
    try:
        if is_connect(spark):
            spark.interruptAll()
        else:
            spark.sparkContext.cancelAllJobs()
    except Exception:
        logging.getLogger("deltainc").debug("could not cancel the Spark jobs", exc_info=True)


def set_log_level(spark: SparkSession, level: str) -> None:
    """Set Spark's log level where this process owns the JVM; a Connect server keeps its own."""
    if not is_connect(spark):
        spark.sparkContext.setLogLevel(level)


def describe_master(spark: SparkSession) -> str:
    """Where the session runs, for a log line: its master, or the Connect server it is a client of."""
    if is_connect(spark):
        return "a client of a Spark Connect server"
    return f"master {spark.sparkContext.master}"


def driver_memory(spark: SparkSession) -> str:
    """The driver JVM's heap as the session was started with it (`spark.driver.memory`; Spark's default 1g when
    unset), for a log line; a Connect client does not know the server's."""
    if is_connect(spark):
        return "the server's"
    return spark.sparkContext.getConf().get("spark.driver.memory", "1g (Spark's default)") or "1g"


_JOB_LABELS = ("spark.jobGroup.id", "spark.job.description")


@contextmanager
def labelled_jobs(spark: SparkSession, group: str, description: str) -> Iterator[None]:
    """Name the Spark jobs this thread starts inside the block (Spark's UI and status store show `group` and
    `description`; Delta names its own jobs while they run), then put the thread's earlier names back. A
    Connect client leaves them as they are.

    >>> with labelled_jobs(spark, "deltainc-too-late", "bank_trx 2025-03-06: too-late search"):  # doctest: +SKIP
    ...     rows.count()
    """
    if is_connect(spark):
        yield
        return
    context = spark.sparkContext
    before = [context.getLocalProperty(key) for key in _JOB_LABELS]
    context.setJobGroup(group, description)
    try:
        yield
    finally:
        # Best effort: a stop (SIGTERM, Ctrl-C) can leave the connection to the JVM unusable, and putting the
        # labels back must not hide the error that ended the block.
        with suppress(Exception):
            for key, value in zip(_JOB_LABELS, before, strict=True):
                context.setLocalProperty(key, value)  # type: ignore[arg-type]  # None removes it


def job_thread(spark: SparkSession, target: Callable[[], None], name: str) -> threading.Thread:
    """A daemon thread running `target` whose Spark jobs carry the starting thread's labels (`labelled_jobs`): pyspark's
    InheritableThread on a classic session; a plain thread on Connect, whose labels are left as they are."""
    if is_connect(spark):
        return threading.Thread(target=target, name=name, daemon=True)
    from pyspark import InheritableThread

    return InheritableThread(target, name=name, daemon=True)  # no `session`: Spark 3.5's takes none


@contextmanager
def session_conf(spark: SparkSession, key: str, value: str) -> Iterator[None]:
    """The session's SQL setting `key` is `value` inside the block, and what it was (set or unset) after it.

    >>> with session_conf(spark, "spark.sql.adaptive.enabled", "false"):  # doctest: +SKIP
    ...     output.count()
    """
    before = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


_STARTUP: dict[int, float] = {}  # seconds each session get_spark started took to start, until a run takes them


def note_startup_seconds(spark: SparkSession, seconds: float) -> None:
    """Remember that get_spark took `seconds` to start `spark`, for the first run in it (`take_startup_seconds`)."""
    _STARTUP[id(spark)] = seconds


def take_startup_seconds(spark: SparkSession) -> float | None:
    """The seconds `spark` took to start, if get_spark started it in this process and no run took them yet: the
    first run of a command records Spark's start in its duration (`spark_start_s`), later ones do not."""
    return _STARTUP.pop(id(spark), None)
