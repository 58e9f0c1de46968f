"""The report's charts as PNG images (`report --png DIR`), for e-mail and chat: the same `Chart`s the page draws,
drawn with matplotlib (already a dependency, imported only here, only when images are asked for)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from deltainc.report.charts import Chart, Kind
from deltainc.report.svg import MARK, color, short_label

__all__ = ["write_pngs"]


def write_pngs(charts: Sequence[Chart], folder: Path, job: str) -> list[Path]:
    """One image per chart that has numbers, `<job>-<chart>.png` in `folder` (created); the files written.

    >>> write_pngs(charts, Path("out"), "trx")  # doctest: +SKIP
    [PosixPath('out/trx-outcomes.png'), ...]
    """
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for chart in charts:
        if chart.empty:
            continue
        figure, axes = plt.subplots(figsize=(10, 3.2), dpi=110)
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
        ticks = sorted({0, len(chart.x) // 2, len(chart.x) - 1})
        axes.set_xticks(ticks, [short_label(chart.x[i]) for i in ticks], fontsize=8)
        axes.set_ylabel(chart.unit)
        axes.set_title(f"{job}: {chart.title}", fontsize=10)
        axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)  # beside, not over
        axes.grid(axis="y", color="#dddddd")
        if chart.note:
            figure.text(0.01, 0.01, chart.note, fontsize=7, color="#666666")
        figure.tight_layout()
        path = folder / f"{job}-{chart.key}.png"
        figure.savefig(path)
        plt.close(figure)
        written.append(path)
    return written
