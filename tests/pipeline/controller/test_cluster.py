"""The same job on a real Spark standalone cluster (master + worker on 127.0.0.1) gives the engine's output, which is
what every local schedule is held to (tests/pipeline/controller/test_contract.py)."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from expected import engine_output, same_rows
from jvm_options import server_options
from pyspark.sql import SparkSession
from spark_home import spark_home
from test_contract import target

from deltainc.demo.sample_data import SampleSpec, write_sources
from deltainc.pipeline.job.job_config import load_job
from deltainc.spark import delta_packages

pytestmark = [pytest.mark.service, pytest.mark.cluster]

SPARK_HOME = spark_home()  # the installed pyspark's distribution, as the suite's JVMs start from it
REPO = Path(__file__).resolve().parents[3]
START = dt.date(2025, 5, 1)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"daemon exited with {process.returncode}: {log.read_text()[-2000:]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {seconds}s: {log.read_text()[-2000:]}")


def _spark_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DELTAINC_")}
    env.update(
        SPARK_HOME=str(SPARK_HOME),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOG_DIR=str(tmp),
        SPARK_WORKER_DIR=str(tmp / "work"),
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        SPARK_SUBMIT_OPTS=server_options(),  # the driver's
        SPARK_DAEMON_JAVA_OPTS=server_options(),  # the master's and the worker's
    )
    return env


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


@pytest.fixture()
def standalone_cluster(tmp_path: Path) -> Iterator[str]:
    """A master and one worker from the installed pyspark's distribution, stopped by pid whatever the test does."""
    daemons: list[subprocess.Popen[bytes]] = []
    env = _spark_env(tmp_path)
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    port = _free_port()
    try:
        master_log = tmp_path / "master.log"
        master = subprocess.Popen(
            [
                spark_class,
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--webui-port",
                str(_free_port()),
            ],
            env=env,
            stdout=master_log.open("wb"),
            stderr=subprocess.STDOUT,
        )
        daemons.append(master)
        _wait_for_port(port, master, master_log)
        worker_log = tmp_path / "worker.log"
        worker_port = _free_port()
        worker = subprocess.Popen(
            [
                spark_class,
                "org.apache.spark.deploy.worker.Worker",
                f"spark://127.0.0.1:{port}",
                "--host",
                "127.0.0.1",
                "--port",
                str(worker_port),
                "--webui-port",
                str(_free_port()),
                "--cores",
                "1",
                "--memory",
                "1g",
                "--work-dir",
                str(tmp_path / "work"),
            ],
            env=env,
            stdout=worker_log.open("wb"),
            stderr=subprocess.STDOUT,
        )
        daemons.append(worker)
        _wait_for_port(worker_port, worker, worker_log)
        yield f"spark://127.0.0.1:{port}"
    finally:
        for process in reversed(daemons):
            _stop(process)


def _job_file(tmp_path: Path, name: str, sources: Path) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\nstart_date = {START}\nmax_window = 1\n'
        f'[source_a]\npath = "{sources / "a"}"\n[source_b]\npath = "{sources / "b"}"\n'
        '[join]\nhow = "left"\njoin_cols = ["TrxId"]\nlook_back_time = 2\nmax_waiting_time = 3\n'
        "include_waiting = true\n"
        f'[target]\npath = "{tmp_path / name / "target"}"\nkeys = ["TrxId"]\nb_keys = ["SepaId"]\n'
        f'[state]\npath = "{tmp_path / name / "state"}"\n'
    )
    return path


def test_a_job_on_a_standalone_cluster_gives_the_engine_output(
    spark: SparkSession, tmp_path: Path, standalone_cluster: str
) -> None:
    sources = tmp_path / "sources"
    write_sources(
        spark, SampleSpec(start=START, days=4, rows_per_day=5, seed=5), str(sources / "a"), str(sources / "b")
    )
    cluster_job = _job_file(tmp_path, "on_cluster", sources)

    env = _spark_env(tmp_path) | {"DELTAINC_WAREHOUSE_DIR": str(tmp_path / "warehouse")}
    submitted = subprocess.run(
        [
            str(SPARK_HOME / "bin" / "spark-submit"),
            "--master",
            standalone_cluster,
            "--packages",
            delta_packages(),
            "--conf",
            "spark.executor.memory=512m",
            "--conf",
            "spark.sql.shuffle.partitions=2",
            "--conf",
            f"spark.executor.extraJavaOptions={server_options()}",
            str(REPO / "jobs" / "run_job.py"),
            "run",
            str(cluster_job),
            "--json",
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert submitted.returncode == 0, submitted.stderr[-4000:]
    # spark-submit may print Ivy's resolution report on stdout before our program starts; the JSON comes last.
    result = json.loads(submitted.stdout[re.search(r"^\{", submitted.stdout, re.M).start() :])  # type: ignore[union-attr]
    assert [w["window"] for w in result["windows"]] == [str(START + dt.timedelta(days=d)) for d in range(4)]
    assert result["watermark"] == str(START + dt.timedelta(days=3))

    job = load_job(cluster_job)
    expected = engine_output(spark, job, START + dt.timedelta(days=3))
    assert expected.count() > 0
    same_rows(target(spark, job), expected)
    applications = list((tmp_path / "work").glob("app-*"))
    assert applications, "the job ran no executor on the worker"
