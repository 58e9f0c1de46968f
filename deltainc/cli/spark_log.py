"""Where Spark's own output goes unless --verbose: one file per job in a log folder, rotated by size.

A new file per command filled the temporary folder (dozens a day for a scheduled job); one file per job,
appended to and rotated when it grows, keeps the last few runs' JVM output where a user can find it.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["MAX_BYTES", "KEEP", "log_file"]

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
