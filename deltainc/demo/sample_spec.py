"""SampleSpec: the parameters of a generated pair of sources (days, rows, shares of each late-arrival case)."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

from deltainc.errors import ConfigError

__all__ = ["DEFAULT_DELAY_BANDS", "ORPHAN_TRX_OFFSET", "SampleSpec"]

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
