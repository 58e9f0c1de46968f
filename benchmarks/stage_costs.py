"""What Spark's jobs cost in tasks' CPU, read from the session's status store (the UI's data, kept with the UI off):
per job its stages, tasks, executor CPU time and shuffle bytes, for phase-by-phase profiles on a shared machine,
where CPU time says more than wall seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession

__all__ = ["JobCost", "last_job", "job_costs"]

_GROUPS: tuple[str | None, ...] = ("deltainc", "deltainc-too-late", None)


@dataclass(frozen=True)
class JobCost:
    """One Spark job: its id, group and label, and over its completed stages the tasks, executor CPU seconds and
    shuffle bytes read and written."""

    job_id: int
    group: str
    label: str
    stages: int
    tasks: int
    cpu_s: float
    shuffle_read: int
    shuffle_write: int


def last_job(spark: SparkSession, groups: tuple[str | None, ...] = ()) -> int:
    """The highest job id Spark started so far in deltainc's groups, the thread-less group and `groups` (-1: none)."""
    tracker = spark.sparkContext.statusTracker()
    ids = [job for group in (*_GROUPS, *groups) for job in tracker.getJobIdsForGroup(group)]
    return max(ids, default=-1)


def _option(value: object) -> str:
    return str(value.get()) if value.isDefined() else ""  # type: ignore[attr-defined]


def job_costs(spark: SparkSession, after: int, upto: int) -> list[JobCost]:
    """The cost of the jobs numbered after `after` up to `upto`, each stage counted once (with the first job that
    ran it; a skipped stage costs nothing). Jobs Spark no longer retains are left out."""
    context: Any = spark.sparkContext  # py4j handles: untyped
    store, gateway = context._jsc.sc().statusStore(), context._gateway
    quantiles = gateway.new_array(gateway.jvm.double, 0)
    seen: set[int] = set()
    found = []
    for number in range(after + 1, upto + 1):
        try:
            job = store.job(number)
        except Exception:  # evicted (spark.ui.retainedJobs) or never started
            continue
        stages = [int(s) for s in str(job.stageIds().mkString(",")).split(",") if s] if job.stageIds().size() else []
        tasks = cpu = read = write = ran = 0
        for stage in stages:
            if stage in seen:
                continue
            seen.add(stage)
            attempts = store.stageData(stage, False, None, False, quantiles)
            for index in range(attempts.size()):
                data = attempts.apply(index)
                if str(data.status().toString()) != "COMPLETE":
                    continue
                ran += 1
                tasks += int(data.numCompleteTasks())
                cpu += int(data.executorCpuTime())
                read += int(data.shuffleReadBytes())
                write += int(data.shuffleWriteBytes())
        label = _option(job.description()) or str(job.name())
        found.append(JobCost(number, _option(job.jobGroup()), label[:120], ran, tasks, cpu / 1e9, read, write))
    return found
