"""The order in which the jobs of a job directory run: each after the jobs whose targets it reads (a source's
`job = "..."`), so that one `deltainc run` brings a chain of jobs up to date."""

from __future__ import annotations

from collections.abc import Sequence
from graphlib import CycleError, TopologicalSorter

from deltainc.errors import ConfigError
from deltainc.pipeline.job.job_config import JobConfig

__all__ = ["upstream_jobs", "run_order", "downstream_jobs"]


def upstream_jobs(job: JobConfig) -> tuple[str, ...]:
    """The names of the jobs whose targets `job` reads, sorted."""
    return tuple(sorted({ref.job for _, ref in job.sources if ref.job is not None}))


def run_order(jobs: Sequence[JobConfig]) -> list[JobConfig]:
    """`jobs`, each after the jobs among them that it reads; jobs that wait on nothing run by name.

    Args:
        jobs: loaded jobs (`load_job` has refused a missing upstream job and a cycle through the job files).

    Raises:
        ConfigError: two jobs of one name, or jobs that read each other in a cycle, naming them.

    Example: ``[job.name for job in run_order([scans, trx])] == ["trx", "trx_scans"]`` where trx_scans reads
    `job = "trx"`.
    """
    by_name: dict[str, JobConfig] = {}
    for job in jobs:
        if by_name.setdefault(job.name, job) is not job:
            raise ConfigError(f"name: two job files name their job {job.name!r}; each job needs a name of its own")
    sorter = TopologicalSorter({name: [u for u in upstream_jobs(job) if u in by_name] for name, job in by_name.items()})
    try:
        sorter.prepare()
    except CycleError as exc:
        raise ConfigError(f"the jobs read each other in a cycle: {' -> '.join(exc.args[1])}") from None
    order: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready())
        order += ready
        sorter.done(*ready)
    return [by_name[name] for name in order]


def downstream_jobs(jobs: Sequence[JobConfig], name: str) -> list[JobConfig]:
    """The jobs among `jobs` that read the target of the job `name`, directly or through others, in run order.

    Example: ``[job.name for job in downstream_jobs([risk, trx_scans, trx], "trx")] == ["trx_scans", "risk"]`` where
    trx_scans reads `job = "trx"` and risk reads `job = "trx_scans"`.
    """
    reached = {name}
    below: list[JobConfig] = []
    for job in run_order(jobs):
        if job.name != name and reached.intersection(upstream_jobs(job)):
            reached.add(job.name)
            below.append(job)
    return below
