"""The `floor` section: the daily run against reading only what it needs and against joining its window and
appending it, and its goal."""

from __future__ import annotations

from benchmarks.report.daily_points import per_size, scans_cell
from benchmarks.report.results import Results
from benchmarks.report.verdicts import Verdict, at_most, judge
from benchmarks.timing import fmt_ratio, ratio

__all__ = ["floor_check", "floor_section"]


def floor_check(results: Results) -> Verdict:
    """The daily run over the floor 'join the window, append it' at the largest D (<= 2x)."""
    points = results.daily or []
    largest = points[-1] if points else None
    if largest is None or largest.floor_append is None:
        return judge([])
    value = ratio(largest.daily, largest.floor_append)
    text = (
        f"daily / (join + append) = {fmt_ratio(value)} at D = {largest.days}; daily / read-only floor = "
        f"{fmt_ratio(ratio(largest.daily, largest.floor))}"
    )
    return judge([(text, at_most(value, 2))])


def floor_section(results: Results) -> list[str]:
    """The daily run against reading only what it needs, and against joining its window and appending it."""
    points = [p for p in results.daily or [] if p.floor is not None]
    if not points:
        return ["_Not run._"]
    return [
        '`spark.read.format("delta")` of A with RecDate in [D - mw, D] and B in [D - lb - mw, D], read in full '
        "(every column of every row). `floor + the target slice` also reads the waiting rows at D - 1 that a daily "
        "run replaces. `join the window, append` is what any incremental job must do at least: the engine's join "
        "of day D's window over the pruned sources, appended to a Delta table (no lock, no state, no replacement "
        "of waiting rows).",
        "",
        *per_size(
            points,
            {
                "floor: read A, B partitions": lambda p: p.floor.cell() if p.floor else "-",
                "floor + the target slice": lambda p: p.floor_target.cell() if p.floor_target else "-",
                "floor: join the window, append to Delta": lambda p: p.floor_append.cell() if p.floor_append else "-",
                "deltainc daily run": lambda p: p.daily.cell(),
                "daily / floor": lambda p: fmt_ratio(ratio(p.daily, p.floor)),
                "daily / (floor + target)": lambda p: fmt_ratio(ratio(p.daily, p.floor_target)),
                "daily / (join + append)": lambda p: fmt_ratio(ratio(p.daily, p.floor_append)),
                "floor files A / B": lambda p: scans_cell(p.floor_stats),
                "deltainc files A / B": lambda p: f"{p.report.record.files_read_a} / {p.report.record.files_read_b}",
            },
        ),
    ]
