"""Deterministic sample sources: ledger transactions (A) and payment-engine records (B) that arrive late.

Every value is drawn from a hash of the row's `spark.range` id, the spec's seed and a per-attribute salt,
so the data is the same on every run, every cluster and every partitioning, and it scales to 100,000
rows a day for a year without a Python loop. One id is one transaction: its A row lands on day
`id div rows_per_day`; the other cases (late or early B, no B, two B, orphan B, corrections) are drawn
from the same id.
"""

from __future__ import annotations

import os

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DateType, DecimalType, LongType, StringType, StructField, StructType, TimestampType

from deltainc.demo.sample_spec import DEFAULT_DELAY_BANDS, ORPHAN_TRX_OFFSET, SampleSpec
from deltainc.time_units import to_index

__all__ = [
    "A_SCHEMA",
    "B_SCHEMA",
    "DEFAULT_DELAY_BANDS",
    "ORPHAN_TRX_OFFSET",
    "SampleSpec",
    "generate",
    "write_sources",
]

_MASK_53 = (1 << 53) - 1
_TWO_53 = float(1 << 53)


def _hash(seed: int, salt: int) -> Column:
    return F.xxhash64(F.col("id"), F.lit(seed), F.lit(salt))


def uniform(seed: int, salt: int) -> Column:
    """A pseudo-random double in [0, 1)."""
    return _hash(seed, salt).bitwiseAND(F.lit(_MASK_53)) / F.lit(_TWO_53)


def below(seed: int, salt: int, bound: int | Column) -> Column:
    """A pseudo-random long in [0, bound)."""
    return F.pmod(_hash(seed, salt), bound if isinstance(bound, Column) else F.lit(bound).cast("long"))


def choice(seed: int, salt: int, values: tuple[str, ...] | tuple[int, ...]) -> Column:
    """One of `values`, each position equally likely."""
    position = (below(seed, salt, len(values)) + 1).cast("int")
    return F.element_at(F.array(*[F.lit(v) for v in values]), position)


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

# One salt per independent draw, so that no two attributes are correlated.
_SALT_TIME, _SALT_BOOKED_LATE, _SALT_SIDE, _SALT_MAGNITUDE, _SALT_CENTS, _SALT_ACCOUNT = range(1, 7)
_SALT_NO_B, _SALT_BAND, _SALT_DELAY, _SALT_COUNTRY, _SALT_TWO_B, _SALT_SECOND_DELAY = range(7, 13)
_SALT_ORPHAN, _SALT_ORPHAN_COUNTRY, _SALT_CORRECTED, _SALT_CORRECTION_DAY = range(13, 17)
_SALT_CORRECTION_DOWN, _SALT_CORRECTION_CENTS = range(17, 19)


# --- A: the ledger ------------------------------------------------------------------------------------


def _transactions(spark: SparkSession, spec: SampleSpec, partitions: int | None) -> DataFrame:
    """One row per transaction: its `id` and `a_day`, the day index (from 0) on which A records it."""
    total = spec.days * spec.rows_per_day
    return spark.range(0, total, 1, partitions).select(
        "id", F.expr(f"id div {spec.rows_per_day}").cast("int").alias("a_day")
    )


def _trx_time(spec: SampleSpec) -> Column:
    """A moment on the A RecDate, or on the day before for the transactions booked late."""
    day = F.col("a_day") + to_index(spec.start)
    booked_late = F.when(uniform(spec.seed, _SALT_BOOKED_LATE) < spec.p_booked_late, 1).otherwise(0)
    second_of_day = below(spec.seed, _SALT_TIME, SECONDS_PER_DAY)
    seconds = (day - booked_late).cast("long") * SECONDS_PER_DAY + second_of_day
    return F.timestamp_seconds(seconds)


def _cents(seed: int) -> Column:
    """An amount in cents, spread over four orders of magnitude."""
    ceiling = choice(seed, _SALT_MAGNITUDE, AMOUNT_CEILINGS_CENTS).cast("long")
    return below(seed, _SALT_CENTS, ceiling - 1) + 1


