"""Deterministic sample sources: ledger transactions (A) and payment-engine records (B) that arrive late.

Every value is drawn from a hash of the row's `spark.range` id, the spec's seed and a per-attribute salt,
so the data is the same on every run, every cluster and every partitioning, and it scales to 100,000
rows a day for a year without a Python loop. One id is one transaction: its A row lands on day
`id div rows_per_day`; the other cases (late or early B, no B, two B, orphan B, corrections) are drawn
from the same id.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import random
from dataclasses import dataclass
from decimal import Decimal

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    DateType,
    DecimalType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from deltainc.errors import ConfigError

__all__ = [
    "A_SCHEMA",
    "B_SCHEMA",
    "SEED_A_SCHEMA",
    "SEED_B_SCHEMA",
    "DEFAULT_DELAY_BANDS",
    "ORPHAN_TRX_OFFSET",
    "SampleSpec",
    "generate",
    "RISK_SCHEMA",
    "risk_scores",
    "write_sources",
    "seed_example",
]

AMOUNT_TYPE = DecimalType(18, 2)

A_SCHEMA = StructType(
    [
        StructField("TrxId", LongType(), True),
        StructField("TrxDT", TimestampType(), True),
        StructField("CreditDebit", StringType(), True),
        StructField("AmountEuro", AMOUNT_TYPE, True),
        StructField("AccountName", StringType(), True),
        StructField("RecDate", DateType(), True),
    ]
)
B_SCHEMA = StructType(
    [
        StructField("SepaId", LongType(), True),
        StructField("TrxId", LongType(), True),
        StructField("CountryCode", StringType(), True),
        StructField("RecDate", DateType(), True),
    ]
)
SEED_A_SCHEMA = StructType(
    [
        StructField("TrxDT", TimestampType(), True),
        StructField("CreditDebit", StringType(), True),
        StructField("AmountEuro", AMOUNT_TYPE, True),
        StructField("AccountName", StringType(), True),
        StructField("TrxId", LongType(), True),
        StructField("RecDate", DateType(), True),
    ]
)
SEED_B_SCHEMA = StructType(
    [
        StructField("TrxId", LongType(), True),
        StructField("CountryCode", StringType(), True),
        StructField("RecDate", DateType(), True),
    ]
)

# (lowest delay, highest delay, share) of B.RecDate - A.RecDate in days; the shares add up to 1.
DEFAULT_DELAY_BANDS: tuple[tuple[int, int, float], ...] = (
    (0, 0, 0.60),
    (-1, -1, 0.12),
    (-2, -2, 0.08),
    (1, 5, 0.14),
    (6, 11, 0.04),
    (12, 20, 0.02),
)
# TrxIds of B rows without an A row start above this, disjoint from the ledger's 1..days*rows_per_day.
ORPHAN_TRX_OFFSET = 10**12

ACCOUNT_NAMES: tuple[str, ...] = (
    "Madame Zsa Zsa",
    "Mr. X",
    "Acme Trading B.V.",
    "Bakkerij de Vries",
    "Mueller Maschinenbau GmbH",
    "Dupont et Fils SARL",
    "Green Energy Ltd",
    "Stichting Open Deur",
)
# Repeated codes weigh the draw: most payments are Dutch.
COUNTRY_CODES: tuple[str, ...] = ("NL", "NL", "NL", "NL", "NL", "DE", "DE", "UK", "BE", "FR")
# Upper bounds (exclusive, in cents) of the four amount magnitudes: < 10, < 100, < 1,000, < 10,000 euro.
AMOUNT_CEILINGS_CENTS: tuple[int, ...] = (1_000, 10_000, 100_000, 1_000_000)

SECONDS_PER_DAY = 86_400
_EPOCH = dt.date(1970, 1, 1)
_MASK_53 = (1 << 53) - 1
_TWO_53 = float(1 << 53)

# One salt per independent draw, so that no two attributes are correlated.
_SALT_TIME, _SALT_BOOKED_LATE, _SALT_SIDE, _SALT_MAGNITUDE, _SALT_CENTS, _SALT_ACCOUNT = range(1, 7)
_SALT_NO_B, _SALT_BAND, _SALT_DELAY, _SALT_COUNTRY, _SALT_TWO_B, _SALT_SECOND_DELAY = range(7, 13)
_SALT_ORPHAN, _SALT_ORPHAN_COUNTRY, _SALT_CORRECTED, _SALT_CORRECTION_DAY = range(13, 17)
_SALT_CORRECTION_DOWN, _SALT_CORRECTION_CENTS = range(17, 19)


@dataclass(frozen=True)
class SampleSpec:
    """The parameters of a generated pair of sources; equal specs give equal data."""

    start: dt.date
    days: int
    rows_per_day: int
    seed: int = 7
    p_no_b: float = 0.03  # share of transactions that never get a B row (A orphans)
    p_orphan_b: float = 0.02  # B rows without an A row, as a share of rows_per_day, every day
    p_two_b: float = 0.02  # share of transactions with a B that get a second B row
    p_corrected: float = 0.01  # share of A rows recorded again later with a changed AmountEuro
    p_booked_late: float = 0.15  # share of A rows whose TrxDT lies on the day before their RecDate
    delay_bands: tuple[tuple[int, int, float], ...] = DEFAULT_DELAY_BANDS
    second_b_max_delay: int = 2  # a second B row lands 0..this many days after the first
    correction_delay: tuple[int, int] = (1, 5)  # a correction lands this many days after the original

    def __post_init__(self) -> None:
        """Reject a spec that cannot describe valid sources."""
        _check_range("days", self.days, 1, None)
        _check_range("rows_per_day", self.rows_per_day, 1, None)
        if self.days * self.rows_per_day >= ORPHAN_TRX_OFFSET:
            total = self.days * self.rows_per_day
            raise ConfigError(f"days * rows_per_day: expected < {ORPHAN_TRX_OFFSET}, got {total}")
        for name in ("p_no_b", "p_orphan_b", "p_two_b", "p_corrected", "p_booked_late"):
            _check_range(name, getattr(self, name), 0, 1)
        _check_delay_bands(self.delay_bands)
        _check_range("second_b_max_delay", self.second_b_max_delay, 0, None)
        low, high = self.correction_delay
        if not 1 <= low <= high:
            got = self.correction_delay
            raise ConfigError(f"correction_delay: expected (low, high) with 1 <= low <= high, got {got}")

    @property
    def end(self) -> dt.date:
        """The last RecDate of the sources."""
        return self.start + dt.timedelta(days=self.days - 1)


def _check_range(name: str, value: float, low: float, high: float | None) -> None:
    """Raise ConfigError naming `name` unless low <= value (<= high)."""
    if value < low or (high is not None and value > high):
        expected = f"{low} <= {name}" + (f" <= {high}" if high is not None else "")
        raise ConfigError(f"{name}: expected {expected}, got {value!r}")


def _check_delay_bands(bands: tuple[tuple[int, int, float], ...]) -> None:
    """Raise ConfigError unless the bands are (low <= high, share >= 0) with shares adding up to 1."""
    if not bands:
        raise ConfigError("delay_bands: expected at least one (low, high, share) band, got none")
    for low, high, share in bands:
        if low > high or share < 0:
            raise ConfigError(f"delay_bands: expected low <= high and share >= 0, got {(low, high, share)}")
    total = sum(share for _, _, share in bands)
    if not math.isclose(total, 1.0, abs_tol=1e-9):
        raise ConfigError(f"delay_bands: expected shares adding up to 1, got {total}")


# --- deterministic draws from the row's id ---------------------------------------------------------


def _hash(seed: int, salt: int) -> Column:
    """A 64-bit hash of the row's id, the seed and the salt."""
    return F.xxhash64(F.col("id"), F.lit(seed), F.lit(salt))


