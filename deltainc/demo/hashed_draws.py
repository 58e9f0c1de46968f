"""Deterministic pseudo-random columns drawn from a row's `id`, a seed and a salt: the same on every run,
cluster and partitioning (the sample data's only source of randomness)."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

__all__ = ["hash_of_id", "uniform", "below", "choice"]

_MASK_53 = (1 << 53) - 1
_TWO_53 = float(1 << 53)


def hash_of_id(seed: int, salt: int) -> Column:
    """A 64-bit hash of the row's id, the seed and the salt."""
    return F.xxhash64(F.col("id"), F.lit(seed), F.lit(salt))


def uniform(seed: int, salt: int) -> Column:
    """A pseudo-random double in [0, 1)."""
    return hash_of_id(seed, salt).bitwiseAND(F.lit(_MASK_53)) / F.lit(_TWO_53)


def below(seed: int, salt: int, bound: int | Column) -> Column:
    """A pseudo-random long in [0, bound)."""
    return F.pmod(hash_of_id(seed, salt), bound if isinstance(bound, Column) else F.lit(bound).cast("long"))


def choice(seed: int, salt: int, values: tuple[str, ...] | tuple[int, ...]) -> Column:
    """One of `values`, each position equally likely."""
    position = (below(seed, salt, len(values)) + 1).cast("int")
    return F.element_at(F.array(*[F.lit(v) for v in values]), position)
