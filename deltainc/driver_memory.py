"""The heap of a local session's driver: a share of the machine's memory unless the user set one.

A local session (`local[*]`) runs Spark's executor inside the driver JVM, so the driver's heap is all the memory
Spark has. Spark's default is 1 GB whatever the machine: a month's window of a year's reload (3 million A rows)
needs more (docs/performance.md#memory). When the user sets no `spark.driver.memory` (`[spark.conf]`,
`DELTAINC_SPARK__CONF`, spark-submit's `--driver-memory`, `SPARK_DRIVER_MEMORY` or spark-defaults.conf), the
session deltainc starts gets half of the machine's physical memory, at least 1 GB and at most 16 GB. The heap is
a launch option of the JVM: it is set only for a JVM this process starts, and a session already running keeps its.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

__all__ = ["DRIVER_MEMORY", "machine_memory", "default_driver_memory", "users_driver_memory"]

DRIVER_MEMORY = "spark.driver.memory"
GIB = 1024**3
SHARE = 0.5  # of the machine's physical memory
FLOOR_GIB, CAP_GIB = 1, 16  # Spark's own default; past 16 GB a local session's windows gain nothing measured


def machine_memory(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """The machine's physical memory in bytes: MemTotal of /proc/meminfo (Linux), else the pages sysconf counts
    (macOS and other Unix); None where neither says."""
    try:
        found = re.search(r"^MemTotal:\s+(\d+)\s+kB", meminfo.read_text(), re.M)
        if found:
            return int(found.group(1)) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return None


def default_driver_memory(total: int | None) -> str | None:
    """The driver heap of a local session on a machine of `total` bytes: half of it, in whole GB, within 1-16 GB;
    None when the machine's memory is unknown (Spark's default then applies).

    Example:
        >>> default_driver_memory(32 * 1024**3), default_driver_memory(1 * 1024**3), default_driver_memory(None)
        ('16g', '1g', None)
    """
    if total is None:
        return None
    gib = int(total * SHARE // GIB)
    return f"{min(CAP_GIB, max(FLOOR_GIB, gib))}g"


def users_driver_memory(conf: Mapping[str, str], env: Mapping[str, str]) -> str | None:
    """Where the user set the driver's heap, if they did: the session's `conf` (the settings' [spark.conf] and
    the command's own), spark-submit's arguments, SPARK_DRIVER_MEMORY or spark-defaults.conf (in $SPARK_CONF_DIR
    or $SPARK_HOME/conf), as `env` names them, or spark-submit itself (this process runs inside its JVM); None
    when nowhere.

    Example:
        >>> users_driver_memory({"spark.driver.memory": "8g"}, {})
        '[spark.conf] spark.driver.memory'
    """
    if DRIVER_MEMORY in conf:
        return f"[spark.conf] {DRIVER_MEMORY}"
    if env.get("PYSPARK_GATEWAY_PORT"):  # run by spark-submit: its JVM runs already, with the heap it was given
        return "spark-submit"
    if "--driver-memory" in env.get("PYSPARK_SUBMIT_ARGS", "") or DRIVER_MEMORY in env.get("PYSPARK_SUBMIT_ARGS", ""):
        return "PYSPARK_SUBMIT_ARGS"
    if env.get("SPARK_DRIVER_MEMORY"):
        return "SPARK_DRIVER_MEMORY"
    folder = env.get("SPARK_CONF_DIR") or (f"{env['SPARK_HOME']}/conf" if env.get("SPARK_HOME") else None)
    defaults = Path(folder) / "spark-defaults.conf" if folder else None
    try:
        if defaults is not None and re.search(rf"^\s*{re.escape(DRIVER_MEMORY)}\s", defaults.read_text(), re.M):
            return str(defaults)
    except OSError:
        pass
    return None
