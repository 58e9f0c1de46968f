"""The job over Spark Connect: a local Connect server (`deltainc serve`), commands and the Python API as its clients.

pyspark turns a whole process into a Connect client once it holds a Connect session, so the clients run as
processes of their own; the targets they write are checked here with the suite's local session.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from expected import engine_output, same_rows
from hour_sources import env
from pyspark.sql import SparkSession
from test_contract import DAYS, LAST, SPEC, START, make_job, target

from deltainc.connect_server import start_server
from deltainc.demo.sample_data import write_sources
from deltainc.join.options import JoinType
from deltainc.pipeline.delta.sources import latest_commit
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.spark_compat import spark_major

pytestmark = [
    pytest.mark.service,
    pytest.mark.skipif(spark_major() < 4, reason="Delta supports Spark Connect from Delta 4 (Spark 4)"),
]


@pytest.fixture(scope="module")
def server_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The server's folder: its log, server.log."""
    return tmp_path_factory.mktemp("connect_server")


@pytest.fixture(scope="module")
def server(server_root: Path) -> Iterator[str]:
    """A Spark Connect server with Delta, started as a user would: `deltainc serve --port N`."""
    process, url = start_server(server_root, env(server_root))
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=60)


@pytest.fixture(scope="module")
def sources(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """test_pipeline's generated A and B (8 days crossing a month), for the clients to read."""
    root = tmp_path_factory.mktemp("connect_sources")
    write_sources(spark, SPEC, str(root / "a"), str(root / "b"))
    return str(root / "a"), str(root / "b")


def write_job_file(root: Path, job: JobConfig) -> Path:
    """The job as a TOML file, for the command line."""
    path = root / f"{job.name}.toml"
    lines = [
        f'name = "{job.name}"',
        f"start_date = {job.start_date}",
        f"max_window = {job.max_window}",
        f'[source_a]\npath = "{job.source_a.path}"',
        f'[source_b]\npath = "{job.source_b.path}"',
        '[join]\nhow = "left"\njoin_cols = ["TrxId"]\nlook_back_time = 2\nmax_waiting_time = 4',
        f'[target]\npath = "{job.target.path}"\nkeys = ["TrxId"]\nb_keys = ["SepaId"]',
        f'[state]\npath = "{job.state.path}"',
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def python(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A Python process in `root` with the job's settings, its output captured."""
    return subprocess.run(
        [sys.executable, *args], cwd=root, env=env(root), capture_output=True, text=True, timeout=600, check=False
    )


def deltainc(root: Path, server: str, *args: str) -> subprocess.CompletedProcess[str]:
    """One `deltainc` command as a Connect client of `server`."""
    return python(root, "-m", "deltainc", *args, "--remote", server)


API_RUN = """
import sys
from pyspark.sql import SparkSession
import deltainc
spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
result = deltainc.run(sys.argv[2], spark=spark)
print(len(result.windows), result.watermark)
"""


@pytest.fixture(scope="module")
def daily(
    server: str, sources: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> tuple[JobConfig, Path, dict[str, Any]]:
    """The job run daily by `deltainc run` as a Connect client, once for the module: its config, job file and
    result. The tests below only read it, re-run a processed window (which changes nothing) or remove the
    finished run's lock."""
    root = tmp_path_factory.mktemp("connect_daily")
    job = make_job(root, *sources, name="daily", max_window=1)
    path = write_job_file(root, job)
    ran = deltainc(root, server, "run", str(path), "--json")
    assert ran.returncode == 0, ran.stderr[-3000:]
    result = json.loads(ran.stdout)
    assert (len(result["windows"]), result["watermark"]) == (DAYS, LAST.isoformat())
    return job, path, result


def test_over_spark_connect_daily_and_one_run_give_the_engine_output_and_a_rerun_changes_nothing(
    spark: SparkSession,
    server: str,
    sources: tuple[str, str],
    daily: tuple[JobConfig, Path, dict[str, Any]],
    tmp_path: Path,
) -> None:
    job, path, result = daily
    once = make_job(tmp_path, *sources, name="once")
    api = python(tmp_path, "-c", API_RUN, server, str(write_job_file(tmp_path, once)))
    assert api.returncode == 0, api.stderr[-3000:]
    assert api.stdout.split() == ["1", LAST.isoformat()]
    expected = engine_output(spark, job, LAST)
    for each in (job, once):
        same_rows(target(spark, each), expected)
    # A final row is counted by the one window that wrote it (a daily window counts them as its write reads them).
    for code in (JoinType.SAME_TIME, JoinType.A_LATE, JoinType.B_LATE, JoinType.A_TIMED_OUT):
        counted = sum(window[f"rows_{code.outcome}"] for window in result["windows"])
        assert counted == target(spark, job).where(f"JoinType = {int(code)}").count(), code

    version = latest_commit(spark, job.target)["version"]  # type: ignore[index]
    before = sorted(target(spark, job).collect())
    start = (START + dt.timedelta(days=2)).isoformat()
    again = deltainc(tmp_path, server, "rerun", str(path), "--start", start)
    assert again.returncode == 0, again.stderr[-3000:]
    assert sorted(target(spark, job).collect()) == before
    assert latest_commit(spark, job.target)["version"] == version  # type: ignore[index]


def test_over_spark_connect_verify_status_validate_and_unlock_read_the_job_a_client_processed(
    server: str, daily: tuple[JobConfig, Path, dict[str, Any]], tmp_path: Path
) -> None:
    job, path, _ = daily
    verified = deltainc(tmp_path, server, "verify", str(path), "--json")
    assert verified.returncode == 0, verified.stderr[-3000:] + verified.stdout[-2000:]
    document = json.loads(verified.stdout)
    assert document["equal"] is True and document["target_rows"] == document["recomputed_rows"] > 0
    status = deltainc(tmp_path, server, "status", str(path), "--json")
    assert status.returncode == 0, status.stderr[-3000:]
    assert json.loads(status.stdout)["watermark"] == LAST.isoformat()
    validated = deltainc(tmp_path, server, "validate", str(path), "--json")
    assert validated.returncode == 0, validated.stderr[-3000:]
    assert json.loads(validated.stdout)["target_exists"] is True
    unlocked = deltainc(tmp_path, server, "unlock", str(path))  # the finished run's lock row: a DELETE
    assert unlocked.returncode == 0 and unlocked.stdout.startswith(f"{job.name}: removed the lock of run "), unlocked
    again = deltainc(tmp_path, server, "unlock", str(path))
    assert (again.returncode, again.stdout.strip()) == (0, f"{job.name}: no lock held, nothing to remove")


def test_over_spark_connect_explain_gives_a_timed_out_key_its_row_its_reason_and_its_history(
    spark: SparkSession, server: str, daily: tuple[JobConfig, Path, dict[str, Any]], tmp_path: Path
) -> None:
    job, path, _ = daily
    timed_out = target(spark, job).where(f"JoinType = {int(JoinType.A_TIMED_OUT)}").orderBy("TrxId").first()
    assert timed_out is not None
    explained = deltainc(tmp_path, server, "explain", str(path), f"TrxId={timed_out['TrxId']}", "--json")
    assert explained.returncode == 0, explained.stderr[-3000:]
    found = json.loads(explained.stdout)
    day = timed_out["RecDate"].isoformat()
    # the generated A may hold the id more than once: the timed-out row is one of the key's
    assert (int(JoinType.A_TIMED_OUT), day) in [(row["JoinType"], row["RecDate"]) for row in found["target_rows"]]
    assert any(why.startswith(f"timed out on {day}: ") for why in found["why"]), found["why"]
    written = [(entry["outcome"], entry["RecDate"], entry["window"]) for entry in found["history"]]
    assert ("a_timed_out", day, f"{day}..{day}") in written  # the daily run of that day wrote it


def test_serve_listens_on_this_machine_only_unless_told_and_says_so(server: str, server_root: Path) -> None:
    port = int(server.rsplit(":", 1)[1])
    listening = set()  # the local addresses of the sockets listening on the port (the kernel's table)
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                listening.add(local.rsplit(":", 1)[0])
    # 127.0.0.1 only (as IPv4, or IPv4-mapped on an IPv6 socket: ::ffff:127.0.0.1), no wildcard address
    assert listening and all(address.endswith("0100007F") for address in listening), listening
    line = f"serves Spark Connect on sc://127.0.0.1:{port}, to this machine only (--host ADDRESS"
    deadline = time.monotonic() + 120  # it says so once it saw its own port accept connections, as the fixture did
    while line not in (said := (server_root / "server.log").read_text()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert line in said, said[-2000:]


def test_over_spark_connect_a_static_setting_in_the_settings_is_left_to_the_server_and_the_run_says_so(
    server: str, sources: tuple[str, str], tmp_path: Path
) -> None:
    settings = tmp_path / "settings.toml"
    # a static SQL setting client_conf knows, and a Spark setting it leaves to the server's own refusal
    settings.write_text('[spark.conf]\n"spark.sql.catalogImplementation" = "hive"\n"spark.network.timeout" = "300s"\n')
    job = make_job(tmp_path, *sources, name="static_setting")
    ran = deltainc(tmp_path, server, "run", str(write_job_file(tmp_path, job)), "--settings", str(settings), "--json")
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert json.loads(ran.stdout)["watermark"] == LAST.isoformat()
    said = [line for line in ran.stderr.splitlines() if "left to the server" in line]
    assert len(said) == 1, ran.stderr[-3000:]
    assert "spark.sql.catalogImplementation, spark.network.timeout left to the server" in said[0], said
