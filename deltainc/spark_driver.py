"""The Spark driver JVM this process launches: it dies with the process, and a stopped command stops it first.

PySpark starts the driver as a child (`spark-submit`, exec-ing into java) that exits once it reads the end of its
stdin pipe, but only after Spark is up and after its shutdown hooks: a command killed while Spark starts left a
JVM running, and one that ended left its JVM seconds behind. Here the child is launched with Linux's
PR_SET_PDEATHSIG (SIGKILL): the kernel kills it as the launching thread ends, whatever killed the process. A
command marks its JVM as its own (`claim`), so that a stop ends that JVM before the run frees its lock (`stop`);
at a normal exit the JVM is shut down cleanly before the process ends (Spark removes its temporary files): its
SparkContext stopped, then Py4J's side of the connection closed, then the JVM ended. Py4J's records are off from
then on: a stop slower than its grace (a loaded machine) is cut short, and Py4J would print the broken connection's
`ConnectionResetError` / `Py4JNetworkError` traceback on stderr after a command that succeeded (`_at_exit`).
Plain OS calls; on a system without prctl the JVM starts as PySpark starts it.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import logging
import os
import signal
import subprocess
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from deltainc.errors import Cancelled

__all__ = ["dying_with_this_process", "launched", "claim", "stop", "joined", "not_from_py4j"]

STOP_GRACE_SECONDS = 5.0  # at a normal exit: for Spark to stop, then for the JVM to exit, before it is forced

_PR_SET_PDEATHSIG = 1
_LAUNCHED: list[subprocess.Popen[bytes]] = []  # the driver JVMs launched here, newest last
_CLAIMED: list[subprocess.Popen[bytes]] = []  # the one a command owns: a stop ends it


def _prctl() -> Callable[..., int] | None:
    """libc's prctl, looked up before any fork (a forked child must not load libraries); None off Linux."""
    if os.uname().sysname != "Linux":
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl  # this process' own symbols, libc's among them
    except (OSError, AttributeError):
        return None


@contextlib.contextmanager
def dying_with_this_process() -> Iterator[None]:
    """Inside the block, the JVM PySpark launches (`pyspark.java_gateway.Popen`) gets SIGKILL when the thread
    that launched it ends, and is remembered for `claim`. Only on the main thread: a JVM launched by another
    thread would die with that thread.

    Example: ``with dying_with_this_process(): spark = builder.getOrCreate()``.
    """
    from pyspark import java_gateway

    prctl = _prctl()
    if prctl is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    parent, real = os.getpid(), getattr(java_gateway, "Popen")  # noqa: B009 (not in the module's __all__)

    def launch(command: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        before = kwargs.get("preexec_fn")

        def in_child() -> None:
            if before is not None:
                before()
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent:  # the parent died before the request took effect
                os._exit(1)

        process: subprocess.Popen[bytes] = real(command, **{**kwargs, "preexec_fn": in_child})
        _LAUNCHED.append(process)
        atexit.register(_at_exit, process)  # at a normal exit the JVM shuts down cleanly first, its files removed
        return process

    setattr(java_gateway, "Popen", launch)  # noqa: B010
    try:
        yield
    finally:
        setattr(java_gateway, "Popen", real)  # noqa: B010


def launched() -> int:
    """How many driver JVMs were launched here so far: `claim(since=launched())` around a start."""
    return len(_LAUNCHED)


def claim(since: int) -> bool:
    """Make the driver JVM launched after the `since`-th the calling command's own: a stop ends it (`stop`) before
    the run frees its lock. False when none was launched since (a reused session, Spark Connect).

    Example: ``before = launched(); spark = get_spark(settings); claim(before)``.
    """
    fresh = _LAUNCHED[since:]
    _CLAIMED.extend(process for process in fresh if process not in _CLAIMED)
    return bool(fresh)


def stop(grace_seconds: float = 5.0) -> bool:
    """End the JVM the command claimed, if it runs: its SparkContext stopped (Spark removes its temporary files,
    PySpark closes its side), then SIGTERM, SIGKILL after `grace_seconds` each, and wait until it has exited. Call
    it only once no commit is under way. True when a JVM was claimed (it is gone now), False when there was none.

    Example: ``stop()`` before the stopped run's cancelled row frees its lock.
    """
    if not _CLAIMED:
        return False
    for process in _CLAIMED:
        _end(process, grace_seconds)
    return True


def _end(process: subprocess.Popen[bytes], grace_seconds: float = 5.0) -> None:
    """End a driver JVM and wait until it has exited: its SparkContext stopped (Spark removes its temporary
    files, PySpark closes its side), then SIGTERM, then SIGKILL, `grace_seconds` apart."""
    if process.poll() is not None:
        return
    stopping = threading.Thread(target=_stop_context, name="deltainc-spark-stop", daemon=True)
    stopping.start()  # in a thread of its own: a stop may have broken the main thread's connection to the JVM
    joined(stopping, grace_seconds)
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        if not _waited(process, grace_seconds):
            process.kill()
            _waited(process, None)


def _stop_context() -> None:
    """Stop the active SparkContext, then close Py4J's side of the gateway, so that no call (an object's finalizer)
    goes to the JVM as it ends; a session started later launches a JVM of its own. Best effort: the JVM may be going
    down with the same signal."""
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    with contextlib.suppress(Exception):
        if context is not None:
            context.stop()
    gateway = SparkContext._gateway
    if gateway is not None:
        with contextlib.suppress(Exception):
            gateway.shutdown()
        SparkContext._gateway = SparkContext._jvm = None


def not_from_py4j(record: logging.LogRecord) -> bool:
    """False for the records Py4J logs on the root logger ("Exception while sending command." with a traceback),
    which it does when the JVM ends under a call: a stop, a SIGTERM. Noise beside the command's own lines."""
    return f"{os.sep}py4j{os.sep}" not in record.pathname


def _at_exit(process: subprocess.Popen[bytes]) -> None:
    """End the driver JVM at a normal exit (`_end`, `STOP_GRACE_SECONDS` apart), Py4J quiet from now on: the command
    is done, and what Py4J logs of the connection the JVM's end breaks (its own loggers, `logging.exception` on the
    root logger, which configures a handler on stderr when none is) and PySpark's warning of a stop cut short say
    nothing about it."""
    logging.getLogger().addFilter(not_from_py4j)
    logging.getLogger("py4j").setLevel(logging.CRITICAL + 1)
    warnings.filterwarnings("ignore", message="Unable to cleanly shutdown Spark JVM process", category=RuntimeWarning)
    _end(process, STOP_GRACE_SECONDS)


def joined(thread: threading.Thread, seconds: float) -> None:
    """Wait for `thread` at most `seconds`; further stops (SIGTERM, Ctrl-C) do not cut the wait short.

    Example: ``joined(canceller, 5.0)`` while a thread cancels Spark's jobs.
    """
    deadline = time.monotonic() + seconds
    while thread.is_alive() and time.monotonic() < deadline:
        with contextlib.suppress(KeyboardInterrupt, Cancelled):
            thread.join(max(0.0, deadline - time.monotonic()))


def _waited(process: subprocess.Popen[bytes], seconds: float | None) -> bool:
    """Wait for `process` to exit (at most `seconds`); further stops (SIGTERM, Ctrl-C) do not cut the wait short.
    False at the timeout."""
    deadline = None if seconds is None else time.monotonic() + seconds
    while True:
        try:
            process.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
            return True
        except subprocess.TimeoutExpired:
            return False
        except (KeyboardInterrupt, Cancelled):
            continue
