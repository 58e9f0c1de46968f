"""The one place a SparkSession is built: Delta Lake configured, UTC, settings applied; local or Spark Connect."""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from deltainc.connect_client import bounded_retries
from deltainc.connect_conf import client_conf, left_message, refused_by_server
from deltainc.driver_memory import DRIVER_MEMORY, default_driver_memory, machine_memory, users_driver_memory
from deltainc.settings import Settings, load_settings, resolved
from deltainc.settings import use as use_storage
from deltainc.spark_compat import delta_packages, note_startup_seconds, set_log_level
from deltainc.spark_driver import dying_with_this_process
from deltainc.storage import s3_packages, spark_conf

__all__ = ["get_spark", "delta_packages", "remote_url"]

log = logging.getLogger("deltainc")
DATAFRAME_DEBUGGING = "spark.python.sql.dataFrameDebugging.enabled"  # PySpark 4: the call sites of DataFrame calls


def _jar_list(packages: str) -> Path:
    """Where the local jar files that Spark resolved for these packages (Delta's, S3A's) are remembered."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    name = packages.replace(":", "_").replace(",", "+")
    return cache / "deltainc" / f"jars-{name}.txt"


def resolved_jars(packages: str | None = None) -> str | None:
    """The Delta jars as local files, when an earlier start resolved them and they are all still on disk: given
    as `spark.jars`, a start skips the dependency resolution of `spark.jars.packages` (seconds at every start)."""
    try:
        jars = _jar_list(packages or delta_packages()).read_text().strip()
    except OSError:
        return None
    files = [jar.removeprefix("file://").removeprefix("file:") for jar in jars.split(",")]
    return jars if jars and all(os.path.isfile(path) for path in files) else None


def _remember_jars(spark: SparkSession, packages: str) -> None:
    """Write down the jar files `spark.jars.packages` resolved to (best effort: a read-only home just resolves)."""
    jars = spark.conf.get("spark.jars", "") or ""
    if "delta-spark" not in jars:
        return
    try:
        _jar_list(packages).parent.mkdir(parents=True, exist_ok=True)
        _jar_list(packages).write_text(jars)
    except OSError:
        pass


def remote_url(settings: Settings, remote: str | None = None) -> str | None:
    """The Spark Connect server to be a client of: `remote`, else [spark] remote, else $SPARK_REMOTE; else None."""
    return remote or settings.spark.remote or os.environ.get("SPARK_REMOTE") or None


def _connect(settings: Settings, url: str, extra_conf: dict[str, str]) -> SparkSession:
    """A Spark Connect client session of the server at `url`; only session settings can be set from here.

    The server owns the JVM, so Delta's jars and SQL extension are the server's configuration (`deltainc
    serve` starts one with both); the session's time zone and shuffle partitions are set per session. pyspark
    switches the whole process to Connect (its functions build Connect columns from then on), so a process
    holds either a local session or Connect sessions, not both.
    """
    conf = {
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": str(settings.spark.shuffle_partitions),
        **settings.spark.conf,
        **extra_conf,
    }
    session = SparkSession.builder.remote(url).getOrCreate()
    bounded_retries(session)  # a server gone ends the command in seconds, not pyspark's ten minutes
    split = client_conf(conf)  # session settings only: the server's static configuration is its own
    left = list(split.left)
    for key, value in split.sent.items():
        try:
            session.conf.set(key, value)
        except AnalysisException as exc:  # a setting the server fixed at its start that client_conf does not know
            if not refused_by_server(exc):
                raise
            left.append(key)
    if left:
        log.warning(left_message(tuple(left)))
    return session


def get_spark(
    settings: Settings | None = None,
    extra_conf: dict[str, str] | None = None,
    remote: str | None = None,
    s3: bool = False,
) -> SparkSession:
    """Get or create the SparkSession described by `settings` (default: conf file and environment).

    With a Spark Connect URL (`remote`, [spark] remote or $SPARK_REMOTE, e.g. sc://host:15002) the session is
    a thin client of that server: no JVM starts here. `s3`: a job reads or writes S3, so the session starting
    here gets S3A's jars and configuration ([storage]); a job on local paths does not pay for them.
    """
    settings = settings or load_settings()
    use_storage(settings.storage)
    url = remote_url(settings, remote)
    if url is not None:
        return _connect(settings, url, extra_conf or {})
    spark_settings = settings.spark
    packages, excludes = ([delta_packages()], []) if not s3 else _with_s3()
    jars = resolved_jars(",".join(packages))
    conf: dict[str, str] = {
        **({"spark.jars": jars} if jars else {"spark.jars.packages": ",".join(packages)}),
        **({"spark.jars.excludes": ",".join(excludes)} if excludes and not jars else {}),
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": str(spark_settings.shuffle_partitions),
        "spark.sql.warehouse.dir": str(settings.warehouse_dir.absolute()),
        "spark.ui.enabled": str(spark_settings.ui_enabled).lower(),
        "spark.ui.showConsoleProgress": "false",
        "spark.databricks.delta.snapshotPartitions": "2",
        # PySpark 4 records the Python call site of every DataFrame call (four JVM round trips each) for error
        # contexts; deltainc's plans are built inside deltainc, so the site would name its code, not the user's.
        # Recording them took a window's plan 3.3-3.9 times the round trips (benchmarks/DECISIONS.md).
        DATAFRAME_DEBUGGING: "false",
        # Spark keeps 100 compiled query stages. A window compiles dozens, many of them with its own dates, so a run of
        # several windows, a Connect server or a notebook compiled the same code again: 12 daily windows in one
        # session compiled 882 stages with 100 kept, 321 with 5,000, and the same windows again none
        # (tests/SUITE_JVM.md).
        "spark.sql.codegen.cache.maxEntries": "5000",
        # Spark's status store keeps 1,000 finished jobs, stages and SQL executions, with the UI off too; a session
        # that runs window after window (`serve`, a backfill) filled it, its heap after 60 daily windows 1.32x the
        # heap after the fifth, against 1.16x with 200 (benchmarks/results/MEMORY_2026-12-03.md). A window's fit.
        "spark.ui.retainedJobs": "200",
        "spark.ui.retainedStages": "200",
        "spark.sql.ui.retainedExecutions": "200",
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={settings.warehouse_dir.absolute()}",
    }
    if s3:
        conf.update(spark_conf(resolved(settings.storage)))
    if spark_settings.executor_memory:
        conf["spark.executor.memory"] = spark_settings.executor_memory
    if spark_settings.executor_cores:
        conf["spark.executor.cores"] = str(spark_settings.executor_cores)
    conf.update(spark_settings.conf)
    conf.update(extra_conf or {})
    fresh = SparkSession.getActiveSession() is None
    if fresh and (spark_settings.master or "").startswith("local"):
        _size_local_driver(conf)
    builder = SparkSession.builder.appName(spark_settings.app_name)
    if spark_settings.master:
        builder = builder.master(spark_settings.master)
    for key, value in conf.items():
        builder = builder.config(key, value)
    clock = time.monotonic()
    with dying_with_this_process():  # a JVM started here does not outlive this process (spark_driver)
        spark = builder.getOrCreate()
    if fresh:
        note_startup_seconds(spark, time.monotonic() - clock)
    set_log_level(spark, spark_settings.log_level)
    if jars is None and "spark.jars" not in conf:
        _remember_jars(spark, ",".join(packages))
    return spark


def _size_local_driver(conf: dict[str, str]) -> None:
    """Give a local session's driver JVM half of the machine's memory (`driver_memory`) unless the user set its
    heap somewhere; said at info, as the session's other settings are."""
    own = users_driver_memory(conf, os.environ)
    if own is not None:
        log.info("driver memory: the user's, from %s", own)
        return
    total = machine_memory()
    memory = default_driver_memory(total)
    if memory is None or total is None:
        return
    conf[DRIVER_MEMORY] = memory
    log.info(
        "driver memory %s: half of this machine's %.1f GB, within 1-16 GB (set spark.driver.memory under "
        "[spark.conf] or DELTAINC_SPARK__CONF to change it)",
        memory,
        total / 1024**3,
    )


def _with_s3() -> tuple[list[str], list[str]]:
    """Delta's packages and S3A's, and the packages to leave out of their resolution."""
    s3_jars, excludes = s3_packages()
    return [delta_packages(), *s3_jars], excludes


def _warm(s3: bool) -> None:
    """Start a session and write one Delta table, so that the jars are resolved and cached (`s3`: S3A's too, as a
    job on S3 starts with them). Several JVMs that resolve at once share Ivy's cache and can break each other's
    downloads, so a test suite warms once before its workers start. With the jars already on disk (an earlier
    start resolved them) there is nothing to resolve, and no JVM starts: `make test` and `make demo` on a second
    clone skip a Spark start (0.25 s against 14.5 s, three alternated pairs of whole processes)."""
    import tempfile

    if resolved_jars(",".join(_with_s3()[0]) if s3 else delta_packages()) is not None:
        print(f"deltainc: {delta_packages()}{' and S3A' if s3 else ''}: the jars are on disk")
        return
    spark = get_spark(load_settings(spark={"master": "local[1]"}), s3=s3)
    with tempfile.TemporaryDirectory() as tmp:
        spark.range(1).write.format("delta").save(f"{tmp}/warm")
        rows = spark.read.format("delta").load(f"{tmp}/warm").count()
    spark.stop()
    jars = delta_packages() + (" and S3A" if s3 else "")
    print(f"deltainc: Spark {spark.version} with {jars} ready ({rows} row read back)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--warm", action="store_true", help="resolve and cache the Delta jars")
    parser.add_argument("--coordinates", action="store_true", help="print the Delta jars' Maven coordinates")
    parser.add_argument("--s3", action="store_true", help="S3A's jars too (a job with a table in S3 starts with them)")
    args = parser.parse_args()
    if args.coordinates:  # the Makefile's fallback fetches exactly these with mvn
        storage = f"io.delta:delta-storage:{delta_packages().rsplit(':', 1)[1]}"
        print(delta_packages(), storage, *(_with_s3()[0][1:] if args.s3 else []))
    if args.warm:
        _warm(args.s3)
