"""The Spark distribution the suite's JVMs start from (SPARK_HOME): the installed pyspark's `bin`, `sbin`, `jars` and
`python`, linked into a folder whose path depends only on what they hold.

A class-data archive (tests/support/jvm_options.py) serves only a JVM whose class path names the same jar files, by
path, size and time. pyspark's own folder lies inside its virtualenv, so every fresh clone (its own `.venv`) used to
make an archive of its own (50 busy CPU-s before its suite could start). From this folder, every checkout and virtualenv
of one pyspark release starts the same JVM class path, and the archive made once serves them all.

Test set-up only: users' jobs start from their own pyspark or SPARK_HOME.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

_PARTS = ("bin", "sbin", "jars", "python")  # what spark-submit, spark-class and Python's workers use
_KEPT = 3  # distributions kept in ~/.cache/deltainc/spark-home, the newest


def spark_home() -> Path:
    """SPARK_HOME when it is set (the developer's own Spark, or the suite's, inherited), else the linked copy of the
    installed pyspark's distribution, made on first use (hard links: no copy where the file system allows them)."""
    if os.environ.get("SPARK_HOME"):
        return Path(os.environ["SPARK_HOME"])
    import pyspark

    installed = Path(pyspark.__file__).resolve().parent
    home = Path.home() / ".cache" / "deltainc" / "spark-home" / f"spark-{pyspark.__version__}-{_digest(installed)}"
    if not home.is_dir():
        _link_copy(installed, home)
    return home


def _digest(installed: Path) -> str:
    """What the distribution holds, by each file's path and size under `jars` (the release's own jars) and `bin`."""
    entries = sorted(
        f"{path.relative_to(installed)}:{path.stat().st_size}"
        for part in ("jars", "bin")
        for path in (installed / part).rglob("*")
        if path.is_file()
    )
    return hashlib.sha256("\n".join(entries).encode()).hexdigest()[:16]


def _link_copy(installed: Path, home: Path) -> None:
    """Make `home` from `installed` under a temporary name, then rename it: a suite's processes may race to make it."""
    partial = home.with_name(f"{home.name}.{os.getpid()}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    for part in _PARTS:
        if (installed / part).is_dir():
            shutil.copytree(installed / part, partial / part, copy_function=_link_or_copy)
    try:
        partial.rename(home)
    except OSError:  # another process made it first
        shutil.rmtree(partial, ignore_errors=True)
        return
    for stale in sorted(home.parent.glob("spark-*"), key=lambda p: p.stat().st_mtime)[:-_KEPT]:
        if not stale.name.endswith(".partial"):
            shutil.rmtree(stale, ignore_errors=True)


def _link_or_copy(source: str, target: str) -> None:
    """A hard link keeps the jar's size and time, which is what the archive checks; a copy keeps them too."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)
