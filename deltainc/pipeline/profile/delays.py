"""How far back should a job look, and how long should it wait? Measured on the sources' history.

`profile_job` counts, for every pair of an A row and a B row whose join keys match (the job's `join_cols`
and `join_cond`), the delay `B.RecDate - A.RecDate` in the job's `time_uom`, as an exact histogram. From it
follow the percentiles of the delay and the `look_back_time` / `max_waiting_time` that would have matched
99 %, 99.9 % and 100 % of the historic pairs, next to what the job's current settings match.
`plot_profile` draws the histogram, `format_profile` writes it up for a terminal; the profile of a counted
histogram is `histogram.py`'s.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from deltainc.errors import ConfigError
from deltainc.join.columns import match_condition, source_filter, unit_index
from deltainc.join.join_spec import check_join
from deltainc.join.strategy import shuffled
from deltainc.pipeline.delta.sources import read_table
from deltainc.pipeline.job.chain_suffixes import chain_suffixes
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.profile.histogram import DelayProfile, profile_from_histogram
from deltainc.time_units import day_units

__all__ = ["profile_job", "format_profile", "plot_profile"]

_DELAY = "__di_delay"
_MAX_TABLE_ROWS = 40


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
    uom, inc_a, inc_b = join.time_uom, job.inc_col_of("source_a"), job.inc_col_of("source_b")
    df_a = read_table(spark, job.source_a, "source_a")
    df_b = read_table(spark, job.source_b, "source_b")
    own = {"inc_col_name_a": job.source_a.inc_col, "inc_col_name_b": job.source_b.inc_col}  # each source's column
    settings = chain_suffixes(job, df_a.columns, df_b.columns, join.engine_settings().model_copy(update=own))
    # The job's own validation, with its messages.
    spec = check_join(df_a, df_b, join.how, join.join_cols, join.join_cond, join.look_back_time,
                      join.max_waiting_time, None, None, settings)  # fmt: skip
    first = None if start is None else day_units(start, uom)[0]
    last = None if end is None else day_units(end, uom)[1]
    a = df_a.where(source_filter(df_a, inc_a, uom, first, last)).alias(settings.alias_a)
    b = df_b.where(F.col(f"`{inc_b}`").isNotNull()).alias(settings.alias_b)
    condition = match_condition(spec, None)  # the job's keys and join_cond, as its join matches rows
    a_rec, b_rec = F.col(f"{settings.alias_a}.`{inc_a}`"), F.col(f"{settings.alias_b}.`{inc_b}`")
    a_type, b_type = df_a.schema[inc_a].dataType, df_b.schema[inc_b].dataType
    delay = unit_index(b_rec, b_type, uom) - unit_index(a_rec, a_type, uom)
    rows = shuffled(a).join(b, condition, "left").groupBy(delay.alias(_DELAY)).count().collect()
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
