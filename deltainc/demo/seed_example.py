"""The seven bank transactions of the seed specification (000) as two DataFrames: the worked example."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from deltainc.demo.sample_data import A_SCHEMA, B_SCHEMA

__all__ = ["SEED_A_SCHEMA", "SEED_B_SCHEMA", "seed_example"]

# The seed's tables hold the generated sources' columns, A's in another order.
SEED_A_SCHEMA = StructType(
    [A_SCHEMA[c] for c in ("TrxDT", "CreditDebit", "AmountEuro", "AccountName", "TrxId", "RecDate")]
)
SEED_B_SCHEMA = StructType([B_SCHEMA[c] for c in ("TrxId", "CountryCode", "RecDate")])


def _utc(text: str) -> dt.datetime:
    """The UTC moment written as 'YYYY-MM-DD HH:MM:SS'."""
    return dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=dt.timezone.utc)


def seed_example(spark: SparkSession) -> tuple[DataFrame, DataFrame]:
    """The seven bank transactions of the seed (000) as (A, B), with SEED_A_SCHEMA and SEED_B_SCHEMA."""
    day = dt.date.fromisoformat
    rows_a = [
        (_utc("2025-03-06 20:45:19"), "Credit", Decimal("700.30"), "Madame Zsa Zsa", 1, day("2025-03-06")),
        (_utc("2025-03-06 12:22:01"), "Debit", Decimal("200.00"), "Madame Zsa Zsa", 2, day("2025-03-06")),
        (_utc("2025-03-06 20:59:00"), "Debit", Decimal("1110.20"), "Madame Zsa Zsa", 3, day("2025-03-06")),
        (_utc("2025-03-06 23:50:00"), "Credit", Decimal("50.00"), "Madame Zsa Zsa", 4, day("2025-03-07")),
        (_utc("2025-03-06 08:00:00"), "Credit", Decimal("1500.00"), "Mr. X", 5, day("2025-03-07")),
        (_utc("2025-03-07 14:45:00"), "Debit", Decimal("300.25"), "Mr. X", 6, day("2025-03-07")),
        (_utc("2025-03-10 09:00:00"), "Credit", Decimal("99.99"), "Mr. X", 7, day("2025-03-08")),
    ]
    rows_b = [
        (1, "NL", day("2025-03-05")),
        (2, "NL", day("2025-03-04")),
        (3, "NL", day("2025-03-06")),
        (4, "UK", day("2025-03-07")),
        (5, "NL", day("2025-03-12")),
        (6, "NL", day("2025-03-18")),
        (7, "DE", day("2025-03-06")),
    ]
    return spark.createDataFrame(rows_a, SEED_A_SCHEMA), spark.createDataFrame(rows_b, SEED_B_SCHEMA)
