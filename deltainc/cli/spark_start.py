"""Starting the SparkSession for a command: unless --verbose, the JVM's own output goes to the job's log file.

Spark writes to file descriptors 1 and 2 (log4j, Ivy's banner) for the JVM's whole life; the terminal is
kept for the command's own lines and errors. One file per job (not per command, which filled the temporary
folder), appended to and rotated when it grows, keeps the last few runs' JVM output where a user finds it.

`start_spark` is the one way a command starts Spark: `Context.spark()` calls it through this module, so replacing
`spark_start.start_spark` (a test's monkeypatch) reaches every start, e.g. to prove a command starts none.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from deltainc.settings import Settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["start_spark", "MAX_BYTES", "KEEP", "log_file"]

log = logging.getLogger("deltainc")

MAX_BYTES = 10 * 1024 * 1024  # rotate a job's log once it is larger than this when a command starts
KEEP = 3  # rotated files kept: spark-<job>.log.1 (newest) .. .3
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def log_file(folder: Path, name: str, max_bytes: int = MAX_BYTES, keep: int = KEEP) -> Path:
    """The log file of `name` (a job, or 'deltainc' for commands over many jobs) in `folder`, created if
    needed; when it is larger than `max_bytes` it is moved to `.1` first (`.1` to `.2`, ...; `keep` kept)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"spark-{_UNSAFE.sub('_', name)}.log"
    if path.exists() and path.stat().st_size > max_bytes:
        for number in range(keep - 1, 0, -1):
            older = path.with_name(f"{path.name}.{number}")
            if older.exists():
                older.replace(path.with_name(f"{path.name}.{number + 1}"))
        path.replace(path.with_name(f"{path.name}.1"))
    return path


def start_spark(
    settings: Settings, extra_conf: dict[str, str], verbose: bool, log_name: str, s3: bool = False
) -> tuple[SparkSession, Path | None]:
    """Get or create the SparkSession and the file its log goes to: with `verbose` the terminal (None);
    otherwise `log_name`'s log file (errors only), or None when a session runs already and is reused. `s3`: the
    job's tables are in S3 (the session gets S3A's jars and configuration). A JVM launched here is the command's
    own (`spark_driver.claim`): a stop ends it before the run frees its lock."""
    from deltainc import spark_driver

    before = spark_driver.launched()
    try:
        with _ctrl_c_kept():
            return _start(settings, extra_conf, verbose, log_name, s3)
    finally:  # also when a stop lands while the JVM starts: the stop ends it before the lock is freed
        spark_driver.claim(before)


@contextlib.contextmanager
def _ctrl_c_kept() -> Iterator[None]:
    """Keep the command's Ctrl-C handling once Spark is up. PySpark's SparkContext installs a SIGINT handler
    that calls into the JVM from inside the handler: while the main thread waits on a Spark call, that call
    breaks the connection with a traceback. The command's own handler stays (`app`): a cancelled run-log row
    and exit 130."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main else None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _start(
    settings: Settings, extra_conf: dict[str, str], verbose: bool, log_name: str, s3: bool
) -> tuple[SparkSession, Path | None]:
    from deltainc.spark import get_spark, remote_url
    from deltainc.spark_compat import describe_master, driver_memory

    if verbose or remote_url(settings) is not None:  # a Connect client starts no JVM: nothing to redirect
        spark = get_spark(settings, extra_conf, s3=s3)
        where = "the server's log" if remote_url(settings) is not None else "this terminal"
        memory = "" if remote_url(settings) is not None else f", driver memory {driver_memory(spark)}"
        log.info("Spark %s, %s%s; Spark's log output goes to %s", spark.version, describe_master(spark), memory, where)
        return spark, None
    from pyspark.sql import SparkSession

    quiet = settings.model_copy(update={"spark": settings.spark.model_copy(update={"log_level": "ERROR"})})
    if SparkSession.getActiveSession() is not None:  # the JVM runs already (embedded use, tests): reuse it
        return get_spark(quiet, extra_conf, s3=s3), None
    log_path = log_file(settings.spark_log_dir, log_name)
    # The JVM started here inherits file descriptors 1 and 2: point them at the log file while the session
    # starts, so that log4j (stderr) and Ivy's banner (stdout) write there for the JVM's whole life, while
    # this process gets its own terminal back as soon as the session is up.
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    try:
        with open(log_path, "ab") as spark_output:
            for fd in saved:
                os.dup2(spark_output.fileno(), fd)
        spark = get_spark(quiet, extra_conf, s3=s3)
    finally:
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)
    return spark, log_path
