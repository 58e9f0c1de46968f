"""The order of a job directory's jobs in one `deltainc run`: each after the jobs whose targets it reads."""

from __future__ import annotations

import datetime as dt

import pytest

from deltainc.errors import ConfigError
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.order import downstream_jobs, run_order, upstream_jobs

pytestmark = pytest.mark.pure


def job(name: str, *reads: str) -> JobConfig:
    """A job whose source A reads the target of the job `reads[0]` and source B that of `reads[1]` (else a table)."""
    a, b = (*reads, None, None)[:2]
    return JobConfig.model_validate(
        {
            "name": name,
            "start_date": dt.date(2025, 3, 1),
            "source_a": {"path": f"/t/{a or 'a'}", "job": a},
            "source_b": {"path": f"/t/{b or 'b'}", "job": b},
            "join": {"how": "left", "join_cols": ["TrxId"]},
            "target": {"path": f"/t/{name}", "keys": ["TrxId"]},
        }
    )


def test_a_job_runs_after_the_jobs_whose_targets_it_reads_the_others_by_name() -> None:
    jobs = [job("c", "b", "z"), job("b", "a"), job("z"), job("a")]
    assert [j.name for j in run_order(jobs)] == ["a", "z", "b", "c"]
    assert upstream_jobs(jobs[0]) == ("b", "z")


def test_a_job_reading_a_job_outside_the_run_waits_on_nothing() -> None:
    assert [j.name for j in run_order([job("b", "elsewhere"), job("a")])] == ["a", "b"]


def test_jobs_that_read_each_other_in_a_cycle_are_refused_naming_them() -> None:
    with pytest.raises(ConfigError, match=r"the jobs read each other in a cycle: (x -> y -> x|y -> x -> y)"):
        run_order([job("x", "y"), job("y", "x"), job("free")])


def test_two_jobs_of_one_name_are_refused_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"name: two job files name their job 'a'"):
        run_order([job("a"), job("a", "b")])


def test_the_jobs_below_a_job_are_those_reading_its_target_directly_or_through_others_in_run_order() -> None:
    jobs = [
        job("risk", "scans"),
        job("scans", "trx"),
        job("trx"),
        job("other", "elsewhere"),
        job("both", "trx", "risk"),
    ]
    assert [j.name for j in downstream_jobs(jobs, "trx")] == ["scans", "risk", "both"]
    assert [j.name for j in downstream_jobs(jobs, "risk")] == ["both"]
    assert downstream_jobs(jobs, "both") == []
