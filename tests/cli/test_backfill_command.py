"""`deltainc backfill` through `deltainc.cli.app.main`: each chunk reported, a failed chunk resumed, and a
chain backfilled job by job equal to the chain run day by day."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import pytest
from cli_commands import scans_job
from cli_jobs import A_SCHEMA, B_SCHEMA, D1, Sources, write_job
from delta_rows import read_rows, write_rows
from pyspark.sql import SparkSession

from deltainc.cli.app import main

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("settings_under_tmp")]


# --- backfill -------------------------------------------------------------------------------------------------------


@pytest.mark.windows
def test_backfill_reports_each_chunk_and_resumes_after_a_failure(
    spark: SparkSession, trx_job: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from deltainc.pipeline.target import forward_write as pipeline

    real_write, calls = pipeline.replace_slices, []

    def write_failing_once_on_the_second_chunk(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)  # the first chunk creates the target (no replace): the second chunk's write is the first
        if len(calls) == 1:
            raise RuntimeError("disk full\nmore detail")
        return real_write(*args, **kwargs)

    monkeypatch.setattr(pipeline, "replace_slices", write_failing_once_on_the_second_chunk)
    argv = ["backfill", "trx", "--start", "2025-03-01", "--end", "2025-03-02", "--chunk", "day"]

    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert re.search(r"^\[1/2\] 2025-03-01  same_time 1 .* inserted 2 ", out, re.M)
    assert err == (
        "deltainc: error: RuntimeError: disk full (chunk 2 of 2 (2025-03-02) failed; chunk 1 is committed (the "
        "watermark is 2025-03-01); run the same command again to resume at chunk 2: processed chunks are skipped; "
        "--verbose for the full trace)\n"
    )

    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert re.search(r"^\[1/2\] 2025-03-01  already processed, skipped$", out, re.M)
    assert re.search(
        r"^\[2/2\] 2025-03-02  same_time 1  a_late 0  b_late 1 .* inserted 3  updated 0  deleted 1 ", out, re.M
    )
    assert out.rstrip().endswith("trx: backfilled 1 of 2 chunk(s); watermark 2025-03-02")
    assert err == ""


@pytest.mark.windows
def test_a_chain_backfilled_job_by_job_in_one_chunk_equals_the_chain_run_day_by_day(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    days = [D1 + dt.timedelta(days=i) for i in range(4)]
    a = write_rows(tmp_path / "a", [(k, 1.0, days[d]) for k, d in ((1, 0), (2, 0), (3, 1), (4, 1), (5, 2), (6, 3))],
                   A_SCHEMA)  # fmt: skip
    # TrxId 2's payment a day late, 3's two days late, 4 none (times out), 6 still waiting at the end.
    b = write_rows(tmp_path / "b", [(10, 1, "NL", days[0]), (11, 2, "NL", days[1]), (12, 3, "DE", days[3]),
                                    (13, 5, "DE", days[2])], B_SCHEMA)  # fmt: skip
    scanned = [(100, 1, 0), (101, 2, 2), (102, 3, 3), (103, 5, 3), (104, 4, 3)]
    scans = write_rows(
        tmp_path / "scans", [(s, k, days[d]) for s, k, d in scanned], "ScanId long, TrxId long, RecDate date"
    )
    for name in ("trx", "fresh"):
        write_job(tmp_path, Sources(a, b, "", "", ""), name=name)
        scans_job(tmp_path, scans, name=f"{name}_scans", reads=name)
    for day in days:  # the chain day by day
        assert main(["run", "trx", "--until", day.isoformat()]) == 0
        assert main(["run", "trx_scans", "--until", day.isoformat()]) == 0
    for name in ("fresh", "fresh_scans"):  # each job reloaded in one chunk, upstream first
        assert main(["backfill", name, "--start", D1.isoformat(), "--end", days[-1].isoformat(), "--chunk", "all"]) == 0
    for name, fresh in (("trx", "fresh"), ("trx_scans", "fresh_scans")):
        assert read_rows(tmp_path / f"target_{name}") == read_rows(tmp_path / f"target_{fresh}"), name
    final = {r[0] for r in read_rows(tmp_path / "target_trx_scans", ["TrxId", "IsFinal"]) if r[1]}
    assert final  # the second job has rows of its own that are final: the comparison is not of empty tables
