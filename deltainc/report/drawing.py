"""A chart drawn: as inline SVG for the page, written by hand (no script, no font, no request; each bar or point
says its numbers on hover, an SVG `<title>`), and as a PNG image for `--png`, with matplotlib.

Why by hand: the page must open from a file without a network and be written in well under the 2 s a report
may take. A plotting library that writes offline HTML (Plotly, Bokeh) inlines 1-4 MB of JavaScript per page
and takes 0.3-1 s to import; matplotlib's SVG has no hover and costs its import and a draw per chart. The
charts here are bars and lines over a few hundred points (`charts.aggregate` folds more), which a hundred lines
of SVG draw; the numbers are also in a table beside each chart. matplotlib (already a dependency) is imported
only when images are asked for.

A chart's threshold lines (`Chart.lines`) are drawn the same way whatever the chart: dashed across it in their
level's colour (`LEVELS`), and the y axis reaches the highest of them, so that every line the legend names is seen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from deltainc.report.charts import Chart, Kind

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "PALETTE",
    "MARK",
    "LEVELS",
    "DASHES",
    "CHAR_WIDTH",
    "color",
    "short_label",
    "x_ticks",
    "chart_svg",
    "figure_of",
    "write_pngs",
]

PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#76b7b2",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
WIDTH, HEIGHT = 760, 240
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 14, 40
DOTS = 60  # a line chart of at most this many points also draws a dot at each
MARK = "#d62728"  # failed, cancelled and taken-over runs
LEVELS = {"warn": "#daa520", "error": "#b2182b"}  # a threshold line's colour by its level: amber, dark red
DASHES = "8,4"  # a threshold line's dashes, longer than a mark's (3,3): across the chart, not up it
CHAR_WIDTH = 6.6  # px, at least the width of a tick label's widest character (a digit at 10px) in common fonts
GAP = 12.0  # px between two tick labels


def color(index: int) -> str:
    """The colour of a chart's `index`-th series (the legend and the PNG use the same)."""
    return PALETTE[index % len(PALETTE)]


def _number(value: float) -> str:
    """A tick or hover number: whole numbers as they are, others with two decimals, small ones with 3 digits."""
    if float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.2f}" if abs(value) >= 1 else f"{value:.3g}"


def _tick(value: float) -> str:
    """An axis label, short enough for the margin: 1.2M, 111k, 950, 0.5."""
    if abs(value) >= 1_000_000:
        return f"{value / 1_000_000:.3g}M"
    if abs(value) >= 10_000:
        return f"{value / 1000:.3g}k"
    return _number(value) if abs(value) < 1 or float(value).is_integer() else f"{value:.1f}"


def _top(chart: Chart) -> float:
    if chart.kind is Kind.STACKED:
        highest = max((chart.total(i) for i in range(len(chart.x))), default=0.0)
    else:
        highest = max((v for s in chart.series for v in s.values if v is not None), default=0.0)
    highest = max([highest, *(line.value for line in chart.lines)])
    return highest if highest > 0 else 1.0


def _tip(chart: Chart, index: int) -> str:
    """The numbers of one point, as its hover text."""
    parts = [f"{s.name} {_number(v)}" for s in chart.series if (v := s.values[index]) is not None]
    mark = chart.marks[index] if chart.marks else None
    return "; ".join([chart.x[index], *parts, *([mark] if mark else [])])


def short_label(label: str) -> str:
    """A point's label as a tick shows it: a time without its zero seconds, 'T' as a space; a window's two ends so.

    >>> short_label("2025-03-01T05:00:00..2025-03-01T07:00:00")
    '2025-03-01 05:00..2025-03-01 07:00'
    """
    return "..".join(
        part.removesuffix(":00").replace("T", " ") if len(part) == 19 else part for part in label.split("..")
    )


