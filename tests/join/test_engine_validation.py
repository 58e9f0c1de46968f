"""docs/design.md#bad-input for `inc_join`: bad input gets a clear error naming the field, before any Spark job runs.

Also the positive rules of the same section: NULL keys never match, rows with a NULL RecDate are never joined.
"""

from __future__ import annotations

import datetime as dt
import re
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from chispa import assert_df_equality
from frames import frame
from pydantic import ValidationError
from pyspark.sql import DataFrame, SparkSession

from deltainc import ConfigError, DeltaincError, IncJoinSettings, JoinType, SchemaError, inc_join

pytestmark = pytest.mark.spark

D1 = dt.date(2025, 3, 1)
A_SCHEMA = "TrxId long, Amount double, RecDate date"
B_SCHEMA = "TrxId long, Country string, RecDate date"
OUT = "TrxId, RecDate, RecDate_A, RecDate_B, DiffArrivalTime, JoinType"
OUT_SCHEMA = "TrxId long, RecDate date, RecDate_A date, RecDate_B date, DiffArrivalTime int, JoinType int"


@pytest.fixture()
def a(spark: SparkSession) -> DataFrame:
    return frame(spark, [(1, 10.0, D1)], A_SCHEMA)


@pytest.fixture()
def b(spark: SparkSession) -> DataFrame:
    return frame(spark, [(1, "NL", D1)], B_SCHEMA)


def _join(df_a: DataFrame, df_b: DataFrame, **overrides: Any) -> DataFrame:
    """inc_join with valid arguments, except those overridden."""
    kwargs: dict[str, Any] = {
        "how": "left",
        "join_cols": ["TrxId"],
        "join_cond": None,
        "look_back_time": 1,
        "max_waiting_time": 2,
        "output_window_start": "2025-03-01",
        "output_window_end": "2025-03-31",
        "other_settings": None,
    }
    kwargs.update(overrides)
    return inc_join(df_a, df_b, **kwargs)


# --- the error types -------------------------------------------------------------------------------------------


def test_config_and_schema_errors_are_value_errors_of_the_package() -> None:
    for error in (ConfigError, SchemaError):
        assert issubclass(error, DeltaincError)
        assert issubclass(error, ValueError)


# --- arguments ---------------------------------------------------------------------------------------------------


def test_unknown_join_type_is_rejected_naming_the_field(a: DataFrame, b: DataFrame) -> None:
    with pytest.raises(ConfigError, match=r"^how: unknown join type 'sideways'; expected one of inner, left"):
        _join(a, b, how="sideways")


def test_negative_look_back_time_is_rejected_naming_the_field(a: DataFrame, b: DataFrame) -> None:
    with pytest.raises(ConfigError, match=r"^look_back_time: must be >= 0, got -1$"):
        _join(a, b, look_back_time=-1)


def test_negative_max_waiting_time_is_rejected_naming_the_field(a: DataFrame, b: DataFrame) -> None:
    with pytest.raises(ConfigError, match=r"^max_waiting_time: must be >= 0, got -3$"):
        _join(a, b, max_waiting_time=-3)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("look_back_time", 1.5),
        ("look_back_time", True),
        ("max_waiting_time", 2.0),
        ("max_waiting_time", False),
        ("max_waiting_time", "2"),
        ("look_back_time", None),
    ],
)
def test_non_integer_time_is_rejected_naming_the_field(a: DataFrame, b: DataFrame, field: str, value: object) -> None:
    expected = rf"^{field}: expected a whole number of time units >= 0, got {re.escape(repr(value))}$"
    with pytest.raises(ConfigError, match=expected):
        _join(a, b, **{field: value})


@pytest.mark.parametrize("join_cols", [[], None, ()])
def test_empty_join_cols_without_join_cond_is_rejected_naming_the_field(
    a: DataFrame, b: DataFrame, join_cols: object
) -> None:
    with pytest.raises(ConfigError, match=r"^join_cols / join_cond: give at least one join key or a join condition$"):
        _join(a, b, join_cols=join_cols, join_cond=None)


def test_empty_join_cols_with_a_join_cond_is_accepted(a: DataFrame, b: DataFrame) -> None:
    settings = IncJoinSettings(output_select="JoinType")
    out = _join(a, b, join_cols=[], join_cond="A.TrxId = B.TrxId", other_settings=settings)
    assert [r.JoinType for r in out.collect()] == [JoinType.SAME_TIME]


def test_blank_join_col_name_is_rejected_naming_the_field(a: DataFrame, b: DataFrame) -> None:
    with pytest.raises(ConfigError, match=r"^join_cols: expected non-empty column names, got \['TrxId', ' '\]$"):
        _join(a, b, join_cols=["TrxId", " "])


