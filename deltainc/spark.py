"""The one place a SparkSession is built: Delta Lake configured, UTC, settings applied."""

from __future__ import annotations

import argparse
from importlib.metadata import version

from pyspark.sql import SparkSession

from deltainc.settings import Settings, load_settings

__all__ = ["get_spark", "delta_packages"]

SCALA_VERSION = "2.12"


def delta_packages() -> str:
    """The Maven coordinates of the Delta jars matching the installed delta-spark."""
    return f"io.delta:delta-spark_{SCALA_VERSION}:{version('delta-spark')}"


def get_spark(settings: Settings | None = None, extra_conf: dict[str, str] | None = None) -> SparkSession:
    """Get or create the SparkSession described by `settings` (default: conf file and environment)."""
    settings = settings or load_settings()
    spark_settings = settings.spark
    conf: dict[str, str] = {
        "spark.jars.packages": delta_packages(),
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": str(spark_settings.shuffle_partitions),
        "spark.sql.warehouse.dir": str(settings.warehouse_dir.absolute()),
        "spark.ui.enabled": str(spark_settings.ui_enabled).lower(),
        "spark.ui.showConsoleProgress": "false",
        "spark.databricks.delta.snapshotPartitions": "2",
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={settings.warehouse_dir.absolute()}",
    }
    if spark_settings.executor_memory:
        conf["spark.executor.memory"] = spark_settings.executor_memory
    if spark_settings.executor_cores:
        conf["spark.executor.cores"] = str(spark_settings.executor_cores)
    conf.update(spark_settings.conf)
    conf.update(extra_conf or {})
    builder = SparkSession.builder.appName(spark_settings.app_name)
    if spark_settings.master:
        builder = builder.master(spark_settings.master)
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(spark_settings.log_level)
    return spark


def _warm() -> None:
    """Start a session and write one Delta table, so that the jars are resolved and cached."""
    import tempfile

    spark = get_spark(load_settings(spark={"master": "local[1]"}))
    with tempfile.TemporaryDirectory() as tmp:
        spark.range(1).write.format("delta").save(f"{tmp}/warm")
        rows = spark.read.format("delta").load(f"{tmp}/warm").count()
    spark.stop()
    print(f"deltainc: Spark {spark.version} with {delta_packages()} ready ({rows} row read back)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--warm", action="store_true", help="resolve and cache the Delta jars")
    if parser.parse_args().warm:
        _warm()
