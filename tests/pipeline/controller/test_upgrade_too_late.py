"""A job built by the release whose too-late rows were only the B rows of timed-out A rows, run on by this release,
then migrated: `migrate` brings its too-late rows onto the current rule, as a rerun from the first day would.

tests/fixtures/old_too_late_job holds its sources, target, too-late table and state as that release wrote them
(made by tests/fixtures/make_old_too_late_job.py): six days of sources, the first four processed in one window.
"""

from __future__ import annotations

import importlib.util
import shutil
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
from deltalake import DeltaTable
from expected import same_rows
from pyspark.sql import DataFrame, SparkSession

from deltainc.pipeline.controller.commands import rerun, run
from deltainc.pipeline.controller.migrate import Migration, migrate
from deltainc.pipeline.delta.sources import latest_commit
from deltainc.pipeline.delta.sql import path_ref
from deltainc.pipeline.inspect.validate import validate_from_logs
from deltainc.pipeline.job.job_config import JobConfig

pytestmark = pytest.mark.windows

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _generator() -> ModuleType:
    """The fixture's generator, for its job's settings (the same job the released code ran)."""
    spec = importlib.util.spec_from_file_location("make_old_too_late_job", FIXTURES / "make_old_too_late_job.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATOR = _generator()


def copied_job(root: Path) -> JobConfig:
    """The fixture's job, its tables copied under `root`, run daily from here on."""
    shutil.copytree(FIXTURES / "old_too_late_job", root)
    return JobConfig.model_validate({**GENERATOR.job_settings(root), "max_window": 1})


def late_rows(spark: SparkSession, job: JobConfig) -> DataFrame:
    return spark.read.format("delta").load(job.target.late_rows)


def late_version(spark: SparkSession, job: JobConfig) -> int:
    return version_of(spark, job.target.late_rows or "")


def labels(job: JobConfig) -> tuple[str, str]:
    """How migrate names the job's target and too-late rows' table."""
    late = job.target.late_rows_ref
    assert late is not None
    return job.target.label, late.label


def version_of(spark: SparkSession, path: str) -> int:
    commit = latest_commit(spark, path_ref(path))
    assert commit is not None
    return int(commit["version"])


@dataclass(frozen=True)
class Upgraded:
    """The fixture's job run on by this release, its too-late rows before `migrate`, the first and the second
    migrate, the too-late table's version between them, and the too-late rows of a copy rerun from the first
    day instead."""

    job: JobConfig
    warned: tuple[str, ...]  # validate's warnings before migrate, and after
    warned_after: tuple[str, ...]
    before: DataFrame
    dry_run: Migration
    versions_around_dry_run: tuple[list[int], list[int]]  # the target's and the too-late table's, before and after
    migrated: Migration
    version_after_first: int
    again: Migration
    rerun_rows: DataFrame


@pytest.fixture(scope="module")
def upgraded(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Upgraded:
    root = tmp_path_factory.mktemp("upgrade")
    job = copied_job(root / "job")
    run(job, spark=spark)  # this release runs on, day by day
    shutil.copytree(root / "job", root / "copy")
    copy = JobConfig.model_validate({**GENERATOR.job_settings(root / "copy"), "max_window": 1})
    rerun(copy, start=GENERATOR.START, spark=spark)
    before = late_rows(spark, job).localCheckpoint()
    warned = validate_from_logs(job).warnings
    tables = [job.target.path or "", job.target.late_rows or ""]
    before_dry_run = [version_of(spark, path) for path in tables]
    dry_run = migrate(job, spark=spark, dry_run=True)
    around = (before_dry_run, [version_of(spark, path) for path in tables])
    migrated = migrate(job, spark=spark)
    version_after_first = late_version(spark, job)
    again = migrate(job, spark=spark)
    rerun_rows = late_rows(spark, copy).localCheckpoint()
    warned_after = validate_from_logs(job).warnings
    return Upgraded(job, warned, warned_after, before, dry_run, around, migrated, version_after_first, again,
                    rerun_rows)  # fmt: skip


def test_the_fixture_s_too_late_rows_miss_rows_of_the_current_rule(upgraded: Upgraded) -> None:
    missing = upgraded.rerun_rows.exceptAll(upgraded.before)
    assert missing.count() > 0
    assert upgraded.before.exceptAll(upgraded.rerun_rows).count() == 0
    assert {row.RecDate for row in missing.collect()} <= {GENERATOR.day(n) for n in range(1, GENERATOR.DAYS_RUN + 1)}


def test_migrate_gives_the_too_late_rows_a_rerun_from_the_first_day_gives(
    spark: SparkSession, upgraded: Upgraded
) -> None:
    same_rows(late_rows(spark, upgraded.job), upgraded.rerun_rows)


def test_migrate_says_what_it_added_and_the_rerun_that_would_have_written_it(upgraded: Upgraded) -> None:
    late = upgraded.migrated.late_rows
    assert late is not None
    added = upgraded.rerun_rows.exceptAll(upgraded.before).count()
    assert (late.added, late.removed, late.first) == (added, 0, GENERATOR.START.isoformat())
    commits = {c["version"]: c for c in DeltaTable(upgraded.job.target.late_rows or "").history()}
    assert late.version is not None and commits[late.version]["operation"] == "WRITE"  # then the feature's drop
    assert f"{added} added, 0 removed" in upgraded.migrated.message
    assert f"`deltainc rerun trx --start {GENERATOR.START.isoformat()}`" in upgraded.migrated.message


def test_a_second_migrate_writes_nothing(spark: SparkSession, upgraded: Upgraded) -> None:
    again = upgraded.again
    assert again.version is None and again.late_rows is not None and again.late_rows.version is None
    assert (again.late_rows.added, again.late_rows.removed) == (0, 0)
    assert late_version(spark, upgraded.job) == upgraded.version_after_first
    assert "follow the current rule; nothing written" in again.message


def test_validate_names_migrate_for_the_too_late_rows_of_a_target_an_earlier_release_built(upgraded: Upgraded) -> None:
    [warning] = [w for w in upgraded.warned if w.startswith("target.late_rows:")]
    assert "`deltainc migrate trx` also recomputes them under the current rule" in warning
    assert not [w for w in upgraded.warned_after if w.startswith("target.late_rows:")]


def test_migrate_drops_the_deletion_vector_feature_an_earlier_release_gave_the_target_and_the_too_late_rows(
    spark: SparkSession, upgraded: Upgraded
) -> None:
    job = upgraded.job
    assert upgraded.migrated.dropped_features == labels(job)
    for path in (job.target.path or "", job.target.late_rows or ""):
        table = DeltaTable(path)
        assert "deletionVectors" not in (table.protocol().reader_features or []), path
        spark_rows = sorted((tuple(r) for r in spark.read.format("delta").load(path).collect()), key=repr)
        columns = spark.read.format("delta").load(path).columns
        read = table.to_pyarrow_table().select(columns).to_pylist()
        assert sorted((tuple(r.values()) for r in read), key=repr) == spark_rows, path
    assert "dropped the Delta reader feature deletionVectors" in upgraded.migrated.message
    assert not upgraded.again.dropped_features


def test_a_dry_run_of_migrate_says_what_it_would_do_and_writes_nothing(upgraded: Upgraded) -> None:
    job, dry_run = upgraded.job, upgraded.dry_run
    before, after = upgraded.versions_around_dry_run
    assert before == after
    assert dry_run.dry_run and dry_run.version is None and dry_run.late_rows is None
    assert dry_run.dropped_features == labels(job)
    lines = dry_run.message.splitlines()
    assert lines[0] == "trx: dry run, nothing written; migrate would:"
    assert lines[1] == "  - rewrite the target from partitions (RecDate) to (RecDate, IsFinal)"
    assert lines[3:] == [
        f"  - drop the Delta reader feature deletionVectors from {p}" for p in dry_run.dropped_features
    ]