def _uniform(seed: int, salt: int) -> Column:
    """A pseudo-random double in [0, 1)."""
    return _hash(seed, salt).bitwiseAND(F.lit(_MASK_53)) / F.lit(_TWO_53)


def _below(seed: int, salt: int, bound: int | Column) -> Column:
    """A pseudo-random long in [0, bound)."""
    return F.pmod(_hash(seed, salt), bound if isinstance(bound, Column) else F.lit(bound).cast("long"))


def _choice(seed: int, salt: int, values: tuple[str, ...] | tuple[int, ...]) -> Column:
    """One of `values`, each position equally likely."""
    position = (_below(seed, salt, len(values)) + 1).cast("int")
    return F.element_at(F.array(*[F.lit(v) for v in values]), position)


# --- A: the ledger ------------------------------------------------------------------------------------


def _transactions(spark: SparkSession, spec: SampleSpec, partitions: int | None) -> DataFrame:
    """One row per transaction: its `id` and `a_day`, the day index (from 0) on which A records it."""
    total = spec.days * spec.rows_per_day
    return spark.range(0, total, 1, partitions).select(
        "id", F.expr(f"id div {spec.rows_per_day}").cast("int").alias("a_day")
    )


def _trx_time(spec: SampleSpec) -> Column:
    """A moment on the A RecDate, or on the day before for the transactions booked late."""
    day = F.col("a_day") + (spec.start - _EPOCH).days
    booked_late = F.when(_uniform(spec.seed, _SALT_BOOKED_LATE) < spec.p_booked_late, 1).otherwise(0)
    second_of_day = _below(spec.seed, _SALT_TIME, SECONDS_PER_DAY)
    seconds = (day - booked_late).cast("long") * SECONDS_PER_DAY + second_of_day
    return F.timestamp_seconds(seconds)


