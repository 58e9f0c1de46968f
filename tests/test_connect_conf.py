"""Which Spark settings a Spark Connect client sends: session settings travel, the server's own stay with it."""

from __future__ import annotations

import pytest

from deltainc.connect_conf import client_conf, left_message, refused_by_server

pytestmark = pytest.mark.pure


def test_a_client_sends_session_settings_and_leaves_static_ones_to_the_server_in_order() -> None:
    split = client_conf(
        {
            "spark.sql.shuffle.partitions": "8",
            "spark.sql.catalogImplementation": "hive",
            "spark.databricks.delta.snapshotPartitions": "2",
            "spark.driver.memory": "4g",
            "spark.sql.warehouse.dir": "/data/warehouse",
            "spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9000",
        }
    )
    assert dict(split.sent) == {
        "spark.sql.shuffle.partitions": "8",
        "spark.databricks.delta.snapshotPartitions": "2",
        "spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9000",
    }
    assert split.left == ("spark.sql.catalogImplementation", "spark.driver.memory", "spark.sql.warehouse.dir")


class _Refusal(Exception):
    """An error carrying a condition, as pyspark's errors do."""

    def __init__(self, condition: str) -> None:
        super().__init__(condition)
        self.condition = condition

    def getCondition(self) -> str:  # noqa: N802 (pyspark's name)
        return self.condition


def test_a_setting_the_server_refuses_is_one_it_fixed_at_its_start_and_no_other_error_is() -> None:
    assert refused_by_server(_Refusal("CANNOT_MODIFY_STATIC_CONFIG"))
    assert refused_by_server(_Refusal("CANNOT_MODIFY_CONFIG"))
    assert not refused_by_server(_Refusal("INVALID_CONF_VALUE"))
    assert not refused_by_server(ValueError("no condition"))


def test_the_line_left_to_the_server_names_every_setting_once() -> None:
    line = left_message(("spark.sql.catalogImplementation", "spark.driver.memory"))
    assert "\n" not in line
    assert "spark.sql.catalogImplementation, spark.driver.memory left to the server" in line
