"""What a benchmark ran on: the machine, its load, the versions and the Spark settings that shape the numbers."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from pyspark.sql import SparkSession

__all__ = ["load_average", "machine_info", "spark_conf", "versions"]


_CONF_PREFIXES = ("spark.master", "spark.driver.memory", "spark.default.parallelism", "spark.sql.", "spark.databricks.")


_CONF_SKIP = ("spark.sql.warehouse.dir", "spark.sql.extensions", "spark.sql.catalog.spark_catalog")


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def machine_info() -> dict[str, str]:
    """nproc, memory, CPU model, OS, Python, and the load average when the benchmark started."""
    cpuinfo = _read_text("/proc/cpuinfo")
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")), "")
    meminfo = _read_text("/proc/meminfo")
    mem_kb = next((int(line.split()[1]) for line in meminfo.splitlines() if line.startswith("MemTotal:")), 0)
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "nproc (usable / online)": f"{usable} / {os.cpu_count()}",
        "memory": f"{mem_kb / 1024 / 1024:.1f} GiB" if mem_kb else "unknown",
        "CPU model": model or platform.processor() or "unknown",
        "OS": platform.platform(),
        "load average at start (1/5/15 min)": load_average(),
    }


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, as RESULTS.md shows them."""
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def _java_version() -> str:
    java = Path(os.environ["JAVA_HOME"]) / "bin" / "java" if os.environ.get("JAVA_HOME") else Path("java")
    try:
        done = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    lines = (done.stderr or done.stdout).strip().splitlines()
    return lines[0] if lines else "unknown"


def _package(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def versions(spark: SparkSession) -> dict[str, str]:
    """Python, Spark, pyspark, delta-spark, deltainc and Java, as the run used them."""
    return {
        "Python": sys.version.split()[0],
        "Spark (JVM)": spark.version,
        "pyspark": _package("pyspark"),
        "delta-spark": _package("delta-spark"),
        "deltainc": _package("deltainc"),
        "Java": _java_version(),
    }


def spark_conf(spark: SparkSession) -> dict[str, str]:
    """The Spark settings that shape the numbers (master, memory, SQL and Delta settings), as the session has them."""
    conf = dict(spark.sparkContext.getConf().getAll())
    for key in (
        "spark.sql.shuffle.partitions",
        "spark.sql.adaptive.enabled",
        "spark.sql.streaming.stateStore.providerClass",
    ):
        try:
            conf[key] = conf.get(key) or str(spark.conf.get(key))
        except Exception:  # a key without a default
            conf[key] = "(unset)"
    return {k: v for k, v in sorted(conf.items()) if k.startswith(_CONF_PREFIXES) and k not in _CONF_SKIP}
