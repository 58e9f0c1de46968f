"""The job file template tests and benchmarks write: what it says is the job that loads."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from deltainc.demo.jobs import left_job_toml
from deltainc.pipeline.job.job_config import load_job

pytestmark = pytest.mark.pure


def test_the_sample_job_file_loads_as_the_job_its_values_name_whatever_the_paths_hold(tmp_path: Path) -> None:
    a = f'{tmp_path}/a "quoted" \\ folder'
    text = left_job_toml(
        "trx", a, "/b", "/t", start=dt.date(2025, 3, 1), look_back_time=2, max_waiting_time=11, max_window=1, state="/s"
    )
    (tmp_path / "trx.toml").write_text(text)
    job = load_job(tmp_path / "trx.toml")
    assert (job.name, job.source_a.path, job.start_date, job.max_window) == ("trx", a, dt.date(2025, 3, 1), 1)
    assert (job.join.how, job.join.join_cols, job.join.look_back_time, job.join.max_waiting_time) == (
        "left",
        ["TrxId"],
        2,
        11,
    )
    assert (job.target.keys, job.target.b_keys, job.state.path) == (["TrxId"], ["SepaId"], "/s")
