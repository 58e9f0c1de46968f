"""`deltainc validate --json` through `deltainc.cli.app.main`: the pending range, the next window's reads and
the target's state, read from the Delta logs before Spark starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_commands import nothing_written
from cli_jobs import Sources, write_job

from deltainc.cli.app import main

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("settings_under_tmp")]


def test_validate_json_gives_pending_range_next_window_reads_and_target_state_from_the_logs(
    tmp_path: Path, sources: Sources, capsys: pytest.CaptureFixture[str], no_spark: None
) -> None:
    job = write_job(tmp_path, sources)
    assert main(["validate", str(job), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document == {
        "job": "trx",
        "file": str(job),
        "valid": True,
        "watermark": None,
        "latest_available": "2025-03-02",
        "pending": {
            "start": "2025-03-01",
            "end": "2025-03-02",
            "units": 2,
            "windows": 1,
            "next_window": {"start": "2025-03-01", "end": "2025-03-02"},
        },
        "target_exists": False,
        "warnings": [],
        "notes": [],
        "next_window_reads": {"source_a": ["2025-02-27", "2025-03-02"], "source_b": ["2025-02-26", "2025-03-02"]},
    }
    assert nothing_written(tmp_path)