@pytest.mark.parametrize("join_cols", [["TrxId", "TrxId"], ["TrxId", "trxid"]])
def test_duplicate_join_cols_are_rejected_naming_the_field(a: DataFrame, b: DataFrame, join_cols: list[str]) -> None:
    with pytest.raises(ConfigError, match=rf"^join_cols: duplicate column in {re.escape(repr(join_cols))}$"):
        _join(a, b, join_cols=join_cols)


def test_join_cond_of_the_wrong_type_is_rejected_naming_the_field(a: DataFrame, b: DataFrame) -> None:
    with pytest.raises(ConfigError, match=r"^join_cond: expected a SQL string or a Column, got int$"):
        _join(a, b, join_cond=42)


def test_other_settings_of_the_wrong_type_is_rejected_naming_the_field(a: DataFrame, b: DataFrame) -> None:
    with pytest.raises(ConfigError, match=r"^other_settings: expected IncJoinSettings, got dict$"):
        _join(a, b, other_settings={"include_waiting": True})


# --- the output window -------------------------------------------------------------------------------------------


def test_window_start_after_end_is_rejected_naming_both_fields(a: DataFrame, b: DataFrame) -> None:
    with pytest.raises(
        ConfigError,
        match=r"^output window: output_window_start 2025-03-10 is after output_window_end 2025-03-01$",
    ):
        _join(a, b, output_window_start="2025-03-10", output_window_end=dt.date(2025, 3, 1))


def test_window_of_one_unit_is_accepted(a: DataFrame, b: DataFrame) -> None:
    out = _join(a, b, output_window_start="2025-03-01", output_window_end="2025-03-01")
    assert out.count() == 1


@pytest.mark.parametrize("field", ["output_window_start", "output_window_end"])
@pytest.mark.parametrize("value", ["2025-13-01", "yesterday", "", "01/03/2025", 20250301])
def test_unparsable_window_date_is_rejected_naming_the_field(
    a: DataFrame, b: DataFrame, field: str, value: object
) -> None:
    expected = rf"^{field}: expected a date like 2025-03-07, got {re.escape(repr(value))}$"
    with pytest.raises(ConfigError, match=expected):
        _join(a, b, **{field: value})


# --- the sources' schemas ----------------------------------------------------------------------------------------


def test_join_key_missing_from_source_a_is_rejected_listing_its_columns(spark: SparkSession, b: DataFrame) -> None:
    a = frame(spark, [(1, 10.0, D1)], "Id long, Amount double, RecDate date")
    with pytest.raises(
        SchemaError, match=r"^join_cols: column 'TrxId' missing from source_a \(columns: Id, Amount, RecDate\)$"
    ):
        _join(a, b)


def test_join_key_missing_from_source_b_is_rejected_listing_its_columns(spark: SparkSession, a: DataFrame) -> None:
    b = frame(spark, [(1, "NL", D1)], "Id long, Country string, RecDate date")
    with pytest.raises(
        SchemaError, match=r"^join_cols: column 'TrxId' missing from source_b \(columns: Id, Country, RecDate\)$"
    ):
        _join(a, b)


def test_rec_date_missing_from_source_a_is_rejected_naming_inc_col_name(spark: SparkSession, b: DataFrame) -> None:
    a = frame(spark, [(1, 10.0, D1)], "TrxId long, Amount double, LoadDate date")
    with pytest.raises(
        SchemaError,
        match=r"^inc_col_name: column 'RecDate' missing from source_a \(columns: TrxId, Amount, LoadDate\)$",
    ):
        _join(a, b)


def test_rec_date_missing_from_source_b_is_rejected_naming_inc_col_name(spark: SparkSession, a: DataFrame) -> None:
    b = frame(spark, [(1, "NL")], "TrxId long, Country string")
    with pytest.raises(
        SchemaError, match=r"^inc_col_name: column 'RecDate' missing from source_b \(columns: TrxId, Country\)$"
    ):
        _join(a, b)


def test_a_column_with_a_backtick_in_its_name_is_rejected_naming_it(a: DataFrame, b: DataFrame) -> None:
    with pytest.raises(SchemaError, match=r"^source_b: column 'Coun`try' has a backtick in its name"):
        _join(a, b.withColumnRenamed("Country", "Coun`try"))


def test_custom_inc_col_name_missing_from_a_source_is_rejected_naming_it(a: DataFrame, b: DataFrame) -> None:
    with pytest.raises(SchemaError, match=r"^inc_col_name: column 'LoadDate' missing from source_a \(columns: "):
        _join(a, b, other_settings=IncJoinSettings(inc_col_name="LoadDate"))


