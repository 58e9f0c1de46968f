"""Counting the Spark jobs of a measurement: those of the measuring thread and those deltainc starts for a window
in threads of its own."""

from __future__ import annotations

from pyspark.sql import SparkSession

__all__ = ["PIPELINE_GROUPS", "SparkJobs"]

# The job groups deltainc puts a window's Spark jobs in (`deltainc.spark_compat.labelled_jobs`): a window's own, and
# its too-late search's in the thread beside it. They replace the caller's group while the window runs. The window's
# commit runs in a thread of its own (`finish_commit`), whose jobs carry no group: None.
PIPELINE_GROUPS: tuple[str | None, ...] = ("deltainc", "deltainc-too-late", None)


class SparkJobs:
    """A timing.Counter of the Spark jobs started between begin() and end() in any thread (status tracker): those of
    this thread's group, those deltainc labelled as a window's or its search's, and those of threads without a
    group (the window's commit) meanwhile."""

    def __init__(self, spark: SparkSession) -> None:
        self._context = spark.sparkContext
        self._number = 0
        self._group = ""
        self._before: set[int] = set()

    def _pipeline_jobs(self) -> set[int]:
        tracker = self._context.statusTracker()
        return {job_id for group in PIPELINE_GROUPS for job_id in tracker.getJobIdsForGroup(group)}

    def begin(self) -> None:
        self._number += 1
        self._group = f"deltainc-bench-{self._number}"
        self._before = self._pipeline_jobs()
        self._context.setJobGroup(self._group, "deltainc benchmark measurement")

    def now(self) -> int:
        """The jobs started since begin() so far (the count goes on)."""
        jobs = len(self._context.statusTracker().getJobIdsForGroup(self._group))
        return jobs + len(self._pipeline_jobs() - self._before)

    def end(self) -> int:
        jobs = self.now()
        self._context.setJobGroup("deltainc-bench-idle", "deltainc benchmark, not measured")
        return jobs
