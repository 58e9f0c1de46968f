"""A delay histogram's profile (`DelayProfile`): its percentiles and the narrowest look_back_time /
max_waiting_time that would have matched 99 %, 99.9 % and 100 % of the historic pairs, next to what the job's
current settings match. Pure: `delays.profile_job` counts the histogram with Spark."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from deltainc.errors import ConfigError, InternalError
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.time_units import TimeUnit

__all__ = ["PERCENTILES", "COVERAGES", "Suggestion", "DelayProfile", "profile_from_histogram"]

PERCENTILES: tuple[str, ...] = ("50", "90", "99", "99.9", "100")
COVERAGES: tuple[str, ...] = ("99", "99.9", "100")


@dataclass(frozen=True)
class Suggestion:
    """The narrowest settings that match at least `coverage` percent of the historic pairs."""

    coverage: str  # the percentage aimed at, as written: "99", "99.9", "100"
    look_back_time: int
    max_waiting_time: int
    matched_share: float  # the share of all pairs these settings match (>= coverage / 100)


@dataclass(frozen=True)
class DelayProfile:
    """The measured distribution of `B.RecDate - A.RecDate` over the pairs of rows with matching keys.

    A pair is matched by settings (lb, mw) exactly when `-lb <= delay <= mw`: B may arrive up to lb units
    before A (look back, the negative side of the delay) and up to mw units after it (wait, the positive
    side). The suggestion for a coverage q (0.99, 0.999, 1) is the narrowest such window that contains at
    least q of all pairs (at least ceil(q * pairs) of them):

    - among every look_back_time L in {0} and {-d for the negative delays d}, take the smallest
      max_waiting_time W in {0} and {d for the positive delays d} with `-L <= delay <= W` for enough pairs;
    - keep the (L, W) with the smallest L + W (the width of the sliding join window, which sets how much of
      B a run reads: from s - lb - mw), and on a tie the smaller W (the shorter wait for the consumer).

    Pairs with delay 0 need neither. With q = 1 this is simply look_back_time = -min(delay) and
    max_waiting_time = max(delay) (each at least 0). `matched_share` is the exact share the suggestion
    matches, at least q.

    A percentile p is the smallest delay d such that at least p % of the pairs have a delay <= d (nearest
    rank), so percentile 100 is the largest delay.
    """

    job: str
    time_uom: TimeUnit
    start: dt.date | None  # A rows restricted to RecDate in [start, end]; None = unbounded
    end: dt.date | None
    histogram: tuple[tuple[int, int], ...]  # (delay, pairs), sorted by delay; only delays that occur
    pairs: int
    unmatched_a: int  # A rows (in the range) without any B row with matching keys: no setting matches them
    percentiles: dict[str, int]  # keyed by PERCENTILES; empty when there are no pairs
    suggestions: tuple[Suggestion, ...]  # one per COVERAGES; empty when there are no pairs
    look_back_time: int  # the job's current settings
    max_waiting_time: int
    current_share: float | None  # the share of pairs the current settings match; None without pairs

    def share_matched(self, look_back_time: int, max_waiting_time: int) -> float | None:
        """The share of historic pairs that settings (look_back_time, max_waiting_time) would match."""
        return _share(self.histogram, look_back_time, max_waiting_time) if self.pairs else None

    def suggestion(self, coverage: str) -> Suggestion:
        """The suggestion for `coverage` ("99", "99.9" or "100")."""
        for item in self.suggestions:
            if item.coverage == coverage:
                return item
        raise ConfigError(f"coverage: expected one of {', '.join(COVERAGES)} (with pairs measured), got {coverage!r}")


def _share(bins: Sequence[tuple[int, int]], look_back_time: int, max_waiting_time: int) -> float:
    """The share of the pairs of `bins` (delay, pairs; some) that -look_back_time <= delay <= max_waiting_time holds."""
    return sum(n for d, n in bins if -look_back_time <= d <= max_waiting_time) / sum(n for _, n in bins)


def _rank_value(sorted_values: list[tuple[int, int]], count: int, level: Fraction) -> int:
    """The value at nearest rank ceil(level * count) of a histogram of (value, n) sorted by value."""
    rank = max(1, math.ceil(level * count))
    seen = 0
    for value, n in sorted_values:
        seen += n
        if seen >= rank:
            return value
    return sorted_values[-1][0]


def _narrowest(bins: list[tuple[int, int]], level: Fraction) -> tuple[int, int]:
    """The (look_back_time, max_waiting_time) of the narrowest window [-L, W] holding `level` of the pairs."""
    pairs = sum(n for _, n in bins)
    need = max(1, math.ceil(level * pairs))
    at_zero = sum(n for d, n in bins if d == 0)
    backs = [0] + sorted(-d for d, _ in bins if d < 0)
    waits = [(0, 0)]  # (W, positive pairs with delay <= W), W ascending
    for d, n in sorted((d, n) for d, n in bins if d > 0):
        waits.append((d, waits[-1][1] + n))
    best: tuple[int, int] | None = None
    for look_back in backs:
        have = at_zero + sum(n for d, n in bins if -look_back <= d < 0)
        wait = next((w for w, covered in waits if have + covered >= need), None)
        if wait is not None and (best is None or (look_back + wait, wait) < (best[0] + best[1], best[1])):
            best = (look_back, wait)
    if best is None:  # pragma: no cover - the widest window holds every pair
        raise InternalError("profile: no window holds the pairs")
    return best


def profile_from_histogram(
    job: JobConfig,
    histogram: dict[int, int],
    unmatched_a: int = 0,
    start: dt.date | None = None,
    end: dt.date | None = None,
) -> DelayProfile:
    """The profile of an already counted histogram (delay -> pairs); pure, no Spark."""
    if any(n < 0 for n in histogram.values()) or unmatched_a < 0:
        raise ConfigError("histogram: counts must be >= 0")
    bins = sorted((int(d), int(n)) for d, n in histogram.items() if n > 0)
    pairs = sum(n for _, n in bins)
    lb, mw = job.join.look_back_time, job.join.max_waiting_time
    percentiles: dict[str, int] = {}
    suggestions: list[Suggestion] = []
    current: float | None = None
    if pairs:
        for p in PERCENTILES:
            percentiles[p] = _rank_value(bins, pairs, Fraction(p) / 100)
        for q in COVERAGES:
            level = Fraction(q) / 100
            look_back, wait = _narrowest(bins, level)
            suggestions.append(Suggestion(q, look_back, wait, _share(bins, look_back, wait)))
        current = _share(bins, lb, mw)
    return DelayProfile(
        job=job.name,
        time_uom=job.join.time_uom,
        start=start,
        end=end,
        histogram=tuple(bins),
        pairs=pairs,
        unmatched_a=unmatched_a,
        percentiles=percentiles,
        suggestions=tuple(suggestions),
        look_back_time=lb,
        max_waiting_time=mw,
        current_share=current,
    )