def test_rec_date_of_a_string_type_is_rejected_naming_inc_col_name(spark: SparkSession, a: DataFrame) -> None:
    b = frame(spark, [(1, "NL", "2025-03-01")], "TrxId long, Country string, RecDate string")
    with pytest.raises(
        SchemaError, match=r"^inc_col_name: column 'RecDate' of source_b must be a date or timestamp, got string$"
    ):
        _join(a, b)


def test_rec_date_of_a_timestamp_type_is_accepted(spark: SparkSession, a: DataFrame) -> None:
    b = frame(spark, [(1, "NL", dt.datetime(2025, 3, 1, 23, 59))], "TrxId long, Country string, RecDate timestamp")
    out = _join(a, b, other_settings=IncJoinSettings(output_select="TrxId, JoinType"))
    assert [(r.TrxId, r.JoinType) for r in out.collect()] == [(1, JoinType.SAME_TIME)]


def test_an_hour_job_on_a_date_rec_date_is_rejected_naming_time_uom(a: DataFrame, b: DataFrame) -> None:
    with pytest.raises(SchemaError, match=r"^time_uom: 'hour' needs a timestamp 'RecDate', but column 'RecDate' of "
                       r"source_a is a date; set time_uom = 'day'"):  # fmt: skip
        _join(a, b, other_settings=IncJoinSettings(time_uom="hour"), output_window_start=None, output_window_end=None)


def test_mismatched_key_types_string_vs_long_are_rejected_naming_the_key(spark: SparkSession, a: DataFrame) -> None:
    b = frame(spark, [("1", "NL", D1)], "TrxId string, Country string, RecDate date")
    with pytest.raises(
        SchemaError,
        match=r"^join_cols: key 'TrxId' has type bigint in source_a but string in source_b; cast one of them$",
    ):
        _join(a, b)


def test_key_types_long_vs_int_are_accepted_and_match(spark: SparkSession, a: DataFrame) -> None:
    b = frame(spark, [(1, "NL", D1)], "TrxId int, Country string, RecDate date")
    out = _join(a, b, other_settings=IncJoinSettings(output_select="TrxId, JoinType"))
    assert [(r.TrxId, r.JoinType) for r in out.collect()] == [(1, JoinType.SAME_TIME)]


def test_key_types_long_vs_double_are_rejected_naming_the_key(spark: SparkSession, a: DataFrame) -> None:
    b = frame(spark, [(1.0, "NL", D1)], "TrxId double, Country string, RecDate date")
    with pytest.raises(
        SchemaError, match=r"^join_cols: key 'TrxId' has type bigint in source_a but double in source_b"
    ):
        _join(a, b)


@pytest.mark.parametrize("cond", ["A.Nope = B.TrxId", "A.TrxId = = B.TrxId"])
def test_a_join_cond_that_does_not_resolve_is_rejected_naming_the_field(a: DataFrame, b: DataFrame, cond: str) -> None:
    with pytest.raises(
        ConfigError, match=r"^join_cond: cannot be resolved against source_a as 'A' and source_b as 'B'"
    ):
        _join(a, b, join_cond=cond)


# --- output column collisions ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "schema", "message"),
    [
        pytest.param(
            (1, D1, D1),
            "TrxId long, RecDate_B date, RecDate date",
            r"^output column collision: 'RecDate_B' from source_b column 'RecDate' \(suffixed with alias_b 'B': "
            r"source_a has a 'RecDate' too\) collides with source_a column 'RecDate_B'; .* alias_a = \"A2\" and "
            r"alias_b = \"B2\" under \[join\]",
            id="a_column_rec_date_b_collides_with_b_suffixed_rec_date",
        ),
    ],
)
def test_a_source_column_named_like_an_output_column_is_rejected_naming_both(
    spark: SparkSession, b: DataFrame, row: tuple[object, ...], schema: str, message: str
) -> None:
    a = frame(spark, [row], schema)
    with pytest.raises(SchemaError, match=message):
        _join(a, b)


def test_a_source_column_named_like_a_computed_column_comes_out_with_its_sides_alias(
    spark: SparkSession, b: DataFrame
) -> None:
    # A source that is another job's target has its own JoinType: it passes through next to the join's.
    a = frame(spark, [(1, 3, D1)], "TrxId long, JoinType int, RecDate date")
    out = _join(a, b, other_settings=IncJoinSettings(output_select="TrxId, JoinType_A, JoinType"))
    assert [tuple(row) for row in out.collect()] == [(1, 3, int(JoinType.SAME_TIME))]


