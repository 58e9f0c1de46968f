"""The target as a window finds it, once per window (issue 76 item 4, issue 77 item 3): whether it exists, its
columns, partition columns and whether it holds its open rows apart are found once, before anything of the window
asks, and again only by the next window, after this one's commit. Counted through `fact_counts.counting_facts`,
as test_one_look counts the logs opened."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_jobs import edit, logged_job
from pyspark.sql import SparkSession

from deltainc.fact_counts import TARGET_FOUND, counting_facts
from deltainc.pipeline.controller.commands import rerun, run
from deltainc.pipeline.controller.window import Step
from deltainc.pipeline.job.job_config import load_job
from deltainc.pipeline.target.found import find_target

LAST = "2025-03-02"  # the sources' last day: two windows of one day from start_date


@pytest.fixture()
def daily_windows(spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """test_one_look's job over two days, one window a day, nothing run yet."""
    job = logged_job(tmp_path, monkeypatch)
    return edit(job, "start_date = 2025-03-01", "start_date = 2025-03-01\nmax_window = 1")


@pytest.mark.windows
def test_a_run_finds_the_target_once_per_window(spark: SparkSession, daily_windows: Path) -> None:
    with counting_facts() as facts:
        result = run(daily_windows, until=LAST, spark=spark)
    assert len(result.windows) == 2
    assert facts[TARGET_FOUND] == len(result.windows)


@pytest.mark.windows
def test_the_window_that_creates_the_target_finds_it_absent_and_the_next_finds_it_after_that_commit(
    spark: SparkSession, daily_windows: Path
) -> None:
    ref = load_job(daily_windows).target
    seen = []

    def at_start(step: Step) -> None:  # inside the command: what a window finds as it begins
        if step == Step.START:
            found = find_target(spark, ref, ())
            seen.append((found.exists, found.partition_by, found.open_rows_apart, found.schema is not None))

    result = run(daily_windows, until=LAST, spark=spark, on_step=at_start)
    assert [report.record.target_write for report in result.windows] == ["create", "replace_where"]
    assert seen == [(False, (), False, False), (True, ("RecDate", "IsFinal"), True, True)]


@pytest.mark.windows
# A recompute through the watermark, the forward-only MERGE (each commits nothing here: the sources are unchanged).
@pytest.mark.parametrize("corrections", ["apply", "keep"])
def test_a_rerun_finds_the_target_once_per_window(spark: SparkSession, daily_windows: Path, corrections: str) -> None:
    edit(daily_windows, 'b_keys = ["SepaId"]', f'b_keys = ["SepaId"]\ncorrections = "{corrections}"')
    run(daily_windows, until=LAST, spark=spark)
    with counting_facts() as facts:
        result = rerun(daily_windows, "2025-03-01", LAST, spark=spark)
    assert result.windows
    assert facts[TARGET_FOUND] == len(result.windows)
