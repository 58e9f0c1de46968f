"""A local session's driver heap (deltainc/driver_memory.py): half of the machine unless the user set one."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from deltainc import spark as spark_module
from deltainc.driver_memory import default_driver_memory, machine_memory, users_driver_memory

pytestmark = pytest.mark.pure

GIB = 1024**3


@pytest.mark.parametrize(
    ("total", "heap"), [(23 * GIB, "11g"), (8 * GIB, "4g"), (GIB, "1g"), (int(1.5 * GIB), "1g"), (64 * GIB, "16g")]
)
def test_a_local_driver_gets_half_of_the_machine_in_whole_gigabytes_within_1_to_16(total: int, heap: str) -> None:
    assert default_driver_memory(total) == heap


def test_an_unknown_machine_leaves_sparks_default() -> None:
    assert default_driver_memory(None) is None


def test_the_machines_memory_is_memtotal_of_proc_meminfo(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24576000 kB\nMemFree:        20000000 kB\n")
    assert machine_memory(meminfo) == 24576000 * 1024


@pytest.mark.parametrize(
    ("conf", "env", "where"),
    [
        ({"spark.driver.memory": "2g"}, {}, "[spark.conf] spark.driver.memory"),
        ({}, {"PYSPARK_SUBMIT_ARGS": "--driver-memory 3g pyspark-shell"}, "PYSPARK_SUBMIT_ARGS"),
        ({}, {"SPARK_DRIVER_MEMORY": "3g"}, "SPARK_DRIVER_MEMORY"),
        ({}, {"PYSPARK_GATEWAY_PORT": "40001"}, "spark-submit"),
    ],
)
def test_a_users_own_driver_memory_is_found_where_they_set_it(
    conf: dict[str, str], env: dict[str, str], where: str
) -> None:
    assert users_driver_memory(conf, env) == where


def test_spark_defaults_conf_is_a_users_own_driver_memory(tmp_path: Path) -> None:
    (tmp_path / "spark-defaults.conf").write_text("spark.master local[2]\nspark.driver.memory   6g\n")
    assert users_driver_memory({}, {"SPARK_CONF_DIR": str(tmp_path)}) == str(tmp_path / "spark-defaults.conf")
    (tmp_path / "spark-defaults.conf").write_text("# spark.driver.memory 6g\nspark.executor.memory 6g\n")
    assert users_driver_memory({}, {"SPARK_CONF_DIR": str(tmp_path)}) is None


def test_a_session_without_a_driver_memory_is_given_the_default_and_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("SPARK_DRIVER_MEMORY", "PYSPARK_SUBMIT_ARGS", "PYSPARK_GATEWAY_PORT", "SPARK_CONF_DIR", "SPARK_HOME"):
        monkeypatch.delenv(name, raising=False)
    conf: dict[str, str] = {}
    with caplog.at_level(logging.INFO, logger="deltainc"):
        spark_module._size_local_driver(conf)
    assert conf == {"spark.driver.memory": default_driver_memory(machine_memory())}
    assert f"driver memory {conf['spark.driver.memory']}: half of this machine's" in caplog.text
    assert "[spark.conf]" in caplog.text


def test_a_users_driver_memory_wins_over_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_DRIVER_MEMORY", "3g")
    conf: dict[str, str] = {}
    spark_module._size_local_driver(conf)
    assert conf == {}  # spark-submit reads SPARK_DRIVER_MEMORY itself
    conf = {"spark.driver.memory": "2g"}
    spark_module._size_local_driver(conf)
    assert conf == {"spark.driver.memory": "2g"}
