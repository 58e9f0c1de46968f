"""Sources partitioned by a DATE RecDate, by a TIMESTAMP RecDate (hourly job) or not at all: every command works.

Spark escapes ':' in partition folder names (`RecDate=2025-03-01 00%3A00%3A00`): the file-size sum of a scan must
read those names as they are on disk, and so must it when the table path itself has a space, '%3A', '#' or '['.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_jobs import Sources, edit, job_toml, settings_env, write_job
from frames import frame
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from deltainc.cli.app import main
from deltainc.join.options import JoinType
from deltainc.pipeline.delta import spark_counts as spark_counts_module
from deltainc.pipeline.delta.delta_log import local_file_path
from deltainc.pipeline.delta.spark_counts import ScanStats, scan_stats

pytestmark = pytest.mark.spark

T0 = dt.datetime(2025, 3, 1)


@dataclass(frozen=True)
class Layout:
    """How the sources are laid out: RecDate's type, the job's time unit and the partition column, if any."""

    rec_type: str
    time_uom: str
    partition_by: str | None

    def point(self, step: int) -> dt.date | dt.datetime:
        """The RecDate `step` units after the job's start (a date for daily jobs, a timestamp for hourly and
        minutely ones)."""
        if self.time_uom == "hour":
            return T0 + dt.timedelta(hours=step)
        if self.time_uom == "minute":
            return T0 + dt.timedelta(minutes=step)
        return T0.date() + dt.timedelta(days=step)

    def arg(self, step: int) -> str:
        """The same point as a command-line argument: 2025-03-01 or 2025-03-01T01:00."""
        value = self.point(step)
        return value.strftime("%Y-%m-%dT%H:%M") if isinstance(value, dt.datetime) else value.isoformat()


LAYOUTS = {
    "date_partitioned": Layout("date", "day", "RecDate"),
    "timestamp_partitioned": Layout("timestamp", "hour", "RecDate"),
    "minute_partitioned": Layout("timestamp", "minute", "RecDate"),
    "unpartitioned": Layout("date", "day", None),
}


def write_source(spark: SparkSession, path: Path, rows: list[tuple[Any, ...]], schema: str, layout: Layout) -> str:
    """A Delta table at `path`, one file per partition (so every file on disk is one the table holds)."""
    writer = frame(spark, rows, schema).coalesce(1).write.format("delta")
    if layout.partition_by is not None:
        writer = writer.partitionBy(layout.partition_by)
    writer.save(str(path))
    return str(path)


def parquet_on_disk(path: str) -> ScanStats:
    """The data files under `path` and their bytes, as os.walk finds them (checksums and the log left out)."""
    sizes = [
        os.path.getsize(os.path.join(folder, name))
        for folder, _, names in os.walk(path)
        for name in names
        if name.endswith(".parquet") and "_delta_log" not in folder
    ]
    return ScanStats(len(sizes), sum(sizes))


# --- scan_stats ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("folder", "through"),
    [("plain", "local_disk"), ("src dir %3A #1", "local_disk"), ("x[1] %3A #1", "spark")],
    ids=["plain_path", "path_with_space_escape_and_hash", "path_with_glob_characters_through_spark"],
)
def test_scan_stats_counts_the_files_and_bytes_on_disk_of_a_timestamp_partitioned_table(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: str, through: str
) -> None:
    """Sizes from the local file system, or (as on object stores) from a Spark job whose load() paths are globs."""
    if through == "spark":  # the remote branch, run on local files
        monkeypatch.setattr(spark_counts_module, "local_sizes", lambda _files: None)
    layout = LAYOUTS["timestamp_partitioned"]
    rows = [(1, layout.point(0)), (2, layout.point(0)), (3, layout.point(1)), (4, layout.point(13))]
    path = write_source(spark, tmp_path / folder / "a", rows, "TrxId long, RecDate timestamp", layout)
    assert any("%3A00%3A00" in name for name in os.listdir(path))  # Spark's escape of ':' is on disk

    table = spark.read.format("delta").load(path)
    assert scan_stats(spark, table) == parquet_on_disk(path) != ScanStats(0, 0)
    assert parquet_on_disk(path).files == 3
    pruned = table.where(F.col("RecDate") == F.lit(layout.point(13)))
    [hour_13] = [name for name in os.listdir(path) if name.startswith("RecDate=2025-03-01 13")]
    assert scan_stats(spark, pruned) == parquet_on_disk(os.path.join(path, hour_13))
    assert scan_stats(spark, table.where(F.col("RecDate") > F.lit(layout.point(99)))) == ScanStats(0, 0)


def test_local_file_path_keeps_the_on_disk_name_that_input_files_gives() -> None:
    """inputFiles() is Hadoop's Path.toString(): nothing is %-escaped, so nothing may be unquoted."""
    name = "/t/src dir %3A #1/RecDate=2025-03-01 00%3A00%3A00/part-0.parquet"
    assert local_file_path(f"file:{name}") == name
    assert local_file_path(f"file://{name}") == name
    assert local_file_path(name) == name
    assert local_file_path("s3a://bucket/t/part-0.parquet") is None
    assert local_file_path("dbfs:/t/part-0.parquet") is None


