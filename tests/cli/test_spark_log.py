"""Spark's own log: one file per job, appended to by every command and rotated by size."""

from __future__ import annotations

from pathlib import Path

import pytest

from deltainc.cli.spark_start import log_file

pytestmark = pytest.mark.pure


def test_every_command_of_a_job_appends_to_the_same_file(tmp_path: Path) -> None:
    first = log_file(tmp_path / "logs", "orders")
    first.write_text("run 1\n")
    assert log_file(tmp_path / "logs", "orders") == first == tmp_path / "logs" / "spark-orders.log"
    assert first.read_text() == "run 1\n"


def test_a_log_larger_than_the_limit_is_rotated_keeping_the_last_few(tmp_path: Path) -> None:
    for number in range(5):
        path = log_file(tmp_path, "orders", max_bytes=10, keep=2)
        path.write_text(f"command {number} " * 3)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["spark-orders.log", "spark-orders.log.1", "spark-orders.log.2"]
    assert (tmp_path / "spark-orders.log.1").read_text().startswith("command 3")
    assert (tmp_path / "spark-orders.log.2").read_text().startswith("command 2")


def test_a_job_name_cannot_reach_outside_the_log_folder(tmp_path: Path) -> None:
    assert log_file(tmp_path, "../etc/x").parent == tmp_path
