"""JVM options for the suite's Spark JVMs: each worker's, and every process a test starts (a killed run, the CLI, a
Connect server). All start from one Spark distribution (tests/support/spark_home.py) and map its classes from a
class-data archive made once per pyspark release (`python tests/support/jvm_options.py`, which `make test` runs); the
processes, which live seconds, also skip the optimising compiler.

Test set-up only: the product's JVM options are the user's. Passed as SPARK_SUBMIT_OPTS, which spark-submit adds to
the driver's java command line; tests/conftest.py sets it for this process, so every process a test starts has it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from spark_home import spark_home

# C1 only, for the processes: a JVM of seconds spends less on compiling than C2 would win back on tiny data.
_COMPILER = "-XX:TieredStopAtLevel=1"
# The serial collector, for every JVM of the suite: on 2 busy cores G1's concurrent and parallel threads cost more
# than they save on these heaps. Two copies of test_b_side at once: 339 and 350 busy CPU-s against 363 and 378 with
# G1 (alternated); a killed-run process's two windows 24.0-24.6 against 26.9-27.5 (three alternated pairs by hand)
# (tests/SUITE_JVM.md). SUITE_GC replaces it ("" gives the JVM's default, G1).
_GC = "-XX:+UseSerialGC"
# An archive that does not fit this JVM or class path is skipped without a word on stderr (tests read stderr).
_QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")
_KEPT = 3  # archives kept in ~/.cache/deltainc/cds, the newest
# For the workers: the optimising compiler (C2) for the hottest code only, at 16 times its default thresholds. A
# worker runs hundreds of small queries; at the defaults C2 kept compiling Spark's warm code, a third of a worker
# JVM's CPU (test_b_side alone: C2's threads 75 s of the JVM's 200 s), and the suite is CPU-bound on 2 cores. Two
# copies of test_b_side at once, alternated: at 4 times the thresholds a median of 230 s (4 rounds) against 261 s at
# the defaults (5), C1 only 284 s; later, with the serial collector, 16 times 176 and 167 s against 4 times 186 and
# 187 s, and 64 times no better than 16 (tests/SUITE_JVM.md, `python -m tests.tools.suite_jvm_ab`).
# SUITE_WORKER_JIT replaces these.
_C2_DEFAULTS = {"Tier4InvocationThreshold": 5000, "Tier4MinInvocationThreshold": 600,
                "Tier4CompileThreshold": 15000, "Tier4BackEdgeThreshold": 40000}  # fmt: skip
_HOT_ONLY = tuple(f"-XX:{flag}={16 * default}" for flag, default in _C2_DEFAULTS.items())
# The developer's own options (a proxy, a heap size), as the suite's first process found them (kept in the
# environment for the test workers, which inherit the suite's options): the suite's come after them.
_OWN = os.environ.setdefault("SUITE_OWN_SPARK_SUBMIT_OPTS", os.environ.get("SPARK_SUBMIT_OPTS", ""))


def archive_path() -> Path:
    """The archive for this Spark distribution (tests/support/spark_home.py) and this java: CDS checks the class path's
    jars, so it is one per distribution, shared by every checkout and virtualenv of one pyspark release."""
    import pyspark

    home = spark_home()
    java = Path(shutil.which("java") or "java").resolve()
    stamp = "|".join([str(home), pyspark.__version__, str((home / "jars").stat().st_mtime_ns), str(java), _mtime(java)])
    digest = hashlib.sha256(stamp.encode()).hexdigest()[:16]
    return Path.home() / ".cache" / "deltainc" / "cds" / f"spark-{pyspark.__version__}-{digest}.jsa"


def _mtime(path: Path) -> str:
    return str(path.stat().st_mtime_ns) if path.exists() else "-"


def worker_options() -> str:
    """SPARK_SUBMIT_OPTS for a worker's own JVM, which lives the whole run: the archive, the serial collector, and C2
    for the hottest code only (C1 alone is slower here: a two-minute test file took 159 s against 133 s, one run
    each)."""
    archive = archive_path()
    ours = f"-XX:SharedArchiveFile={archive} {' '.join(_QUIET)}" if archive.is_file() else ""
    jit = os.environ.get("SUITE_WORKER_JIT", " ".join(_HOT_ONLY))
    return f"{_OWN} {ours} {_gc()} {jit}".strip()


def _gc() -> str:
    """The collector option of every JVM of the suite: SUITE_GC when set (tests.tools.suite_jvm_ab), else serial."""
    return os.environ.get("SUITE_GC", _GC)


def process_options() -> str:
    """SPARK_SUBMIT_OPTS for the processes the tests start, each a JVM of seconds: C1 too."""
    return f"{worker_options()} {_COMPILER}".strip()


def server_options() -> str:
    """Options for the JVMs a test keeps up for a minute or two (the Connect server; the standalone cluster's
    master, worker, driver and executor): C1 too, as for the processes. They live too briefly for C2 to pay back:
    the cluster test 108-112 busy CPU-seconds against 132-148, the Connect tests a median of 115 against 126
    (tests/SUITE_JVM.md). SUITE_SERVER_JIT=worker gives them the workers' options instead."""
    return worker_options() if os.environ.get("SUITE_SERVER_JIT") == "worker" else process_options()


