"""One look at each Delta table per command (issue 62): a command opens each table's log once, counted through the
snapshot module's own hook (`counting_opens`); a commit to a table is the only reason to look at it again."""

from __future__ import annotations

from pathlib import Path

import cli_jobs
import pyarrow as pa
import pytest
from cli_jobs import quiet
from deltalake import write_deltalake
from pyspark.sql import SparkSession

from deltainc.pipeline.delta.delta_log import table_uri
from deltainc.pipeline.delta.snapshot import counting_opens, look, one_look, retake


def _table(path: Path, values: list[int]) -> str:
    write_deltalake(str(path), pa.table({"k": pa.array(values, pa.int64())}), mode="append")
    return str(path)


@pytest.mark.pure
def test_a_table_is_looked_at_once_per_command_and_again_only_after_a_commit(tmp_path: Path) -> None:
    location = _table(tmp_path / "t", [1])
    with counting_opens() as opened, one_look():
        first = look(location)
        assert look(location) is first  # the command's snapshot, not a second open
        _table(tmp_path / "t", [2])  # a commit ...
        assert look(location).actions.num_rows == 1  # ... is not seen until the snapshot is retaken
        retake(location)
        assert look(location).actions.num_rows == 2
    assert opened == {table_uri(location): 2}


@pytest.mark.pure
def test_outside_a_command_every_look_reads_the_latest_commit(tmp_path: Path) -> None:
    location = _table(tmp_path / "t", [1])
    assert look(location).actions.num_rows == 1
    _table(tmp_path / "t", [2])
    assert look(location).actions.num_rows == 2


@pytest.mark.pure
def test_a_table_not_there_yet_opens_no_log_and_is_seen_once_created(tmp_path: Path) -> None:
    location = str(tmp_path / "later")
    with counting_opens() as opened, one_look():
        assert look(location).found is None
        _table(tmp_path / "later", [1])
        assert look(location).found is not None
    assert opened == {table_uri(location): 1}


@pytest.fixture()
def daily_job(spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The CLI tests' left job over two days, its first day already run: the next `run` is a daily one."""
    return cli_jobs.daily_job(tmp_path, monkeypatch)


def _opened_by(argv: list[str]) -> dict[str, int]:
    with counting_opens() as opened:
        assert quiet(argv) == 0
    return dict(opened)


@pytest.mark.windows
def test_a_daily_run_opens_each_source_log_once_and_the_targets_once_more_only_after_its_commit(
    daily_job: Path, tmp_path: Path
) -> None:
    opened = _opened_by(["run", str(daily_job)])
    a, b, target = (table_uri(str(tmp_path / name)) for name in ("a", "b", "target_trx"))
    assert opened[a] == 1
    assert opened[b] == 1
    assert opened.get(target, 0) <= 2  # before the window, and after its one commit
    assert max(opened.values()) <= 2, opened


@pytest.mark.spark
def test_status_and_validate_open_each_table_log_at_most_once(daily_job: Path) -> None:
    for command in ("status", "validate"):
        opened = _opened_by([command, str(daily_job)])
        assert opened, command  # answered from the logs
        assert max(opened.values()) == 1, (command, opened)
