"""The sample sources: schemas, determinism, bounds, identities, the mix of cases, Delta output, the seed."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from deltainc.demo.sample_data import A_SCHEMA, B_SCHEMA, ORPHAN_TRX_OFFSET, SampleSpec, generate, write_sources
from deltainc.demo.seed_example import SEED_A_SCHEMA, SEED_B_SCHEMA, seed_example
from deltainc.errors import ConfigError

pytestmark = pytest.mark.spark

START = dt.date(2025, 3, 1)
TINY = SampleSpec(start=START, days=10, rows_per_day=20)
# Large enough that every kind of case shows up at the default shares, still a few thousand rows.
MODERATE = SampleSpec(start=START, days=30, rows_per_day=100)


def _rows(frame: DataFrame) -> list[Row]:
    """The frame's rows, sorted, for exact comparison."""
    return sorted(frame.collect())


def _names_and_types(frame: DataFrame) -> list[tuple[str, str]]:
    """The frame's columns as (name, simple type string)."""
    return [(field.name, field.dataType.simpleString()) for field in frame.schema]


def _schema_names_and_types(schema: StructType) -> list[tuple[str, str]]:
    """A schema's columns as (name, simple type string)."""
    return [(field.name, field.dataType.simpleString()) for field in schema]


@pytest.fixture(scope="module")
def moderate(spark: SparkSession) -> tuple[list[Row], list[Row]]:
    """The collected A and B rows of MODERATE."""
    source_a, source_b = generate(spark, MODERATE)
    return source_a.collect(), source_b.collect()


def test_schemas(spark: SparkSession) -> None:
    source_a, source_b = generate(spark, TINY)
    assert _names_and_types(source_a) == [
        ("TrxId", "bigint"),
        ("TrxDT", "timestamp"),
        ("CreditDebit", "string"),
        ("AmountEuro", "decimal(18,2)"),
        ("AccountName", "string"),
        ("RecDate", "date"),
    ]
    assert _names_and_types(source_b) == [
        ("SepaId", "bigint"),
        ("TrxId", "bigint"),
        ("CountryCode", "string"),
        ("RecDate", "date"),
    ]
    assert _names_and_types(source_a) == _schema_names_and_types(A_SCHEMA)
    assert _names_and_types(source_b) == _schema_names_and_types(B_SCHEMA)


def test_same_spec_gives_same_data_on_any_partitioning(spark: SparkSession) -> None:
    first_a, first_b = generate(spark, TINY)
    second_a, second_b = generate(spark, TINY, partitions=3)
    assert _rows(first_a) == _rows(second_a)
    assert _rows(first_b) == _rows(second_b)


def test_another_seed_gives_other_data(spark: SparkSession) -> None:
    source_a, _ = generate(spark, TINY)
    other_a, _ = generate(spark, SampleSpec(start=START, days=10, rows_per_day=20, seed=8))
    assert _rows(source_a) != _rows(other_a)


def test_each_day_records_rows_per_day_new_transactions(spark: SparkSession) -> None:
    source_a, _ = generate(spark, TINY)
    firsts = source_a.groupBy("TrxId").agg(F.min("RecDate").alias("RecDate"))
    per_day = {row["RecDate"]: row["count"] for row in firsts.groupBy("RecDate").count().collect()}
    assert per_day == {START + dt.timedelta(days=d): 20 for d in range(10)}


def test_no_recdate_outside_the_history(spark: SparkSession) -> None:
    source_a, source_b = generate(spark, TINY)
    for frame in (source_a, source_b):
        low, high = frame.select(F.min("RecDate"), F.max("RecDate")).first()  # type: ignore[misc]
        assert low >= START
        assert high <= TINY.end == dt.date(2025, 3, 10)


def test_identities_are_unique(spark: SparkSession) -> None:
    source_a, source_b = generate(spark, MODERATE)
    assert source_a.groupBy("TrxId", "RecDate").count().where("count > 1").count() == 0
    assert source_b.groupBy("SepaId", "RecDate").count().where("count > 1").count() == 0
    assert source_b.select("SepaId").distinct().count() == source_b.count()


