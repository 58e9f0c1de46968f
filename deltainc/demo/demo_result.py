"""What the demo did (`DemoResult`, its feature part's `FeatureResult`): each day of its schedules, printed as a
table, and whether its promises held: a re-run changes no row, a reload gives the same rows (`same_rows`)."""

from __future__ import annotations

import datetime as dt
import io
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import DataFrame
from rich.console import Console
from rich.table import Table

from deltainc import pipeline
from deltainc.join.options import counted_types

__all__ = [
    "ChainResult",
    "COUNT_NAMES",
    "DemoDay",
    "DemoResult",
    "FeatureDay",
    "FeatureResult",
    "day_counts",
    "feature_table",
    "same_rows",
    "schedule_table",
]

# The columns of the demo's table: the full_outer job's outcomes and its too-late B rows.
COUNT_NAMES: tuple[str, ...] = (*(code.outcome for code in counted_types("full_outer")), "too_late")


@dataclass(frozen=True)
class DemoDay:
    """One day of the schedule (or the history before it: `first` to `day`): the rows loaded, and what the job's
    run did."""

    day: dt.date
    rows_a: int  # rows appended to A (the ledger) for this day
    rows_b: int  # rows appended to B (the payment engine) for this day
    windows: tuple[str, ...]  # output windows the run processed (none when a source had no rows yet)
    counts: dict[str, int]  # output rows of those windows by JoinType name (COUNT_NAMES)
    inserted: int
    updated: int
    deleted: int
    load_s: float  # seconds spent appending the day's partitions
    run_s: float  # seconds spent in pipeline.run (pipeline.backfill for the history)
    first: dt.date | None = None  # the history's first day, for the entry that loaded and caught up several days

    @property
    def label(self) -> str:
        """The day, or the history's days."""
        return self.day.isoformat() if self.first is None else f"{self.first}..{self.day}"


@dataclass(frozen=True)
class FeatureDay:
    """One day of the as-of job's schedule: its rows by outcome, and the provisional scores it replaced."""

    day: dt.date
    final: int  # transactions whose score is final (same_time, a_late, b_late)
    provisional: int  # transactions with the nearest score so far; a nearer one may still arrive
    waiting: int  # transactions without a score yet
    timed_out: int  # transactions that never got a score in the look-back
    replaced: int  # provisional scores replaced by a nearer score that arrived this day


@dataclass(frozen=True)
class FeatureResult:
    """What the as-of part of the demo did, and whether the reload gave the same feature table."""

    days: tuple[FeatureDay, ...]
    rows: int
    reload_equal: bool


@dataclass(frozen=True)
class ChainResult:
    """What the chain part of the demo did: the second job's rows, and whether its reload gave the same rows."""

    rows: int
    reload_equal: bool


@dataclass(frozen=True)
class DemoResult:
    """What the demo did and whether the two promises held."""

    root: Path
    days: tuple[DemoDay, ...]
    target_rows: int  # rows of the daily target at the end
    rerun_day: dt.date
    rerun_unchanged: bool  # re-running rerun_day left every row of the daily target as it was
    reload_equal: bool  # the one-shot reload of all days gave exactly the daily target's rows
    reload_s: float
    total_s: float
    features: FeatureResult | None = None  # the as-of job's part
    report: Path | None = None  # the daily job's report (`deltainc report`): its history as a page of charts
    chain: ChainResult | None = None  # the chain's second job, on demo_daily's final rows

    @property
    def ok(self) -> bool:
        """Both promises held (and the feature table's and the chain's reloads equalled their daily runs)."""
        parts = (self.features, self.chain)
        return self.rerun_unchanged and self.reload_equal and all(p is None or p.reload_equal for p in parts)

    @property
    def seconds_per_day(self) -> float:
        """Average wall time of one scheduled day (load plus run), the history's catch-up left out."""
        scheduled = [d for d in self.days if d.first is None]
        return sum(d.load_s + d.run_s for d in scheduled) / max(len(scheduled), 1)


def day_counts(reports: list[pipeline.WindowReport]) -> dict[str, int]:
    """The day's output rows by JoinType name, and its too-late B rows."""
    counts = {name: sum(r.counts.get(name, 0) for r in reports) for name in COUNT_NAMES}
    counts["too_late"] = sum(r.record.rows_too_late or 0 for r in reports)
    return counts


def schedule_table(result_days: tuple[DemoDay, ...]) -> str:
    """The schedule as a plain-text table: a row a day (the history's days in one), its loads, outcomes and commit."""
    table = Table(
        title="The history caught up in one run, then one run per day (max_window = 1)",
        title_justify="left",
        caption=(
            "inserted / deleted: the target rows the day's commit wrote and removed. A window replaces its slices "
            "of the target, so the rows still waiting from earlier days are deleted and written again (matched, "
            "timed out or still waiting): a day inserts more rows than it loaded."
        ),
        caption_justify="left",
    )
    table.add_column("day")
    for heading in ("A rows", "B rows", *COUNT_NAMES, "inserted", "updated", "deleted", "run s"):
        table.add_column(heading, justify="right")
    for d in result_days:
        counts = [str(d.counts[name]) for name in COUNT_NAMES] if d.windows else ["-"] * len(COUNT_NAMES)
        commit = (str(n) for n in (d.inserted, d.updated, d.deleted))
        table.add_row(d.label, str(d.rows_a), str(d.rows_b), *counts, *commit, f"{d.run_s:.1f}")
    return _as_text(table, 240)


def feature_table(days: tuple[FeatureDay, ...]) -> str:
    """The feature part's schedule as a plain-text table: its rows by outcome after each day's run."""
    table = Table(title="Feature table after each daily run (rows by outcome)", title_justify="left")
    table.add_column("run until")
    for heading in ("final", "provisional", "waiting", "timed_out", "replaced"):
        table.add_column(heading, justify="right")
    for d in days:
        values = (d.final, d.provisional, d.waiting, d.timed_out, d.replaced)
        table.add_row(d.day.isoformat(), *(str(v) for v in values))
    return _as_text(table, 160)


def same_rows(left: DataFrame, right: DataFrame) -> bool:
    """Equal as multisets of rows (duplicates count), columns matched by name."""
    right = right.select(*left.columns)
    return left.exceptAll(right).isEmpty() and right.exceptAll(left).isEmpty()


def _as_text(table: Table, width: int) -> str:
    """`table` as the terminal shows it `width` characters wide, without colour, as plain text."""
    buffer = io.StringIO()
    Console(file=buffer, width=width, force_terminal=False, color_system=None).print(table)
    return buffer.getvalue().rstrip("\n")
