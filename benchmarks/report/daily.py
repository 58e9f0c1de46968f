"""The `daily` section: the daily run against the naive full recompute, and its goal."""

from __future__ import annotations

from benchmarks.report.daily_points import per_size, read_cell, scans_cell
from benchmarks.report.results import Results
from benchmarks.report.tables import yes
from benchmarks.report.verdicts import Verdict, at_least, judge
from benchmarks.scenarios.daily import DailyPoint
from benchmarks.timing import fmt_ratio, ratio

__all__ = ["daily_check", "daily_section"]


def daily_check(results: Results) -> Verdict:
    """naive / daily at the largest D (>= 10x) and at the smallest (> 1x); Delta commits of one daily run (<= 3)."""
    points = [p for p in results.daily or [] if p.naive is not None]
    if not points:
        return judge([])
    smallest, largest = points[0], points[-1]
    value = ratio(largest.naive, largest.daily)
    parts = [(f"naive / daily = {fmt_ratio(value)} at D = {largest.days}", at_least(value, 10))]
    if smallest is not largest:
        value = ratio(smallest.naive, smallest.daily)
        parts.append((f"{fmt_ratio(value)} at D = {smallest.days}", None if value is None else value > 1))
    if largest.commits:
        total = sum(largest.commits)
        parts.append((f"{total} Delta commits: {' / '.join(map(str, largest.commits))}", total <= 3))
    return judge(parts)


def _jobs_cell(point: DailyPoint) -> str:
    naive = point.naive.count_cell() if point.naive else "-"
    return f"{point.daily.count_cell()} / {naive}"


def _commits_cell(point: DailyPoint) -> str:
    return " / ".join(map(str, point.commits)) or "-"


def _write_cell(point: DailyPoint) -> str:
    r = point.report.record
    return (
        f"{r.rows_inserted} / {r.rows_deleted}, {r.target_files_added} / {r.target_files_removed}, "
        f"{r.target_rows_copied}, {r.target_deletion_vectors} ({r.target_write})"
    )


def daily_section(results: Results) -> list[str]:
    """The daily run against the naive full recompute, per history size, and whether their targets agree."""
    points = [p for p in results.daily or [] if p.naive is not None]
    if not points:
        return ["_Not run._"]
    lines = [
        "The naive job reads every row with RecDate <= day D of A and B, joins them with a plain left join on "
        "TrxId with B.RecDate in [A.RecDate - lb, A.RecDate + mw], computes the outcome columns as of day D and "
        "overwrites a Delta target. The deltainc daily run is `pipeline.run(job, until=day D)` with the watermark "
        "at day D - 1 (first-time runs; the target, the run log and the lock table are restored with Delta "
        "RESTORE between repetitions; one untimed warm-up run precedes the first size). Commits are counted on "
        "one more untimed first-time run; `nothing pending` is `pipeline.run` again once day D is processed.",
        "",
        *per_size(
            points,
            {
                "deltainc daily run": lambda p: p.daily.cell(),
                "naive full recompute": lambda p: p.naive.cell() if p.naive else "-",
                "naive / daily": lambda p: fmt_ratio(ratio(p.naive, p.daily)),
                "files read deltainc A / B / target": read_cell,
                "files read naive A / B": lambda p: scans_cell(p.naive_stats),
                "Spark jobs deltainc / naive": _jobs_cell,
                "Delta commits per daily run: target / run log / lock": _commits_cell,
                "target write: rows inserted / deleted, files added / removed, rows copied, deletion vectors": (
                    _write_cell
                ),
                "run with nothing pending": lambda p: p.nothing_pending.cell() if p.nothing_pending else "-",
            },
        ),
    ]
    for p in points:
        c = p.naive_check
        if c is None:
            continue
        lines.append("")
        lines.append(
            f"Check at D = {p.days}: the naive target equals deltainc's target after the day-{p.days} run: "
            f"{yes(c.equal)} ({c.rows_left} vs {c.rows_right} rows; {c.only_left} only in naive, "
            f"{c.only_right} only in deltainc)."
        )
    return lines