def _ledger(tx: DataFrame, spec: SampleSpec) -> DataFrame:
    """The A rows as first recorded, with the internal columns `id`, `a_day` and `cents`."""
    seed = spec.seed
    return tx.select(
        "id",
        "a_day",
        (F.col("id") + 1).alias("TrxId"),
        _trx_time(spec).alias("TrxDT"),
        F.when(uniform(seed, _SALT_SIDE) < 0.45, "Credit").otherwise("Debit").alias("CreditDebit"),
        _cents(seed).alias("cents"),
        choice(seed, _SALT_ACCOUNT, ACCOUNT_NAMES).alias("AccountName"),
    )


def _corrected_cents(seed: int) -> Column:
    """A changed amount: lower (when possible) or higher than `cents`, never equal."""
    cents = F.col("cents")
    lower = below(seed, _SALT_CORRECTION_CENTS, F.greatest(cents - 1, F.lit(1).cast("long"))) + 1
    higher = cents + below(seed, _SALT_CORRECTION_CENTS, cents) + 1
    down = (uniform(seed, _SALT_CORRECTION_DOWN) < 0.5) & (cents > 1)
    return F.when(down, lower).otherwise(higher)


def _corrections(ledger: DataFrame, spec: SampleSpec) -> DataFrame:
    """The A rows recorded again 1-5 days later with a changed amount, if that day is in the history."""
    low, high = spec.correction_delay
    later = F.col("a_day") + low + below(spec.seed, _SALT_CORRECTION_DAY, high - low + 1).cast("int")
    return (
        ledger.where(uniform(spec.seed, _SALT_CORRECTED) < spec.p_corrected)
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
    band = uniform(seed, _SALT_BAND)
    expr: Column | None = None
    cumulative = 0.0
    for low, high, share in bands:
        cumulative += share
        value = F.lit(low) + below(seed, _SALT_DELAY, high - low + 1).cast("int")
        expr = F.when(band < cumulative, value) if expr is None else expr.when(band < cumulative, value)
    low, high, _ = bands[-1]
    last = F.lit(low) + below(seed, _SALT_DELAY, high - low + 1).cast("int")
    return expr.otherwise(last) if expr is not None else last


def _first_payments(tx: DataFrame, spec: SampleSpec) -> DataFrame:
    """One B row per transaction that has one; B rows due before the first day land on it (initial load)."""
    seed = spec.seed
    return tx.where(uniform(seed, _SALT_NO_B) >= spec.p_no_b).select(
        "id",
        (F.col("id") * 3 + 1).alias("SepaId"),
        (F.col("id") + 1).alias("TrxId"),
        choice(seed, _SALT_COUNTRY, COUNTRY_CODES).alias("CountryCode"),
        F.greatest(F.col("a_day") + _delay(seed, spec.delay_bands), F.lit(0)).alias("b_day"),
    )


def _second_payments(first: DataFrame, spec: SampleSpec) -> DataFrame:
    """A second B row, same transaction and country, for a share of the transactions with a B."""
    seed = spec.seed
    later = below(seed, _SALT_SECOND_DELAY, spec.second_b_max_delay + 1).cast("int")
    return first.where(uniform(seed, _SALT_TWO_B) < spec.p_two_b).select(
        "id",
        (F.col("SepaId") + 1).alias("SepaId"),
        "TrxId",
        "CountryCode",
        (F.col("b_day") + later).alias("b_day"),
    )


def _orphan_payments(tx: DataFrame, spec: SampleSpec) -> DataFrame:
    """B rows of transactions the ledger never records, TrxIds above ORPHAN_TRX_OFFSET."""
    seed = spec.seed
    return tx.where(uniform(seed, _SALT_ORPHAN) < spec.p_orphan_b).select(
        "id",
        (F.col("id") * 3 + 3).alias("SepaId"),
        (F.col("id") + 1 + ORPHAN_TRX_OFFSET).alias("TrxId"),
        choice(seed, _SALT_ORPHAN_COUNTRY, COUNTRY_CODES).alias("CountryCode"),
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