# A job's daily runs on sample data, in a JVM that writes the classes it loaded when it exits; the script waits
# for that JVM (pyspark would leave it behind still writing). That JVM runs C1 only: the archive holds classes, not
# compiled code, so C2 would only cost (the archive took 71 busy CPU-s with it, 50 without, one run each; a cold
# process's warm-up took 23-24 CPU-s from either archive, 27-28 from none: three alternated pairs, by hand).
_WARM = """
import datetime as dt, sys, tempfile
from pathlib import Path
from pyspark import SparkContext
from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.job.job_config import load_job
from deltainc.settings import Settings, SparkSettings
from deltainc.spark import get_spark
from deltainc.demo.sample_data import SampleSpec, write_sources
from deltainc.demo.jobs import left_job_toml

start = dt.date(2025, 1, 1)
settings = Settings(spark=SparkSettings(master="local[1]", shuffle_partitions=2, log_level="ERROR"))
spark = get_spark(settings)
with tempfile.TemporaryDirectory() as tmp:
    write_sources(spark, SampleSpec(start=start, days=4, rows_per_day=5, seed=1), f"{tmp}/a", f"{tmp}/b")
    job = Path(tmp, "job.toml")
    places = {"max_window": 2, "state": f"{tmp}/state"}
    job.write_text(left_job_toml("warm", f"{tmp}/a", f"{tmp}/b", f"{tmp}/t", start=start, look_back_time=1,
                                 max_waiting_time=2, **places))
    run(load_job(job), spark=spark, settings=settings)
    spark.stop()
gateway = SparkContext._gateway
gateway.shutdown()
gateway.proc.stdin.close()
sys.exit(gateway.proc.wait(timeout=300))
"""


def build_archive() -> Path | None:
    """Make the archive (about 45 s, once per pyspark release); None, and the suite runs without it, if
    that fails."""
    archive = archive_path()
    if archive.is_file():
        return archive
    archive.parent.mkdir(parents=True, exist_ok=True)
    partial = archive.with_suffix(f".{os.getpid()}.partial")
    dump = f"-XX:ArchiveClassesAtExit={partial} {' '.join(_QUIET)} {_gc()} {_COMPILER}"
    environment = {**os.environ, "SPARK_HOME": str(spark_home()), "SPARK_SUBMIT_OPTS": dump}
    try:
        warm = subprocess.run([sys.executable, "-c", _WARM], env=environment, capture_output=True, timeout=600)
    except subprocess.TimeoutExpired:
        warm = None
    if warm is None or warm.returncode != 0 or not partial.is_file():
        sys.stderr.write(warm.stderr.decode(errors="replace")[-2000:] if warm else "the warm-up timed out\n")
        partial.unlink(missing_ok=True)
        return None
    partial.replace(archive)
    for stale in sorted(archive.parent.glob("spark-*.jsa"), key=lambda p: p.stat().st_mtime)[:-_KEPT]:
        stale.unlink(missing_ok=True)  # each is about 200 MB
    return archive


if __name__ == "__main__":
    made = build_archive()
    print(f"tests/support/jvm_options.py: {'class-data archive ' + str(made) if made else 'no class-data archive'}")
