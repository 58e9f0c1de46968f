"""NULL join keys (docs/design.md#bad-input): a NULL key never matches (SQL semantics). Such rows are kept as any
row without a partner is (an A row waits, then times out; a full_outer B row stays unmatched), the window's count
of them is in the run log, and when NULL target keys make two rows indistinguishable the run is refused naming
the column, the count and the ways out (`where` on the source, or a key that identifies them)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from delta_rows import read_rows, write_rows
from expected import same_rows
from frames import frame
from pyspark.sql import SparkSession
from rich.console import Console

from deltainc import AmbiguousRowsError, ConfigError, inc_join
from deltainc.cli.output import runs_table
from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds.two_source import plan_join
from deltainc.pipeline.state.store import read_runs, state_paths
from jobs import days_from, job_config

pytestmark = pytest.mark.spark

START = dt.date(2025, 4, 1)
ORDERS = "Id long, OrderId long, Amount double, EventTime timestamp, RecDate date"
PAYMENTS = "PayId long, OrderId long, Paid double, EventTime timestamp, RecDate date"


day, at = days_from(START)


def write(spark: SparkSession | None, root: Path, orders: list[tuple[Any, ...]], payments: list[tuple[Any, ...]],
          partitioned: bool = True) -> None:  # fmt: skip
    """The two sources, written by Spark when `spark` is given (the counts read from a log Spark wrote), else
    with delta-rs (no JVM: the rule is the join's)."""
    for name, rows, schema in (("orders", orders, ORDERS), ("payments", payments, PAYMENTS)):
        if spark is None:
            write_rows(root / name, rows, schema, partition_by=["RecDate"] if partitioned else [])
            continue
        writer = frame(spark, rows, schema).write.format("delta")
        (writer.partitionBy("RecDate") if partitioned else writer).save(str(root / name))


def job(root: Path, how: str = "left", name: str = "orders", **changes: Any) -> JobConfig:
    """Orders joined with payments on OrderId (a payment up to a day late); a row's identity is its own id."""
    join = {"how": how, "join_cols": ["OrderId"], "max_waiting_time": 1}
    return job_config(root, name, START, join, keys=["Id"], b_keys=["PayId"], sources=("orders", "payments"), **changes)


def null_counts(config: JobConfig) -> list[tuple[str | None, int | None, int | None]]:
    """(window start, null_key_a, null_key_b) of each run-log row, oldest first."""
    rows = read_runs(state_paths(str(config.state.path)), config.name, 100)
    return sorted((r["window_start"], r["null_key_a"], r["null_key_b"]) for r in rows)


def target(spark: SparkSession, config: JobConfig) -> list[tuple[Any, ...]]:
    """(Id, PayId) of every target row, sorted, NULLs last."""
    return read_rows(config.target.path, ["Id", "PayId"])


ORDERS_WITH_NULLS = [
    (1, 10, 5.0, at(0, 9), day(0)),
    (2, None, 6.0, at(0, 9), day(0)),
    (3, 11, 7.0, at(1, 9), day(1)),
    (4, None, 8.0, at(1, 9), day(1)),
    (5, None, 9.0, at(1, 9), day(1)),
]
PAYMENTS_WITH_NULLS = [
    (100, 10, 5.0, at(0, 8), day(0)),
    (101, None, 6.0, at(0, 8), day(0)),
    (102, 11, 7.0, at(1, 8), day(1)),
]


@pytest.mark.windows
def test_rows_with_a_null_join_key_never_match_are_kept_unmatched_and_counted_per_window(
    spark: SparkSession, tmp_path: Path
) -> None:
    write(spark, tmp_path, ORDERS_WITH_NULLS, PAYMENTS_WITH_NULLS)  # partitioned: counted from the Delta log
    config = job(tmp_path)
    run(config, spark=spark)
    assert target(spark, config) == [(1, 100), (2, None), (3, 102), (4, None), (5, None)]
    assert null_counts(config) == [(day(0).isoformat(), 1, 1), (day(1).isoformat(), 2, 0)]
    shown = Console(width=200, record=True)
    shown.print(runs_table(read_runs(state_paths(str(config.state.path)), config.name)))
    text = shown.export_text()
    assert "null keys" in text and "2 / 0" in text and "1 / 1" in text  # as `deltainc status` shows them
    a, b = (spark.read.format("delta").load(p) for p in (str(tmp_path / "orders"), str(tmp_path / "payments")))
    spec, _ = plan_join(config, a.schema, b.schema)  # the rows are those of the engine's one-shot output
    expected = inc_join(a, b, "left", ["OrderId"], None, 0, 1, START, day(1), spec.settings)
    actual = spark.read.format("delta").load(str(config.target.path))
    same_rows(actual, expected)


@pytest.mark.windows
def test_full_outer_keeps_a_b_row_with_a_null_join_key_as_an_unmatched_b_row(
    spark: SparkSession, tmp_path: Path
) -> None:
    write(spark, tmp_path, ORDERS_WITH_NULLS, PAYMENTS_WITH_NULLS, partitioned=False)  # counted by Spark
    config = job(tmp_path, "full_outer")
    run(config, spark=spark)
    assert target(spark, config) == [(1, 100), (2, None), (3, 102), (4, None), (5, None), (None, 101)]
    assert null_counts(config) == [(day(0).isoformat(), 1, 1), (day(1).isoformat(), 2, 0)]


def test_asof_never_matches_a_null_join_key(spark: SparkSession, tmp_path: Path) -> None:
    write(None, tmp_path, ORDERS_WITH_NULLS[:2], PAYMENTS_WITH_NULLS[:2])  # partitioned: counted from the log
    config = job(tmp_path, "asof", join={"asof_col": "EventTime", "look_back_time": 1})
    run(config, spark=spark)
    assert target(spark, config) == [(1, 100), (2, None)]
    assert null_counts(config)[0] == (day(0).isoformat(), 1, 1)


@pytest.mark.windows
def test_null_target_keys_that_collide_are_refused_naming_the_column_the_count_and_the_ways_out(
    spark: SparkSession, tmp_path: Path
) -> None:
    write(spark, tmp_path, ORDERS_WITH_NULLS, PAYMENTS_WITH_NULLS)
    config = job(tmp_path, target={"keys": ["OrderId"]})  # orders 4 and 5 have no OrderId on one day
    with pytest.raises(AmbiguousRowsError) as refused:
        run(config, spark=spark)
    message = str(refused.value)  # day 1's output: orders 4 and 5 waiting, order 2 timing out
    assert message.startswith("target.keys: 'OrderId' is NULL in 3 output row(s) of this window")
    assert 'where = "OrderId IS NOT NULL" under [source_a]' in message and "add to target.keys" in message
    assert target(spark, config) == [(1, 100), (2, None)]  # day 0 committed (one NULL key is unique); day 1 not
    assert null_counts(config)[-1] == (day(1).isoformat(), 2, 0)  # the failed window's row counts them too

    where = {"where": "OrderId IS NOT NULL"}
    kept_out = job(tmp_path, name="kept_out", source_a=where, target={"keys": ["OrderId"]})
    run(kept_out, spark=spark)
    assert target(spark, kept_out) == [(1, 100), (3, 102)]


def test_null_b_keys_that_collide_are_refused_naming_source_b(spark: SparkSession, tmp_path: Path) -> None:
    payments = [(None, None, 1.0, at(0, 8), day(0)), (None, None, 2.0, at(0, 9), day(0))]
    write(None, tmp_path, ORDERS_WITH_NULLS[:1], payments)
    with pytest.raises(AmbiguousRowsError, match=r"^target.b_keys: 'PayId' is NULL in 2 .* under \[source_b\]"):
        run(job(tmp_path, "full_outer"), spark=spark)


def test_a_source_where_spark_cannot_apply_is_refused_naming_it_before_anything_is_written(
    spark: SparkSession, tmp_path: Path
) -> None:
    write(None, tmp_path, ORDERS_WITH_NULLS, PAYMENTS_WITH_NULLS)
    config = job(tmp_path, source_b={"where": "OrderNo IS NOT NULL"})
    with pytest.raises(ConfigError, match=r"^source_b.where: 'OrderNo IS NOT NULL' .*columns: PayId, OrderId"):
        run(config, spark=spark)
    assert not (tmp_path / "target_orders").exists() and not (tmp_path / "state" / "runs").exists()