def test_no_nulls(spark: SparkSession) -> None:
    source_a, source_b = generate(spark, TINY)
    for frame in (source_a, source_b):
        nulls = frame.select([F.sum(F.col(c).isNull().cast("int")).alias(c) for c in frame.columns]).first()
        assert all(count == 0 for count in nulls)  # type: ignore[union-attr]


def test_trx_time_is_on_or_shortly_before_recdate(spark: SparkSession) -> None:
    source_a, _ = generate(spark, MODERATE)
    lag = F.datediff("RecDate", F.to_date("TrxDT"))
    low, high = source_a.select(F.min(lag), F.max(lag)).first()  # type: ignore[misc]
    max_lag = 1 + MODERATE.correction_delay[1]  # booked the day before, then corrected up to 5 days later
    assert low >= 0
    assert high <= max_lag


def test_values_come_from_the_expected_domains(moderate: tuple[list[Row], list[Row]]) -> None:
    rows_a, rows_b = moderate
    assert {row["CreditDebit"] for row in rows_a} == {"Credit", "Debit"}
    assert all(row["AmountEuro"] > 0 for row in rows_a)
    assert 2 <= len({row["AccountName"] for row in rows_a}) <= 10
    assert {row["CountryCode"] for row in rows_b} == {"NL", "DE", "UK", "BE", "FR"}


def test_a_orphans_present(moderate: tuple[list[Row], list[Row]]) -> None:
    rows_a, rows_b = moderate
    assert {row["TrxId"] for row in rows_a} - {row["TrxId"] for row in rows_b}


def test_b_orphans_present_with_disjoint_trx_ids(moderate: tuple[list[Row], list[Row]]) -> None:
    rows_a, rows_b = moderate
    orphans = {row["TrxId"] for row in rows_b} - {row["TrxId"] for row in rows_a}
    assert orphans
    assert all(trx_id > ORPHAN_TRX_OFFSET for trx_id in orphans)
    assert all(row["TrxId"] <= MODERATE.days * MODERATE.rows_per_day for row in rows_a)


def test_one_to_many_present(moderate: tuple[list[Row], list[Row]]) -> None:
    _, rows_b = moderate
    per_trx = Counter(row["TrxId"] for row in rows_b)
    assert any(count == 2 for count in per_trx.values())
    assert max(per_trx.values()) == 2


def test_corrections_present_later_with_changed_amount(moderate: tuple[list[Row], list[Row]]) -> None:
    rows_a, _ = moderate
    versions: dict[int, list[Row]] = defaultdict(list)
    for row in rows_a:
        versions[row["TrxId"]].append(row)
    corrected = [sorted(rows, key=lambda r: r["RecDate"]) for rows in versions.values() if len(rows) > 1]
    assert corrected
    for original, correction in corrected:
        assert 1 <= (correction["RecDate"] - original["RecDate"]).days <= 5
        assert correction["AmountEuro"] != original["AmountEuro"]
        assert correction["TrxDT"] == original["TrxDT"]


def test_delays_cover_early_same_day_late_and_beyond_waiting(moderate: tuple[list[Row], list[Row]]) -> None:
    rows_a, rows_b = moderate
    first_a: dict[int, dt.date] = {}
    for row in rows_a:
        first_a[row["TrxId"]] = min(row["RecDate"], first_a.get(row["TrxId"], row["RecDate"]))
    delays = Counter((row["RecDate"] - first_a[row["TrxId"]]).days for row in rows_b if row["TrxId"] in first_a)
    assert delays.most_common(1)[0][0] == 0
    assert delays[-1] > 0 and delays[-2] > 0
    assert any(delays[d] for d in range(1, 6))
    assert any(delays[d] for d in range(6, 12))
    assert any(delays[d] for d in range(12, 21))
    assert min(delays) >= -2 and max(delays) <= 20 + MODERATE.second_b_max_delay


