"""The line a stopped command prints the moment SIGTERM or Ctrl-C arrives: what is being stopped, and that nothing
after the target's last commit will land.

A clean stop takes seconds (the commit under way, Spark's JVM, the run-log row that frees the lock) before the
command's last line says how it ended. A scheduler may stop reading the task's output when it sends the signal
(Airflow on `execution_timeout`), so the command says what it is doing at once, unbuffered. The writing commands
say what they are doing (`doing`: the job and the command; `in_window`: its window); the signal handler reads it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace

__all__ = ["doing", "in_window", "notice", "say"]


@dataclass(frozen=True)
class _Doing:
    """What a writing command does now: its job, its command, and the window under way (None: none is)."""

    job: str
    command: str
    window: str | None = None


_NOW: list[_Doing] = []  # innermost last; set and read in the main thread only, where signals arrive


@contextlib.contextmanager
def doing(job: str, command: str) -> Iterator[None]:
    """Say, for the block, that `command` ("run", "rerun", "backfill") writes `job`.

    Example: ``with doing("bank_trx", "run"): ...``.
    """
    _NOW.append(_Doing(job, command))
    try:
        yield
    finally:
        _NOW.pop()


@contextlib.contextmanager
def in_window(window: str) -> Iterator[None]:
    """Say, for the block, that the command's window `window` is under way (inside `doing`; alone, nothing).

    Example: ``with in_window("2025-03-04"): ...``.
    """
    if not _NOW:
        yield
        return
    _NOW.append(replace(_NOW[-1], window=window))
    try:
        yield
    finally:
        _NOW.pop()


def notice(signal_number: int) -> str:
    """The line for `signal_number` (SIGTERM, SIGINT), naming what the command is doing now.

    Example:
        >>> notice(signal.SIGTERM)
        'stopping (SIGTERM): the command was writing nothing; its last line follows'
    """
    how = "Ctrl-C" if signal_number == signal.SIGINT else "SIGTERM"
    if not _NOW:
        return f"stopping ({how}): the command was writing nothing; its last line follows"
    now = _NOW[-1]
    where = f"window {now.window}" if now.window else "no window under way"
    return (
        f"stopping ({how}): {now.job} {now.command}, {where}: nothing after the target's last commit will land "
        "(a target commit under way is finished first); the last line, what was stopped and the target's last "
        "commit, follows once Spark has stopped and the lock is freed"
    )


def say(line: str, fd: int | None) -> None:
    """`deltainc: <line>` on stderr at once: written to `fd`, unbuffered (a signal handler can run while the
    stream's buffer is being written), or through `sys.stderr` when `fd` is None (a test's capture has no file).

    `fd` is a copy of stderr's descriptor taken as the command began: while Spark starts, descriptor 2 points at
    Spark's log file (`spark_start`).

    Example: ``say(notice(signal.SIGTERM), os.dup(2))``.
    """
    text = f"deltainc: {line}\n"
    if fd is not None:
        try:
            os.write(fd, text.encode("utf-8", "backslashreplace"))
            return
        except OSError:
            pass
    sys.stderr.write(text)
    sys.stderr.flush()
