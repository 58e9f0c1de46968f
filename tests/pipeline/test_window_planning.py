"""How a window's queries are planned (deltainc/pipeline/window/planning.py): a small window statically."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from deltainc.pipeline.window.planning import ADAPTIVE, adaptive, planned_for
from deltainc.settings import SparkSettings

pytestmark = pytest.mark.spark

MB = 2**20


def test_a_window_reading_less_than_adaptive_min_mb_is_planned_statically_and_a_larger_one_adaptively() -> None:
    settings = SparkSettings(adaptive_min_mb=2)
    assert adaptive(settings, MB) is False
    assert adaptive(settings, 2 * MB) is True
    assert adaptive(SparkSettings(adaptive_min_mb=0), 0) is True  # 0: always adaptive


def test_adaptive_execution_set_under_spark_conf_wins_over_the_window_size() -> None:
    assert adaptive(SparkSettings(adaptive_min_mb=2, conf={ADAPTIVE: "true"}), MB) is None


def test_a_small_window_runs_with_adaptive_execution_off_and_the_session_gets_its_setting_back(
    spark: SparkSession,
) -> None:
    settings = SparkSettings(adaptive_min_mb=2)
    spark.conf.set(ADAPTIVE, "true")
    with planned_for(spark, settings, MB):
        assert spark.conf.get(ADAPTIVE) == "false"
    assert spark.conf.get(ADAPTIVE) == "true"
    with planned_for(spark, settings, 2 * MB):
        assert spark.conf.get(ADAPTIVE) == "true"