def x_ticks(labels: tuple[str, ...], step: float) -> list[tuple[float, str]]:
    """The x axis's tick labels as (left edge, text): the first, the last, then the middles of the gaps, each kept
    only where it stays inside the chart and `GAP` away from every label kept before it (widths estimated at
    `CHAR_WIDTH` a character), so that no two labels overlap.

    >>> x_ticks(("2025-03-01", "2025-03-02"), 300.0)
    [(173.0, '2025-03-01'), (473.0, '2025-03-02')]
    """
    n = len(labels)
    order = [0, n - 1] if n > 1 else [0] if n else []
    spans = [(0, n - 1)]
    while spans and len(order) < n:  # breadth first: the middle, then the quarters, ...
        low, high = spans.pop(0)
        middle = (low + high) // 2
        if middle not in (low, high):
            order.append(middle)
            spans += [(low, middle), (middle, high)]
    kept: list[tuple[float, float, str]] = []
    for index in order:
        text = short_label(labels[index])
        width = len(text) * CHAR_WIDTH
        left = min(max(LEFT + step * (index + 0.5) - width / 2, 2.0), WIDTH - 2.0 - width)
        if left < 0 or any(left < right + GAP and other < left + width + GAP for other, right, _ in kept):
            continue
        kept.append((left, left + width, text))
        if len(kept) >= 12:
            break
    return sorted((left, text) for left, _, text in kept)


def chart_svg(chart: Chart) -> str:
    """The chart as one `<svg>` element: axes, bars (stacked) or lines with points, marks for failed runs.

    >>> chart_svg(Chart("c", "t", "rows", ("2025-01-01",), (Series("x", (1.0,)),), Kind.STACKED))[:4]
    '<svg'
    """
    n, top = len(chart.x), _top(chart)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    step = plot_w / max(n, 1)

    def y(value: float) -> float:
        return TOP + plot_h - value / top * plot_h

    out = [
        f'<svg class="chart" data-chart="{escape(chart.key)}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{escape(chart.title)}">'
    ]
    for fraction in (0.0, 0.5, 1.0):
        level = y(top * fraction)
        out.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{level:.1f}" y2="{level:.1f}"/>')
        out.append(
            f'<text class="tick" x="{LEFT - 6}" y="{level + 4:.1f}" text-anchor="end">{_tick(top * fraction)}</text>'
        )
    for left, label in x_ticks(chart.x, step):
        out.append(
            f'<text class="tick x" x="{left:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="start">{escape(label)}</text>'
        )
    if chart.kind is Kind.STACKED:
        out += _bars(chart, step, y)
    else:
        out += _lines(chart, step, y)
    out += _hover(chart, step)
    out += _thresholds(chart, y)  # over the hover columns, as the marks: a line's tooltip says what it is
    for index, mark in enumerate(chart.marks):  # over the hover columns: a mark says what it marks
        if mark:
            middle = LEFT + step * (index + 0.5)
            out.append(
                f'<g class="mark" data-index="{index}"><title>{escape(chart.x[index])}: {escape(mark)}</title>'
                f'<line x1="{middle:.1f}" x2="{middle:.1f}" y1="{TOP}" y2="{TOP + plot_h}" stroke="{MARK}" '
                f'stroke-dasharray="3,3"/><path d="M{middle - 5:.1f},{TOP + plot_h + 4} l5,-8 l5,8 z" '
                f'fill="{MARK}"/></g>'
            )
    out.append("</svg>")
    return "".join(out)


def _bars(chart: Chart, step: float, y: Callable[[float], float]) -> list[str]:
    width = max(step * 0.8, 0.5)
    out = []
    for index in range(len(chart.x)):
        left = LEFT + step * index + (step - width) / 2
        base = 0.0
        for number, series in enumerate(chart.series):
            value = series.values[index] or 0.0
            if value <= 0:
                continue
            upper, lower = y(base + value), y(base)
            out.append(
                f'<rect class="bar" x="{left:.1f}" y="{upper:.1f}" width="{width:.1f}" height="{lower - upper:.1f}" '
                f'fill="{color(number)}"/>'
            )
            base += value
    return out


def _lines(chart: Chart, step: float, y: Callable[[float], float]) -> list[str]:
    out = []
    dots = len(chart.x) <= DOTS
    for number, series in enumerate(chart.series):
        points = [(LEFT + step * (i + 0.5), y(value)) for i, value in enumerate(series.values) if value is not None]
        if not points:
            continue
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
        out.append(f'<polyline class="line" fill="none" stroke="{color(number)}" points="{path}"/>')
        if dots:
            out += [
                f'<circle class="point" cx="{px:.1f}" cy="{py:.1f}" r="2.5" fill="{color(number)}"/>'
                for px, py in points
            ]
    return out


