"""The MERGE plan, rule by rule (docs/design.md#rows-of-the-target): which output rows become inserts, updates,
deletes."""

from __future__ import annotations

import datetime as dt

import pytest
from frames import frame
from pyspark.sql import DataFrame, SparkSession

from deltainc.pipeline.target.merge import Identity, plan_actions

pytestmark = pytest.mark.spark

D = dt.date
SCHEMA = "Id INT, RecDate_A DATE, SepaId STRING, RecDate_B DATE, WaitingTime INT, JoinType INT"
IDENTITY = Identity(a_keys=("Id",), a_rec="RecDate_A", b_keys=("SepaId",), b_rec="RecDate_B")
A_DAY = D(2025, 3, 3)
MATCHED = (1, A_DAY, "S1", D(2025, 3, 4), None, 3)
WAITING_1 = (1, A_DAY, None, None, 1, 5)
WAITING_2 = (1, A_DAY, None, None, 2, 5)
TIMED_OUT = (1, A_DAY, None, None, None, 4)


def _frame(spark: SparkSession, rows: list[tuple[object, ...]]) -> DataFrame:
    return frame(spark, rows, SCHEMA)


def _plan(spark: SparkSession, output: list[tuple[object, ...]], target: list[tuple[object, ...]]) -> list[tuple]:
    actions = plan_actions(_frame(spark, output), _frame(spark, target), IDENTITY)
    return sorted((tuple(row) for row in actions.collect()), key=repr)


def test_a_new_row_is_inserted(spark: SparkSession) -> None:
    assert _plan(spark, [WAITING_1], []) == [(*WAITING_1, "insert")]


def test_a_matched_row_already_in_the_target_is_not_written_again(spark: SparkSession) -> None:
    assert _plan(spark, [MATCHED], [MATCHED]) == []


def test_a_matched_row_with_null_b_keys_already_in_the_target_is_not_written_again(spark: SparkSession) -> None:
    row = (1, A_DAY, None, D(2025, 3, 4), None, 3)
    assert _plan(spark, [row], [row]) == []


def test_a_second_b_row_of_a_matched_a_row_is_inserted(spark: SparkSession) -> None:
    second = (1, A_DAY, "S2", D(2025, 3, 5), None, 3)
    assert _plan(spark, [MATCHED, second], [MATCHED]) == [(*second, "insert")]


def test_a_waiting_row_moves_forward_by_update(spark: SparkSession) -> None:
    assert _plan(spark, [WAITING_2], [WAITING_1]) == [(*WAITING_2, "update")]


def test_a_stale_waiting_row_never_overwrites_a_later_waiting_row(spark: SparkSession) -> None:
    assert _plan(spark, [WAITING_1], [WAITING_2]) == []


def test_a_stale_waiting_row_never_overwrites_a_match_or_a_time_out(spark: SparkSession) -> None:
    assert _plan(spark, [WAITING_1], [MATCHED]) == []
    assert _plan(spark, [WAITING_1], [TIMED_OUT]) == []


def test_a_waiting_row_that_times_out_is_updated(spark: SparkSession) -> None:
    assert _plan(spark, [TIMED_OUT], [WAITING_2]) == [(*TIMED_OUT, "update")]


def test_a_waiting_row_whose_a_row_matched_is_deleted_and_the_match_inserted(spark: SparkSession) -> None:
    marker = (1, A_DAY, None, None, None, None, "delete")
    assert _plan(spark, [MATCHED], [WAITING_2]) == sorted([(*MATCHED, "insert"), marker], key=repr)


def test_a_timed_out_row_is_final_and_a_match_for_it_is_only_counted(spark: SparkSession) -> None:
    assert [row[-1] for row in _plan(spark, [MATCHED], [TIMED_OUT])] == ["ignore"]  # counted as too late


def test_without_b_columns_an_unmatched_row_already_in_the_target_is_not_written_again(spark: SparkSession) -> None:
    schema = "Id INT, RecDate_A DATE, WaitingTime INT, JoinType INT"
    identity = Identity(a_keys=("Id",), a_rec="RecDate_A", b_keys=(), b_rec=None)
    timed_out, new = (1, A_DAY, None, 4), (2, A_DAY, None, 4)
    target = frame(spark, [timed_out], schema)
    actions = plan_actions(frame(spark, [timed_out, new], schema), target, identity)
    assert [tuple(row) for row in actions.collect()] == [(*new, "insert")]