def test_rec_date_as_a_join_key_collides_with_the_output_inc_col(a: DataFrame, b: DataFrame) -> None:
    with pytest.raises(
        SchemaError, match=r"^output column collision: 'RecDate' from the output inc_col collides with join_cols; "
    ):
        _join(a, b, join_cols=["TrxId", "RecDate"])


@pytest.mark.parametrize("column", ["__di_t", "__DI_extra"])
def test_reserved_column_prefix_is_rejected_naming_the_source(spark: SparkSession, a: DataFrame, column: str) -> None:
    b = frame(spark, [(1, 0, D1)], f"TrxId long, {column} int, RecDate date")
    with pytest.raises(
        SchemaError,
        match=rf"^source_b: column names starting with '__di_' are reserved: \['{column}'\]$",
    ):
        _join(a, b)


# --- IncJoinSettings ---------------------------------------------------------------------------------------------


def test_unknown_output_select_token_is_rejected_naming_the_field(a: DataFrame, b: DataFrame) -> None:
    with pytest.raises(ConfigError, match=r"^output_select: unknown token or column 'Bogus'; expected one of "):
        _join(a, b, other_settings=IncJoinSettings(output_select="join_cols, Bogus"))


def test_empty_output_select_is_rejected_naming_the_field(a: DataFrame, b: DataFrame) -> None:
    with pytest.raises(ConfigError, match=r"^output_select: selects no column$"):
        _join(a, b, other_settings=IncJoinSettings(output_select=" , "))


def test_b_waits_for_a_without_the_sliding_join_window_is_rejected_naming_the_field(a: DataFrame, b: DataFrame) -> None:
    options = IncJoinSettings(b_waits_for_a=True, enforce_sliding_join_window=False)
    with pytest.raises(ConfigError, match=r"^b_waits_for_a: needs enforce_sliding_join_window = true: "):
        _join(a, b, how="full_outer", other_settings=options)


def test_b_waits_for_a_is_ignored_by_joins_without_b_only_rows(spark: SparkSession, b: DataFrame) -> None:
    # An A row with no B: the left join's rows do not depend on b_waits_for_a (nor is it rejected without the
    # sliding join window), since only full_outer has B rows without an A row.
    a = frame(spark, [(2, 10.0, D1)], A_SCHEMA)
    for enforce in (True, False):
        options = IncJoinSettings(output_select=OUT, b_waits_for_a=True, enforce_sliding_join_window=enforce)
        out = _join(a, b, how="left", other_settings=options)
        assert [(r.TrxId, r.RecDate, r.JoinType) for r in out.collect()] == [
            (2, dt.date(2025, 3, 3), JoinType.A_TIMED_OUT)
        ]


def test_inc_join_settings_rejects_unknown_fields() -> None:
    with pytest.raises(ValidationError, match=r"(?s)include_wating\n  Extra inputs are not permitted"):
        IncJoinSettings(include_wating=True)  # type: ignore[call-arg]


def test_inc_join_settings_rejects_a_bad_time_uom() -> None:
    with pytest.raises(
        ValidationError, match=r"(?s)time_uom\n  Value error, expected one of day, hour, minute, got 'week'"
    ):
        IncJoinSettings(time_uom="week")


def test_inc_join_settings_rejects_equal_aliases() -> None:
    with pytest.raises(ValidationError, match=r"alias_a and alias_b must differ, both are 'X'"):
        IncJoinSettings(alias_a="X", alias_b="x")


def test_inc_join_settings_validation_error_is_a_value_error() -> None:
    assert issubclass(ValidationError, ValueError)


# --- NULL semantics ----------------------------------------------------------------------------------------------


def _same_day_join(df_a: DataFrame, df_b: DataFrame, how: str, start: dt.date | None, end: dt.date | None) -> DataFrame:
    """`how` over [start, end], a row matching only a partner of its own day (look_back_time = max_waiting_time
    = 0), in the OUT columns."""
    window = {"output_window_start": start, "output_window_end": end}
    settings = IncJoinSettings(output_select=OUT)
    return _join(df_a, df_b, how=how, look_back_time=0, max_waiting_time=0, other_settings=settings, **window)


def test_null_keys_never_match(spark: SparkSession) -> None:
    a = frame(spark, [(None, 10.0, D1), (1, 20.0, D1)], A_SCHEMA)
    b = frame(spark, [(None, "NL", D1), (1, "UK", D1)], B_SCHEMA)
    out = _same_day_join(a, b, "left", D1, D1)
    expected = frame(
        spark,
        [
            (None, D1, D1, None, None, int(JoinType.A_TIMED_OUT)),
            (1, D1, D1, D1, 0, int(JoinType.SAME_TIME)),
        ],
        OUT_SCHEMA,
    )
    assert_df_equality(out, expected, ignore_row_order=True, ignore_nullable=True)


