"""What a chart of the report is, whatever draws it: labelled points on x, named series of numbers. No I/O here.

The HTML page (`svg.py`, `page.py`) and the images of `--png` (`png.py`) draw the same `Chart`, so the two
cannot show different numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from deltainc.text_enum import TextEnum

__all__ = ["Kind", "Fold", "Series", "Chart"]


class Kind(TextEnum):
    """How a chart draws its series: bars stacked on each other (parts of one whole), or lines side by side."""

    STACKED = "stacked"
    LINES = "lines"


class Fold(TextEnum):
    """How a series' values of several points are folded into one when a chart is aggregated: summed (rows
    written, files read, seconds) or the last one kept (a state at a point in time: the backlog, the lag)."""

    SUM = "sum"
    LAST = "last"


@dataclass(frozen=True)
class Series:
    """One named row of numbers, one per point of its chart's x; None where the run log does not know it."""

    name: str
    values: tuple[float | None, ...]
    fold: Fold = Fold.SUM


@dataclass(frozen=True)
class Chart:
    """One chart: its id on the page, title, unit of y, the points' labels, the series, and per point a mark
    ("failed", "cancelled", "took over") or None; `note` says how the points were aggregated, if they were."""

    key: str
    title: str
    unit: str
    x: tuple[str, ...]
    series: tuple[Series, ...]
    kind: Kind
    marks: tuple[str | None, ...] = ()
    note: str = ""

    def total(self, index: int) -> float:
        """The sum of the series at point `index` (unknown values count 0)."""
        return sum(s.values[index] or 0.0 for s in self.series)

    @property
    def empty(self) -> bool:
        """No point, or no known value at any point."""
        return not self.x or all(v is None for s in self.series for v in s.values)
