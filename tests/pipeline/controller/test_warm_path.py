"""The warm path of a sub-day schedule: an hourly job run hour by hour as Spark Connect clients of one `deltainc
serve` (docs/production/scheduling.md), the server killed and started again between two runs.

Each client is a process of its own, as a scheduler starts it; the sources are Delta tables written with delta-rs
(no JVM), one append per source and hour. The targets are read with the suite's local session.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from expected import same_rows
from hour_sources import at, env, job_file, land
from pyspark.sql import SparkSession

from deltainc.connect_server import free_port, start_server
from deltainc.spark_compat import spark_major

pytestmark = [
    pytest.mark.service,
    pytest.mark.skipif(spark_major() < 4, reason="Delta supports Spark Connect from Delta 4 (Spark 4)"),
]


def listening(port: int, within_s: float) -> bool:
    """Whether the port still accepts connections after `within_s` seconds of waiting for it to stop."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return False
        time.sleep(0.5)
    return True


def client(root: Path, url: str, job: Path) -> subprocess.CompletedProcess[str]:
    """`deltainc run JOB --remote URL --json`, as the scheduler starts it."""
    command = [sys.executable, "-m", "deltainc", "run", str(job), "--remote", url, "--json"]
    return subprocess.run(command, cwd=root, env=env(root), capture_output=True, text=True, timeout=600, check=False)


def test_hourly_clients_of_one_server_survive_its_restart_and_give_the_target_of_a_reload(
    spark: SparkSession, tmp_path: Path
) -> None:
    port = free_port()
    (tmp_path / "server").mkdir()
    hourly = job_file(tmp_path, "hourly", max_window=1)
    server, url = start_server(tmp_path / "server", env(tmp_path), port)
    try:
        watermarks = []
        for hour in (0, 1):
            land(tmp_path, hour)
            ran = client(tmp_path, url, hourly)
            assert ran.returncode == 0, ran.stderr[-3000:]
            watermarks.append(json.loads(ran.stdout)["watermark"])

        server.send_signal(signal.SIGKILL)  # the server dies between two runs, as a machine's reboot would
        server.wait(timeout=60)
        assert not listening(port, within_s=60)  # its JVM died with it: nothing listens any more
        land(tmp_path, 2)
        gone = client(tmp_path, url, hourly)
        errors = [line for line in gone.stderr.splitlines() if line.startswith("deltainc: error:")]
        assert gone.returncode == 1 and len(errors) == 1, gone.stderr[-3000:]
        assert "Spark Connect server (--remote) is gone" in errors[0], errors
        assert "the next run recovers" in errors[0], errors

        server, url = start_server(tmp_path / "server", env(tmp_path), port)
        for hour in (2, 3):
            if hour == 3:
                land(tmp_path, hour)
            ran = client(tmp_path, url, hourly)
            assert ran.returncode == 0, ran.stderr[-3000:]
            watermarks.append(json.loads(ran.stdout)["watermark"])
        assert watermarks == [at(h, 0).replace(tzinfo=None).isoformat() for h in range(4)]

        reload = client(tmp_path, url, job_file(tmp_path, "reload", max_window=24))  # the four hours in one window
        assert reload.returncode == 0, reload.stderr[-3000:]
        assert len(json.loads(reload.stdout)["windows"]) == 1
    finally:
        server.terminate()
        server.wait(timeout=60)

    warm = spark.read.format("delta").load(str(tmp_path / "hourly_target"))
    same_rows(warm, spark.read.format("delta").load(str(tmp_path / "reload_target")))
    assert warm.where("ScanId IS NULL").count() > 0  # the rows of outcomes other than a match are there too
