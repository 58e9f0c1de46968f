"""How far back should a job look, and how long should it wait? Measured on the sources' history.

`profile_job` counts, for every pair of an A row and a B row whose join keys match (the job's `join_cols`
and `join_cond`), the delay `B.RecDate - A.RecDate` in the job's `time_uom`, as an exact histogram. From it
follow the percentiles of the delay and the `look_back_time` / `max_waiting_time` that would have matched
99 %, 99.9 % and 100 % of the historic pairs, next to what the job's current settings match.
`plot_profile` draws the histogram, `format_profile` writes it up for a terminal.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from deltainc.errors import ConfigError, InternalError
from deltainc.join.join_spec import check_join
from deltainc.join.match_condition import match_condition
from deltainc.join.time_units import TimeUnit, day_units
from deltainc.join.unit_columns import source_filter, unit_index
from deltainc.pipeline.delta.sources import read_table
from deltainc.pipeline.job.job_config import JobConfig

__all__ = [
    "PERCENTILES",
    "COVERAGES",
    "Suggestion",
    "DelayProfile",
    "profile_job",
    "profile_from_histogram",
    "plot_profile",
    "format_profile",
]

PERCENTILES: tuple[str, ...] = ("50", "90", "99", "99.9", "100")
COVERAGES: tuple[str, ...] = ("99", "99.9", "100")
_DELAY = "__di_delay"
_MAX_TABLE_ROWS = 40


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
        if self.pairs == 0:
            return None
        inside = sum(n for d, n in self.histogram if -look_back_time <= d <= max_waiting_time)
        return inside / self.pairs

    def suggestion(self, coverage: str) -> Suggestion:
        """The suggestion for `coverage` ("99", "99.9" or "100")."""
        for item in self.suggestions:
            if item.coverage == coverage:
                return item
        raise ConfigError(f"coverage: expected one of {', '.join(COVERAGES)} (with pairs measured), got {coverage!r}")


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
            share = sum(n for d, n in bins if -look_back <= d <= wait) / pairs
            suggestions.append(Suggestion(q, look_back, wait, share))
        current = sum(n for d, n in bins if -lb <= d <= mw) / pairs
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


def profile_job(
    spark: SparkSession, job: JobConfig, start: dt.date | None = None, end: dt.date | None = None
) -> DelayProfile:
    """Measure the delay `B.RecDate - A.RecDate` over every pair of rows with matching keys, in one Spark job.

    The pairs are those the job's join would consider without any time limit: `join_cols` equal (NULL keys
    never match) and `join_cond` true over the aliases; only A rows with RecDate in [start, end] (inclusive,
    either bound optional) are taken, B rows of any RecDate. Rows with a NULL RecDate are left out. The
    histogram (delay -> pairs, plus the count of A rows without any B) is grouped in Spark and collected; the
    percentiles and suggestions are computed from it exactly (see DelayProfile).
    """
    if start is not None and end is not None and start > end:
        raise ConfigError(f"profile window: start {start} is after end {end}")
    join = job.join
    if job.source_b is None or join.how is None:
        raise ConfigError(
            f"profile: job {job.name!r} has [[features]]; profile a feature source as a two-source job of its own"
        )
    uom, inc = join.time_uom, join.inc_col
    df_a = read_table(spark, job.source_a, "source_a")
    df_b = read_table(spark, job.source_b, "source_b")
    settings = join.engine_settings()
    spec = check_join(
        df_a,
        df_b,
        join.how,
        join.join_cols,
        join.join_cond,
        join.look_back_time,
        join.max_waiting_time,
        None,
        None,
        settings,
    )  # the job's own validation, with its messages
    first = None if start is None else day_units(start, uom)[0]
    last = None if end is None else day_units(end, uom)[1]
    a = df_a.where(source_filter(df_a, inc, uom, first, last)).alias(join.alias_a)
    b = df_b.where(F.col(f"`{inc}`").isNotNull()).alias(join.alias_b)
    condition = match_condition(spec, None)  # the job's keys and join_cond, as its join matches rows
    a_rec, b_rec = F.col(f"{join.alias_a}.`{inc}`"), F.col(f"{join.alias_b}.`{inc}`")
    a_type, b_type = df_a.schema[inc].dataType, df_b.schema[inc].dataType
    delay = unit_index(b_rec, b_type, uom) - unit_index(a_rec, a_type, uom)
    rows = a.join(b, condition, "left").groupBy(delay.alias(_DELAY)).count().collect()
    counted = {int(r[_DELAY]): int(r["count"]) for r in rows if r[_DELAY] is not None}
    unmatched = sum(int(r["count"]) for r in rows if r[_DELAY] is None)
    return profile_from_histogram(job, counted, unmatched, start, end)


def _percent(share: float | None) -> str:
    if share is None:
        return "-"
    text = f"{100 * share:.2f}%"
    return ">99.99%" if text == "100.00%" and share < 1 else text


def format_profile(profile: DelayProfile, job: JobConfig) -> str:
    """A plain-text summary: pairs, percentiles, the histogram (when short), suggestions and current settings."""
    unit = f"{profile.time_uom}s"
    if profile.start is None and profile.end is None:
        scope = "all A rows"
    else:
        scope = f"A rows with {job.join.inc_col} in [{profile.start or '-inf'}, {profile.end or '+inf'}]"
    lines = [
        f"Delay profile of job {job.name}: B.{job.join.inc_col} - A.{job.join.inc_col} in {unit}, {scope}",
        f"  {profile.pairs} pair(s) of rows with matching keys; "
        f"{profile.unmatched_a} A row(s) with no B row at all (no setting matches those)",
    ]
    if not profile.pairs:
        lines.append(
            f"  no pairs to measure; current look_back_time {profile.look_back_time}, "
            f"max_waiting_time {profile.max_waiting_time}"
        )
        return "\n".join(lines)
    lines.append("  percentiles: " + ", ".join(f"p{p} {v:+d}" for p, v in profile.percentiles.items()))
    if len(profile.histogram) <= _MAX_TABLE_ROWS:
        lines.append(f"  {'delay':>7} {'pairs':>9} {'share':>7} {'cumulative':>10}")
        seen = 0
        for d, n in profile.histogram:
            seen += n
            lines.append(f"  {d:>+7d} {n:>9d} {_percent(n / profile.pairs):>7} {_percent(seen / profile.pairs):>10}")
    else:
        low, high = profile.histogram[0][0], profile.histogram[-1][0]
        lines.append(f"  {len(profile.histogram)} distinct delays from {low:+d} to {high:+d} (see the chart)")
    lines.append(f"  {'to match':<12} {'look_back_time':>14} {'max_waiting_time':>16} {'matches':>8}")
    for s in profile.suggestions:
        lines.append(
            f"  {s.coverage + '%':<12} {s.look_back_time:>14d} {s.max_waiting_time:>16d} {_percent(s.matched_share):>8}"
        )
    lines.append(
        f"  {'current':<12} {profile.look_back_time:>14d} {profile.max_waiting_time:>16d} "
        f"{_percent(profile.current_share):>8}"
    )
    return "\n".join(lines)


def plot_profile(profile: DelayProfile, path: Path, job: JobConfig) -> Path:
    """Write a PNG bar chart of the delays, with the job's look back and max wait as vertical lines."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lb, mw = job.join.look_back_time, job.join.max_waiting_time
    figure = Figure(figsize=(10, 5), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    counts = dict(profile.histogram)
    if counts:
        low, high = min(min(counts), -lb), max(max(counts), mw)
        delays = list(range(low, high + 1))
        heights = [counts.get(d, 0) for d in delays]
        colours = ["tab:blue" if -lb <= d <= mw else "tab:red" for d in delays]
        axes.bar(delays, heights, width=0.8, color=colours)
        axes.set_xlim(low - 1, high + 1)
    else:
        axes.text(0.5, 0.5, "no pairs with matching keys", ha="center", va="center", transform=axes.transAxes)
    axes.axvline(-lb - 0.5, color="tab:orange", linestyle="--", label=f"look_back_time = {lb}")
    axes.axvline(mw + 0.5, color="tab:green", linestyle="--", label=f"max_waiting_time = {mw}")
    axes.set_xlabel(f"B.{job.join.inc_col} - A.{job.join.inc_col} ({profile.time_uom}s)")
    axes.set_ylabel("pairs")
    share = _percent(profile.current_share)
    axes.set_title(f"{job.name}: {profile.pairs} pairs, current settings match {share} (red bars: missed)")
    axes.legend(loc="upper right")
    figure.tight_layout()
    figure.savefig(path, format="png")
    return path