def _cents(seed: int) -> Column:
    """An amount in cents, spread over four orders of magnitude."""
    ceiling = _choice(seed, _SALT_MAGNITUDE, AMOUNT_CEILINGS_CENTS).cast("long")
    return _below(seed, _SALT_CENTS, ceiling - 1) + 1


def _ledger(tx: DataFrame, spec: SampleSpec) -> DataFrame:
    """The A rows as first recorded, with the internal columns `id`, `a_day` and `cents`."""
    seed = spec.seed
    return tx.select(
        "id",
        "a_day",
        (F.col("id") + 1).alias("TrxId"),
        _trx_time(spec).alias("TrxDT"),
        F.when(_uniform(seed, _SALT_SIDE) < 0.45, "Credit").otherwise("Debit").alias("CreditDebit"),
        _cents(seed).alias("cents"),
        _choice(seed, _SALT_ACCOUNT, ACCOUNT_NAMES).alias("AccountName"),
    )


def _corrected_cents(seed: int) -> Column:
    """A changed amount: lower (when possible) or higher than `cents`, never equal."""
    cents = F.col("cents")
    lower = _below(seed, _SALT_CORRECTION_CENTS, F.greatest(cents - 1, F.lit(1).cast("long"))) + 1
    higher = cents + _below(seed, _SALT_CORRECTION_CENTS, cents) + 1
    down = (_uniform(seed, _SALT_CORRECTION_DOWN) < 0.5) & (cents > 1)
    return F.when(down, lower).otherwise(higher)


def _corrections(ledger: DataFrame, spec: SampleSpec) -> DataFrame:
    """The A rows recorded again 1-5 days later with a changed amount, if that day is in the history."""
    low, high = spec.correction_delay
    later = F.col("a_day") + low + _below(spec.seed, _SALT_CORRECTION_DAY, high - low + 1).cast("int")
    return (
        ledger.where(_uniform(spec.seed, _SALT_CORRECTED) < spec.p_corrected)
        .withColumn("a_day", later)
        .withColumn("cents", _corrected_cents(spec.seed))
        .where(F.col("a_day") < spec.days)
    )


def _recdate(spec: SampleSpec, day: str) -> Column:
    """The date of day index `day` (0 = spec.start)."""
    return F.date_add(F.lit(spec.start), F.col(day).cast("int"))


def _as_a(rows: DataFrame, spec: SampleSpec) -> DataFrame:
    """The internal ledger rows in A_SCHEMA."""
    return rows.select(
        F.col("TrxId").cast("long").alias("TrxId"),
        "TrxDT",
        "CreditDebit",
        (F.col("cents").cast("decimal(18,0)") / 100).cast(AMOUNT_TYPE).alias("AmountEuro"),
        "AccountName",
        _recdate(spec, "a_day").alias("RecDate"),
    )


# --- B: the payment engine ----------------------------------------------------------------------------


def _delay(seed: int, bands: tuple[tuple[int, int, float], ...]) -> Column:
    """Days from the A RecDate to the B RecDate, drawn from the weighted bands."""
    band = _uniform(seed, _SALT_BAND)
    expr: Column | None = None
    cumulative = 0.0
    for low, high, share in bands:
        cumulative += share
        value = F.lit(low) + _below(seed, _SALT_DELAY, high - low + 1).cast("int")
        expr = F.when(band < cumulative, value) if expr is None else expr.when(band < cumulative, value)
    low, high, _ = bands[-1]
    last = F.lit(low) + _below(seed, _SALT_DELAY, high - low + 1).cast("int")
    return expr.otherwise(last) if expr is not None else last


def _first_payments(tx: DataFrame, spec: SampleSpec) -> DataFrame:
    """One B row per transaction that has one; B rows due before the first day land on it (initial load)."""
    seed = spec.seed
    return tx.where(_uniform(seed, _SALT_NO_B) >= spec.p_no_b).select(
        "id",
        (F.col("id") * 3 + 1).alias("SepaId"),
        (F.col("id") + 1).alias("TrxId"),
        _choice(seed, _SALT_COUNTRY, COUNTRY_CODES).alias("CountryCode"),
        F.greatest(F.col("a_day") + _delay(seed, spec.delay_bands), F.lit(0)).alias("b_day"),
    )