@pytest.mark.parametrize("window", [(D1, D1), (None, None)], ids=["windowed", "unbounded"])
def test_rows_with_a_null_rec_date_are_never_joined_nor_output(
    spark: SparkSession, window: tuple[dt.date | None, dt.date | None]
) -> None:
    a = frame(spark, [(1, 10.0, None), (2, 20.0, D1), (3, 30.0, D1)], A_SCHEMA)
    b = frame(spark, [(1, "NL", D1), (2, "UK", None), (3, "DE", D1)], B_SCHEMA)
    expected = frame(
        spark,
        [
            (1, D1, None, D1, None, int(JoinType.NOT_MATCHED)),  # B's row 1: its A row has no RecDate
            (2, D1, D1, None, None, int(JoinType.A_TIMED_OUT)),  # A's row 2: its B row has no RecDate
            (3, D1, D1, D1, 0, int(JoinType.SAME_TIME)),
        ],
        OUT_SCHEMA,
    )
    out = _same_day_join(a, b, "full_outer", *window)
    assert_df_equality(out, expected, ignore_row_order=True, ignore_nullable=True)


# --- nothing is computed when the input is invalid ---------------------------------------------------------------


@pytest.fixture()
def job_group(spark: SparkSession) -> Iterator[Callable[[str], None]]:
    """Tag the Spark jobs started from this thread with a group; clear the tag afterwards."""
    sc = spark.sparkContext

    def tag(group: str) -> None:
        sc.setJobGroup(group, f"deltainc validation test {group}")

    yield tag
    sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    sc.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]


def _wait_for_jobs(spark: SparkSession, group: str, timeout: float = 30.0) -> list[int]:
    """Job ids of `group`, once the status store (fed asynchronously by the listener bus) has seen one."""
    tracker = spark.sparkContext.statusTracker()
    deadline = time.monotonic() + timeout
    while True:
        ids = tracker.getJobIdsForGroup(group)
        if ids or time.monotonic() > deadline:
            return ids
        time.sleep(0.05)


def test_invalid_input_is_rejected_before_any_spark_job_runs(
    spark: SparkSession, a: DataFrame, b: DataFrame, job_group: Callable[[str], None]
) -> None:
    b_string_key = frame(spark, [("1", "NL", D1)], "TrxId string, Country string, RecDate date")
    b_string_date = frame(spark, [(1, "NL", "2025-03-01")], "TrxId long, Country string, RecDate string")
    b_no_key = frame(spark, [(1, "NL", D1)], "Id long, Country string, RecDate date")
    a_collides = frame(spark, [(1, D1, D1)], "TrxId long, RecDate_B date, RecDate date")
    cases: list[tuple[DataFrame, DataFrame, dict[str, Any], type[Exception]]] = [
        (a, b, {"how": "sideways"}, ConfigError),
        (a, b, {"look_back_time": -1}, ConfigError),
        (a, b, {"max_waiting_time": 1.5}, ConfigError),
        (a, b, {"join_cols": []}, ConfigError),
        (a, b, {"join_cols": ["TrxId", "TrxId"]}, ConfigError),
        (a, b, {"output_window_start": "2025-03-10", "output_window_end": "2025-03-01"}, ConfigError),
        (a, b, {"output_window_end": "2025-02-30"}, ConfigError),
        (a, b, {"other_settings": IncJoinSettings(output_select="Bogus")}, ConfigError),
        (a, b, {"other_settings": {}}, ConfigError),
        (
            a,
            b,
            {"how": "full", "other_settings": IncJoinSettings(b_waits_for_a=True, enforce_sliding_join_window=False)},
            ConfigError,
        ),
        (a, b_no_key, {}, SchemaError),
        (a, b_string_key, {}, SchemaError),
        (a, b_string_date, {}, SchemaError),
        (a_collides, b, {}, SchemaError),
    ]
    invalid = f"invalid-{uuid.uuid4()}"
    job_group(invalid)
    for df_a, df_b, overrides, error in cases:
        with pytest.raises(error):
            _join(df_a, df_b, **overrides)

    # The status store is fed in order by the listener bus: once a later job is visible, an earlier one would be.
    valid = f"valid-{uuid.uuid4()}"
    job_group(valid)
    assert _join(a, b).count() == 1
    assert _wait_for_jobs(spark, valid), "the probe sees no job even for a valid join"
    assert spark.sparkContext.statusTracker().getJobIdsForGroup(invalid) == []
