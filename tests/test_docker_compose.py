"""docker-compose.yml brings up a Spark master, a worker and a job runner on the Spark version we pin."""

from __future__ import annotations

import shutil
import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.pure

COMPOSE = Path(__file__).resolve().parent.parent / "docker-compose.yml"


def _services() -> dict[str, dict[str, object]]:
    return yaml.safe_load(COMPOSE.read_text())["services"]


SPARK_SERVICES = ("spark-master", "spark-worker", "deltainc")


def test_compose_has_a_master_a_worker_and_a_job_runner_on_one_shared_volume() -> None:
    services = {name: service for name, service in _services().items() if name in SPARK_SERVICES}
    assert set(services) == set(SPARK_SERVICES)
    assert "org.apache.spark.deploy.master.Master" in services["spark-master"]["command"]
    assert "spark://spark-master:7077" in services["spark-worker"]["command"]
    assert services["deltainc"]["environment"]["DELTAINC_SPARK__MASTER"] == "spark://spark-master:7077"
    assert services["deltainc"]["command"][:2] == ["deltainc", "demo"]
    for name, service in services.items():
        assert any(str(v).endswith(":/data") for v in service["volumes"]), name


def test_the_job_runner_reaches_the_s3_compatible_store_and_its_bucket() -> None:
    services = _services()
    assert "server" in services["s3"]["command"] and "9000:9000" in services["s3"]["ports"]
    assert "mc mb --ignore-existing local/deltainc" in services["s3-bucket"]["entrypoint"][-1]
    runner = services["deltainc"]
    assert runner["environment"]["AWS_ENDPOINT_URL"] == "http://s3:9000" and "s3-bucket" in runner["depends_on"]
    user, password = (
        services["s3"]["environment"]["MINIO_ROOT_USER"],
        services["s3"]["environment"]["MINIO_ROOT_PASSWORD"],
    )
    assert (runner["environment"]["AWS_ACCESS_KEY_ID"], runner["environment"]["AWS_SECRET_ACCESS_KEY"]) == (
        user,
        password,
    )


def test_compose_pins_the_spark_version_of_pyproject() -> None:
    spark = version("pyspark")
    for name in SPARK_SERVICES:
        service = _services()[name]
        assert str(service["image"]).startswith(f"apache/spark:{spark}-"), (name, service["image"], spark)


@pytest.mark.processes
def test_docker_compose_config_accepts_the_file_where_docker_compose_exists() -> None:
    docker = shutil.which("docker")
    if docker is None or subprocess.run([docker, "compose", "version"], capture_output=True).returncode != 0:
        return  # no compose client on this machine: the structural tests above still ran
    checked = subprocess.run([docker, "compose", "-f", str(COMPOSE), "config", "-q"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
