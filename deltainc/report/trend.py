"""The small trend `status` prints under its table of runs: sparklines of the backlog, rows by outcome and
durations over the last runs, gathered by the report's own functions so that the text and the page agree. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from deltainc.report.series import Row, open_rows, windows_of

__all__ = ["BLOCKS", "sparkline", "trend_lines"]

BLOCKS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float]) -> str:
    """One block character per value, scaled from the smallest to the largest (all equal: the lowest block).

    >>> sparkline([0, 5, 10])
    '▁▅█'
    """
    if not values:
        return ""
    low, high = min(values), max(values)
    span = high - low
    return "".join(BLOCKS[0 if span == 0 else round((v - low) / span * (len(BLOCKS) - 1))] for v in values)


def _line(name: str, values: Sequence[float], unit: str = "") -> tuple[str, str]:
    def shown(value: float) -> str:
        return f"{value:.1f}" if unit == "s" else f"{value:,.0f}"

    return name, f"{sparkline(values)}  {shown(values[0])} -> {shown(values[-1])}{unit and ' ' + unit}"


def trend_lines(rows: Sequence[Row], outcomes: Sequence[str]) -> list[tuple[str, str]]:
    """(name, text) lines over `rows` (newest first, as status reads them): the backlog and each of `outcomes`
    per window that moved the watermark, and every run's duration, oldest to newest. Empty without a window."""
    oldest_first = list(reversed(rows))
    windows = windows_of(oldest_first)
    lines: list[tuple[str, str]] = []
    if windows:
        lines.append(_line("backlog", [float(open_rows(w)) for w in windows]))
        for name in outcomes:
            values = [float(w.get(f"rows_{name}") or 0) for w in windows]  # type: ignore[arg-type]
            if any(values):
                lines.append(_line(name, values))
    durations = [float(r.get("duration_s") or 0.0) for r in oldest_first]  # type: ignore[arg-type]
    if durations:
        lines.append(_line("duration", durations, "s"))
    return lines
