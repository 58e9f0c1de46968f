"""Counting the facts a command works out (for tests): each fact is worked out once per command, or once per window
and again only after the window's commit (issue 76, "each fact once").

A place that works out one of the facts below calls `asked(FACT)`; `counting_facts()` counts the calls made in its
block, as `delta.snapshot.counting_opens` counts the Delta logs opened. Outside such a block `asked` costs a list
check. No pyspark here.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = [
    "SETTINGS_CHECKED",
    "STATE_READ",
    "WINDOWS_PLANNED",
    "LATEST_AVAILABLE",
    "TARGET_FOUND",
    "asked",
    "counting_facts",
]

SETTINGS_CHECKED = "settings checked"  # the job's settings against those its target was built with
STATE_READ = "state read"  # the job's state (watermark, settings, lock) from its state tables
WINDOWS_PLANNED = "windows planned"  # the command's windows, from the watermark
LATEST_AVAILABLE = "latest available"  # the latest unit present in every source
TARGET_FOUND = "target found"  # the target as a window finds it: exists, schema, partitioning, new columns

_HOOKS: list[Callable[[str], None]] = []
_LOCK = threading.Lock()


def asked(fact: str) -> None:
    """Tell the counting blocks open now that `fact` was worked out once more."""
    if _HOOKS:
        with _LOCK:
            for hook in _HOOKS:
                hook(fact)


@contextmanager
def counting_facts() -> Iterator[collections.Counter[str]]:
    """Count, by fact, what the block works out.

    >>> with counting_facts() as facts:  # doctest: +SKIP
    ...     run("bank_trx")
    >>> facts[SETTINGS_CHECKED]  # doctest: +SKIP
    1
    """
    counted: collections.Counter[str] = collections.Counter()

    def count(fact: str) -> None:
        counted[fact] += 1

    with _LOCK:
        _HOOKS.append(count)
    try:
        yield counted
    finally:
        with _LOCK:
            _HOOKS.remove(count)