def _thresholds(chart: Chart, y: Callable[[float], float]) -> list[str]:
    """Each threshold line dashed across the plot in its level's colour, its label as its tooltip."""
    return [
        f'<g class="threshold" data-level="{escape(line.level)}" data-value="{line.value:g}">'
        f"<title>{escape(line.label)}</title>"
        f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(line.value):.1f}" y2="{y(line.value):.1f}" '
        f'stroke="{LEVELS.get(line.level, MARK)}" stroke-width="1.5" stroke-dasharray="{DASHES}"/></g>'
        for line in chart.lines
    ]


def _hover(chart: Chart, step: float) -> list[str]:
    """One invisible column per point, over the drawing, holding the point's numbers as its tooltip: one title a
    point rather than one a bar or dot keeps the page small (a year of daily windows: a few hundred KiB)."""
    height = HEIGHT - TOP - BOTTOM
    return [
        f'<rect class="hit" x="{LEFT + step * index:.1f}" y="{TOP}" width="{step:.1f}" height="{height}" '
        f'fill="transparent"><title>{escape(_tip(chart, index))}</title></rect>'
        for index in range(len(chart.x))
    ]


def figure_of(chart: Chart, job: str) -> Figure:
    """The chart drawn with matplotlib, as `--png` writes it: bars or lines, the marks, the threshold lines, the
    legend beside the plot. A `Figure` of its own, not pyplot's: no backend to choose, nothing to close."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10, 3.2), dpi=110)
    FigureCanvasAgg(figure)
    axes = figure.subplots()
    positions = list(range(len(chart.x)))
    if chart.kind is Kind.STACKED:
        base = [0.0] * len(chart.x)
        for number, series in enumerate(chart.series):
            values = [v or 0.0 for v in series.values]
            axes.bar(positions, values, bottom=base, color=color(number), label=series.name, width=0.8)
            base = [b + v for b, v in zip(base, values, strict=True)]
    else:
        for number, series in enumerate(chart.series):
            known = [(i, v) for i, v in enumerate(series.values) if v is not None]
            axes.plot([i for i, _ in known], [v for _, v in known], color=color(number), label=series.name)
    marked = [i for i, mark in enumerate(chart.marks) if mark]
    for number, index in enumerate(marked):  # a dashed line over the bars, as on the page
        label = "failed / cancelled / took over" if number == 0 else None
        axes.axvline(index, color=MARK, linestyle="--", linewidth=1, label=label)
    if marked:
        axes.scatter(marked, [0.0] * len(marked), marker="^", color=MARK, clip_on=False, zorder=5)
    dashes = tuple(float(part) for part in DASHES.split(","))
    for line in chart.lines:  # axhline widens the y axis to reach it, as `_top` does on the page
        axes.axhline(line.value, color=LEVELS.get(line.level, MARK), dashes=dashes, linewidth=1.5, label=line.label)
    ticks = sorted({0, len(chart.x) // 2, len(chart.x) - 1})
    axes.set_xticks(ticks, [short_label(chart.x[i]) for i in ticks], fontsize=8)
    axes.set_ylabel(chart.unit)
    axes.set_title(f"{job}: {chart.title}", fontsize=10)
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)  # beside, not over
    axes.grid(axis="y", color="#dddddd")
    if chart.note:
        figure.text(0.01, 0.01, chart.note, fontsize=7, color="#666666")
    figure.tight_layout()
    return figure


def write_pngs(charts: Sequence[Chart], folder: Path, job: str) -> list[Path]:
    """One image per chart that has numbers, `<job>-<chart>.png` in `folder` (created); the files written.

    >>> write_pngs(charts, Path("out"), "trx")  # doctest: +SKIP
    [PosixPath('out/trx-outcomes.png'), ...]
    """
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for chart in charts:
        if not chart.empty:
            written.append(folder / f"{job}-{chart.key}.png")
            figure_of(chart, job).savefig(written[-1])
    return written