# --- every command, on each layout ------------------------------------------------------------------------------


def run_cli(argv: list[str], settings: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`deltainc --settings <file> <argv>` in-process; it must exit 0 (its stderr is the failure message)."""
    code = main(["--settings", str(settings), *argv])
    assert code == 0, f"deltainc {' '.join(argv)} exited {code}: {capsys.readouterr().err}"
    capsys.readouterr()


def target_rows(spark: SparkSession, path: Path) -> set[tuple[Any, ...]]:
    """(TrxId, SepaId, JoinType) of every target row."""
    return {
        tuple(row) for row in spark.read.format("delta").load(str(path)).select("TrxId", "SepaId", "JoinType").collect()
    }


def matched(rows: set[tuple[Any, ...]]) -> set[tuple[Any, ...]]:
    """The rows that joined a B row (SepaId set), as opposed to A rows still waiting."""
    return {row for row in rows if row[1] is not None}


@pytest.mark.parametrize(
    "layout",
    [  # on timestamp partitions a rerun and a backfill follow the run: a window each
        pytest.param(layout, id=name, marks=[pytest.mark.windows] if layout.rec_type == "timestamp" else [])
        for name, layout in LAYOUTS.items()
    ],
)
def test_every_command_works_whatever_the_source_partitioning(
    spark: SparkSession,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    layout: Layout,
) -> None:
    """validate, run and status exit 0 and the target holds the expected matches; on timestamp partitions (the
    layout that crashed) rerun, backfill and profile too."""
    monkeypatch.chdir(tmp_path)
    for name, value in settings_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    settings = tmp_path / "settings.toml"
    settings.write_text("[spark]\nshuffle_partitions = 2\n")
    t0, t1 = layout.point(0), layout.point(1)
    a_schema, b_schema = (
        f"TrxId long, Amount double, RecDate {layout.rec_type}",
        (f"SepaId long, TrxId long, Country string, RecDate {layout.rec_type}"),
    )
    root = tmp_path / "sources"
    b_rows = [(10, 1, "NL", t0), (11, 2, "NL", t1), (12, 3, "DE", t1)]
    a = write_source(spark, root / "a", [(1, 10.0, t0), (2, 20.0, t0), (3, 30.0, t1), (4, 40.0, t1)], a_schema, layout)
    b = write_source(spark, root / "b", b_rows, b_schema, layout)
    if layout.partition_by is not None:
        assert len(os.listdir(a)) == 3  # two RecDate folders and _delta_log
    paths = Sources(a=a, b=b, b_string_key="", b_without_key="", a_duplicates="")

    job = write_job(tmp_path, paths, name="trx")
    backfill_job = write_job(tmp_path, paths, name="trx_backfill")
    for file in (job, backfill_job):
        edit(file, 'how = "left"', f'how = "left"\ntime_uom = "{layout.time_uom}"')
    assert "time_uom" not in job_toml(
        "t", "a", "b", "t", dt.date(2025, 1, 1)
    )  # the template is daily; the edit above is what makes the hourly job hourly

    # TrxId 1 and 3 match in their own unit, 2's B is one unit late (within look_back 1), 4 is still waiting for B
    expected = {
        (1, 10, JoinType.SAME_TIME),
        (2, 11, JoinType.B_LATE),
        (3, 12, JoinType.SAME_TIME),
        (4, None, JoinType.A_WAITING),
    }
    run_cli(["validate", "trx"], settings, capsys)
    run_cli(["run", "trx"], settings, capsys)
    rows = target_rows(spark, tmp_path / "target_trx")
    assert len(matched(rows)) == len(b_rows)  # every B row found its A row
    assert rows == expected
    run_cli(["status", "trx"], settings, capsys)
    if layout.rec_type != "timestamp":  # the rest reads sources as run does; the other suites cover daily jobs
        return
    run_cli(["rerun", "trx", "--start", layout.arg(0)], settings, capsys)
    assert target_rows(spark, tmp_path / "target_trx") == expected
    run_cli(["backfill", "trx_backfill", "--start", layout.arg(0), "--end", layout.arg(1)], settings, capsys)
    assert target_rows(spark, tmp_path / "target_trx_backfill") == expected
    run_cli(["profile", "trx"], settings, capsys)