def _second_payments(first: DataFrame, spec: SampleSpec) -> DataFrame:
    """A second B row, same transaction and country, for a share of the transactions with a B."""
    seed = spec.seed
    later = _below(seed, _SALT_SECOND_DELAY, spec.second_b_max_delay + 1).cast("int")
    return first.where(_uniform(seed, _SALT_TWO_B) < spec.p_two_b).select(
        "id",
        (F.col("SepaId") + 1).alias("SepaId"),
        "TrxId",
        "CountryCode",
        (F.col("b_day") + later).alias("b_day"),
    )


def _orphan_payments(tx: DataFrame, spec: SampleSpec) -> DataFrame:
    """B rows of transactions the ledger never records, TrxIds above ORPHAN_TRX_OFFSET."""
    seed = spec.seed
    return tx.where(_uniform(seed, _SALT_ORPHAN) < spec.p_orphan_b).select(
        "id",
        (F.col("id") * 3 + 3).alias("SepaId"),
        (F.col("id") + 1 + ORPHAN_TRX_OFFSET).alias("TrxId"),
        _choice(seed, _SALT_ORPHAN_COUNTRY, COUNTRY_CODES).alias("CountryCode"),
        F.col("a_day").alias("b_day"),
    )


def _as_b(rows: DataFrame, spec: SampleSpec) -> DataFrame:
    """The internal payment rows in B_SCHEMA, without those that land after the last day."""
    return rows.where(F.col("b_day") < spec.days).select(
        F.col("SepaId").cast("long").alias("SepaId"),
        F.col("TrxId").cast("long").alias("TrxId"),
        "CountryCode",
        _recdate(spec, "b_day").alias("RecDate"),
    )


# --- public API -----------------------------------------------------------------------------------------


def generate(spark: SparkSession, spec: SampleSpec, partitions: int | None = None) -> tuple[DataFrame, DataFrame]:
    """The sources (A, B) described by `spec`, lazily built from `spark.range` with `partitions` slices."""
    tx = _transactions(spark, spec, partitions)
    ledger = _ledger(tx, spec)
    source_a = _as_a(ledger.unionByName(_corrections(ledger, spec)), spec)
    first = _first_payments(tx, spec)
    payments = first.unionByName(_second_payments(first, spec)).unionByName(_orphan_payments(tx, spec))
    source_b = _as_b(payments, spec)
    return source_a, source_b


RISK_SCHEMA = "ScoreId long, AccountName string, ValidFrom timestamp, Risk double, RecDate date"
# How many days after it became valid a risk score is delivered (RecDate - day of ValidFrom), and how often.
RISK_DELIVERY_DELAYS: tuple[tuple[int, float], ...] = ((0, 0.6), (1, 0.3), (2, 0.1))


def risk_scores(spark: SparkSession, spec: SampleSpec, every_days: float = 3.0) -> DataFrame:
    """A third source for as-of joins: each account's risk score, re-rated about every `every_days` days at a
    random time of day (ValidFrom), delivered 0-2 days later (RecDate); every account has a rating from the start."""
    rng = random.Random(spec.seed)
    rows: list[tuple[int, str, int, float, dt.date]] = []
    for account in ACCOUNT_NAMES:
        for offset in range(spec.days):
            if offset and rng.random() >= 1 / every_days:
                continue
            valid_from = (spec.start - _EPOCH).days * SECONDS_PER_DAY + offset * SECONDS_PER_DAY
            # The first rating is valid from the day before the start (a ledger row may be booked the day before).
            valid_from += rng.randrange(SECONDS_PER_DAY) if offset else -SECONDS_PER_DAY
            delay = rng.choices([d for d, _ in RISK_DELIVERY_DELAYS], [w for _, w in RISK_DELIVERY_DELAYS])[0]
            delivered = spec.start + dt.timedelta(days=min(offset + delay, spec.days - 1))
            rows.append((len(rows) + 1, account, valid_from, round(rng.random(), 3), delivered))
    raw = spark.createDataFrame(rows, "ScoreId long, AccountName string, seconds long, Risk double, RecDate date")
    return raw.select("ScoreId", "AccountName", F.timestamp_seconds("seconds").alias("ValidFrom"), "Risk", "RecDate")


def write_sources(
    spark: SparkSession,
    spec: SampleSpec,
    path_a: str | os.PathLike[str],
    path_b: str | os.PathLike[str],
    mode: str = "overwrite",
) -> None:
    """Write the sources of `spec` as Delta tables partitioned by RecDate at `path_a` and `path_b`."""
    source_a, source_b = generate(spark, spec)
    for frame, path in ((source_a, path_a), (source_b, path_b)):
        writer = frame.write.format("delta").mode(mode).partitionBy("RecDate")
        if mode == "overwrite":
            writer = writer.option("overwriteSchema", "true")
        writer.save(os.fspath(path))


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
