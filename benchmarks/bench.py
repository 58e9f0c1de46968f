"""The bench every scenario on generated sources measures with: the session, the sources, where to work and how to
measure (`Bench`), and how a job's tables are put back so that a first-time run can be repeated."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import DataFrame, SparkSession

from benchmarks.data import Sources, table_version
from benchmarks.timing import Counter, Measurement, measure
from deltainc import pipeline
from deltainc.pipeline.controller.plan import WindowReport
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.state.store import state_paths
from deltainc.settings import Settings

__all__ = ["Bench", "fresh", "job_tables", "read_delta", "restore", "restorer", "snapshot"]


@dataclass(frozen=True)
class Bench:
    """Everything a scenario needs: the session, the sources, where to work, and how to measure."""

    spark: SparkSession
    settings: Settings
    sources: Sources
    work: Path
    repeat: int
    budget_s: float
    look_back: int
    max_wait: int
    partition_by: tuple[str, ...] | None  # None = the job's default layout
    echo: Callable[[str], None]

    @property
    def target_partitioning(self) -> tuple[str, ...]:
        """The partition columns of the deltainc target, which the naive and stream targets copy."""
        return ("RecDate",) if self.partition_by is None else self.partition_by

    def job(self, name: str, max_window: int, path_a: str | None = None, path_b: str | None = None) -> JobConfig:
        """A left join of A and B on TrxId with the benchmark's tolerances; target and state under work/name."""
        return JobConfig.model_validate(
            {
                "name": name,
                "start_date": self.sources.spec.start,
                "max_window": max_window,
                "source_a": {"path": path_a or self.sources.path_a},
                "source_b": {"path": path_b or self.sources.path_b},
                "join": {
                    "how": "left",
                    "join_cols": ["TrxId"],
                    "look_back_time": self.look_back,
                    "max_waiting_time": self.max_wait,
                    "include_waiting": True,
                },
                "target": {
                    "path": str(self.work / name / "target"),
                    "keys": ["TrxId"],
                    "b_keys": ["SepaId"],
                    "partition_by": None if self.partition_by is None else list(self.partition_by),
                },
                "state": {"path": str(self.work / name / "state")},
            }
        )

    def measure(
        self,
        name: str,
        call: Callable[[], Any],
        setup: Callable[[int], None] | None = None,
        counter: Counter | None = None,
    ) -> Measurement:
        """`timing.measure` of `call` with the bench's repetitions, time budget and echo."""
        return measure(name, call, self.repeat, self.budget_s, setup=setup, echo=self.echo, counter=counter)

    def run(self, job: JobConfig, until: int, on_step: Callable[[str], None] | None = None) -> tuple[WindowReport, ...]:
        """pipeline.run(job, until=day `until`); the windows it processed."""
        day = self.sources.day(until)
        return pipeline.run(job, until=day, spark=self.spark, settings=self.settings, on_step=on_step).windows

    def daily(self, job: JobConfig, number: int, on_step: Callable[[str], None] | None = None) -> WindowReport:
        """The scheduled run for day `number` (watermark at number - 1): exactly one window, that day."""
        windows = self.run(job, number, on_step)
        label = self.sources.day(number).isoformat()
        if len(windows) != 1 or str(windows[0].window) != label:
            raise RuntimeError(f"daily run of {job.name} for {label} processed {[str(w.window) for w in windows]}")
        return windows[0]


def read_delta(spark: SparkSession, path: str) -> DataFrame:
    """The Delta table at `path`."""
    return spark.read.format("delta").load(path)


# --- restoring a job to an earlier state, so that a first-time run can be repeated ---------------------


def job_tables(bench: Bench, job: JobConfig) -> list[str]:
    """The tables a run changes and a repetition must find as before: the target, the run log (which holds
    the watermark) and the lock table."""
    paths = state_paths(job.state_path(bench.settings.state_dir))
    return [str(job.target.path), paths.runs, paths.locks]


def snapshot(bench: Bench, job: JobConfig) -> dict[str, int]:
    """The current version of every table a run of `job` changes."""
    return {path: table_version(bench.spark, path) for path in job_tables(bench, job)}


def restore(bench: Bench, versions: dict[str, int]) -> None:
    """Put the tables back to `versions` (Delta RESTORE: the same files as before, as a new commit)."""
    for path, version in versions.items():
        if table_version(bench.spark, path) != version:
            DeltaTable.forPath(bench.spark, path).restoreToVersion(version)


def restorer(bench: Bench, versions: dict[str, int]) -> Callable[[int], None]:
    """A measurement set-up that restores the tables to `versions` before every repetition."""

    def setup(_repetition: int) -> None:
        restore(bench, versions)

    return setup


def fresh(*paths: Path) -> None:
    """Remove the folders `paths` where they exist, so that a repetition starts from empty tables."""
    for path in paths:
        if path.exists():
            shutil.rmtree(path)
