"""The `growth` section: the daily run at every history size, where its time goes, and its goal."""

from __future__ import annotations

import statistics

from benchmarks.report.daily_points import files_read, per_size, read_cell
from benchmarks.report.results import Results
from benchmarks.report.tables import table
from benchmarks.report.verdicts import NOT_RUN, Verdict, at_most, judge
from benchmarks.scenarios.daily import PHASES, DailyPoint
from benchmarks.timing import Measurement, fmt_ratio, fmt_s, ratio

__all__ = ["growth_check", "growth_section"]


def growth_check(results: Results) -> Verdict:
    """The daily run's time at the largest D over the smallest (<= 1.3x), and its files read."""
    points = results.daily or []
    if len(points) < 2:
        return Verdict("needs two sizes" if points else NOT_RUN, "-")
    smallest, largest = points[0], points[-1]
    value = ratio(largest.daily, smallest.daily)
    files = files_read(largest) / max(1, files_read(smallest))
    text = f"time {fmt_ratio(value)} from D = {smallest.days} to D = {largest.days}, files read {files:.2f}x"
    return judge([(text, at_most(value, 1.3))])


def _window_s(m: Measurement) -> str:
    """Median of the WindowReport durations: the time spent in the window itself (no set-up, no lock)."""
    durations = sorted(o.record.duration_s for o in m.outputs if o is not None)
    if not durations:
        return "-"
    return fmt_s(durations[len(durations) // 2])


def _phase_table(points: list[DailyPoint]) -> list[str]:
    """Where a daily run's time goes: the median seconds of each phase (from the pipeline's step marks)."""
    profiled = [p for p in points if p.phases]
    if not profiled:
        return []
    rows = []
    for name in PHASES:
        rows.append([name, *[fmt_s(statistics.median(r[name] for r in p.phases)) for p in profiled]])
    totals = [fmt_s(statistics.median(sum(r.values()) for r in p.phases)) for p in profiled]
    rows.append(["**whole daily run**", *totals])
    header = ["phase of the daily run (median)", *[f"D = {p.days}" for p in profiled]]
    return [
        "Where the daily run's time goes, from the step marks the pipeline reports (`on_step`): the window "
        "begins after the controller has read the sources' latest RecDate, taken the lock and read the watermark.",
        "",
        *table(header, rows),
    ]


def growth_section(results: Results) -> list[str]:
    """The daily run at every history size, where its time goes, and how it grows."""
    points = results.daily or []
    if not points:
        return ["_Not run._"]
    lines = [
        "The same daily run at every history size. `rerun of day D` is `pipeline.rerun(job, day D)` after the "
        "day was processed: the same reads and the forward-only MERGE's planning, but nothing to write.",
        "",
        *per_size(
            points,
            {
                "daily run (first time)": lambda p: p.daily.cell(),
                "of which the window": lambda p: _window_s(p.daily),
                "rerun of day D": lambda p: p.rerun.cell(),
                "Spark jobs daily / rerun": lambda p: f"{p.daily.count_cell()} / {p.rerun.count_cell()}",
                "files read A / B / target": read_cell,
                "target rows after day D": lambda p: str(sum(p.counts.values())),
                "set-up (untimed)": lambda p: fmt_s(p.build_s),
            },
        ),
        "",
        *_phase_table(points),
    ]
    reach = int(results.options.get("look_back", 0)) + int(results.options.get("max_wait", 0))
    clipped = [p.days for p in points if p.days <= reach]
    if clipped:
        lines += [
            "",
            f"Note: at D = {', '.join(map(str, clipped))} the daily run's read window [D - lb - mw, D] starts before "
            "day 1, so it reads fewer files than a daily run on a longer history.",
        ]
    if len(points) > 1:
        first, last = points[0], points[-1]
        lines += [
            "",
            f"Growth from D = {first.days} to D = {last.days}: time {fmt_ratio(ratio(last.daily, first.daily))}, "
            f"files read {files_read(last) / max(1, files_read(first)):.2f}x, rerun time "
            f"{fmt_ratio(ratio(last.rerun, first.rerun))}.",
        ]
    return lines
