"""The suite's inline frames (tests/support/frames.py) hold what `spark.createDataFrame` would: the same schema and
rows."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from frames import frame
from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

AWKWARD = "k int, id bigint, day date, at timestamp, note string, x double, amount decimal(10,2), tags array<int>"


@pytest.mark.parametrize(
    ("schema", "rows"),
    [
        (
            AWKWARD,
            [
                (
                    1,
                    None,
                    dt.date(2025, 1, 1),
                    dt.datetime(2025, 1, 1, 10, 30, 5, 123),
                    "it's \\n",
                    1.5,
                    Decimal("1.25"),
                    [1],
                ),
                (2, 7, None, None, None, float("nan"), Decimal("-3"), []),
            ],
        ),
        ("k int, RecDate date", []),
        ("`a column` int, RecDate date", [(1, dt.date(2025, 3, 1))]),
    ],
    ids=["awkward_values", "no_rows", "a_name_with_a_space"],
)
def test_an_inline_frame_has_the_schema_and_rows_of_create_data_frame(
    spark: SparkSession, schema: str, rows: list[tuple[object, ...]]
) -> None:
    made, reference = frame(spark, rows, schema), spark.createDataFrame(rows, schema)
    assert made.schema == reference.schema
    assert sorted(map(str, made.collect())) == sorted(map(str, reference.collect()))


def test_a_row_of_the_wrong_length_is_refused_naming_it(spark: SparkSession) -> None:
    with pytest.raises(ValueError, match=r"^row 1 has 1 values for 2 columns"):
        frame(spark, [(1, dt.date(2025, 1, 1)), (2,)], "k int, RecDate date")