def test_write_sources_writes_partitioned_delta_tables(spark: SparkSession, tmp_path: Path) -> None:
    path_a, path_b = tmp_path / "a", tmp_path / "b"
    write_sources(spark, TINY, path_a, path_b)
    source_a, source_b = generate(spark, TINY)
    for path, frame in ((path_a, source_a), (path_b, source_b)):
        detail = spark.sql(f"DESCRIBE DETAIL delta.`{path}`").first()
        assert detail["format"] == "delta"  # type: ignore[index]
        assert detail["partitionColumns"] == ["RecDate"]  # type: ignore[index]
        assert _rows(spark.read.format("delta").load(str(path)).select(frame.columns)) == _rows(frame)


def test_spec_rejects_bad_parameters() -> None:
    with pytest.raises(ConfigError, match="days: expected 1 <= days"):
        SampleSpec(start=START, days=0, rows_per_day=1)
    with pytest.raises(ConfigError, match="p_no_b: expected 0 <= p_no_b <= 1, got 1.5"):
        SampleSpec(start=START, days=1, rows_per_day=1, p_no_b=1.5)
    with pytest.raises(ConfigError, match="delay_bands: expected shares adding up to 1"):
        SampleSpec(start=START, days=1, rows_per_day=1, delay_bands=((0, 0, 0.5),))
    with pytest.raises(ConfigError, match="correction_delay"):
        SampleSpec(start=START, days=1, rows_per_day=1, correction_delay=(0, 2))


def test_seed_example_matches_the_seed(spark: SparkSession) -> None:
    source_a, source_b = seed_example(spark)
    assert source_a.schema == SEED_A_SCHEMA
    assert source_b.schema == SEED_B_SCHEMA
    assert source_a.columns == ["TrxDT", "CreditDebit", "AmountEuro", "AccountName", "TrxId", "RecDate"]
    assert source_b.columns == ["TrxId", "CountryCode", "RecDate"]
    shown = source_a.select(
        F.date_format("TrxDT", "yyyy-MM-dd HH:mm:ss").alias("TrxDT"),
        "CreditDebit",
        "AmountEuro",
        "AccountName",
        "TrxId",
        F.col("RecDate").cast("string").alias("RecDate"),
    )
    assert sorted((tuple(row) for row in shown.collect()), key=lambda row: row[4]) == [
        ("2025-03-06 20:45:19", "Credit", Decimal("700.30"), "Madame Zsa Zsa", 1, "2025-03-06"),
        ("2025-03-06 12:22:01", "Debit", Decimal("200.00"), "Madame Zsa Zsa", 2, "2025-03-06"),
        ("2025-03-06 20:59:00", "Debit", Decimal("1110.20"), "Madame Zsa Zsa", 3, "2025-03-06"),
        ("2025-03-06 23:50:00", "Credit", Decimal("50.00"), "Madame Zsa Zsa", 4, "2025-03-07"),
        ("2025-03-06 08:00:00", "Credit", Decimal("1500.00"), "Mr. X", 5, "2025-03-07"),
        ("2025-03-07 14:45:00", "Debit", Decimal("300.25"), "Mr. X", 6, "2025-03-07"),
        ("2025-03-10 09:00:00", "Credit", Decimal("99.99"), "Mr. X", 7, "2025-03-08"),
    ]
    assert sorted((row["TrxId"], row["CountryCode"], str(row["RecDate"])) for row in source_b.collect()) == [
        (1, "NL", "2025-03-05"),
        (2, "NL", "2025-03-04"),
        (3, "NL", "2025-03-06"),
        (4, "UK", "2025-03-07"),
        (5, "NL", "2025-03-12"),
        (6, "NL", "2025-03-18"),
        (7, "DE", "2025-03-06"),
    ]


def test_seed_example_arrival_differences(spark: SparkSession) -> None:
    source_a, source_b = seed_example(spark)
    diff = F.datediff(source_b["RecDate"], source_a["RecDate"]).alias("DiffDays")
    pairs = source_a.join(source_b, "TrxId").select("TrxId", diff).collect()
    # The seed's DiffDays table: look back at most 2 days, wait 11 days to always find the match.
    assert dict(sorted((row["TrxId"], row["DiffDays"]) for row in pairs)) == {
        1: -1,
        2: -2,
        3: 0,
        4: 0,
        5: 5,
        6: 11,
        7: -2,
    }
