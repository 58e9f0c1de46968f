"""`deltainc report`: a job's history read from its logs (no JVM), gathered into charts, written as one page.

Each step has a module of its own: `history` reads, `series` and `sections` gather, `charts` aggregates, `page`
writes the HTML, `drawing` the charts in it and the images. This module only chains them and writes the files,
the page last and atomically (a temporary file renamed), so that a failed report leaves nothing behind.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import deltainc.report.series as series
from deltainc.join.options import COUNTED_ORDER, WAITING_TYPES
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.report.charts import Chart, aggregate
from deltainc.report.history import History, chosen, layout_text, read_history, units_from_target
from deltainc.report.page import page_html
from deltainc.report.sections import catch_up_cells, catch_ups, window_marks
from deltainc.report.thresholds import with_thresholds
from deltainc.settings import Settings

__all__ = ["Report", "charts_of", "catch_up_rows", "write_report", "default_out"]


@dataclass(frozen=True)
class Report:
    """What a report wrote: the page, the images (with --png), the runs and windows it shows."""

    page: Path
    images: tuple[Path, ...]
    runs: int
    windows: int


def default_out(job: JobConfig) -> Path:
    """Where the page goes without --out: `<job>-report.html` in the working folder."""
    return Path(f"{job.name}-report.html")


def charts_of(job: JobConfig, history: History, rows: tuple[dict[str, object], ...] | None = None) -> list[Chart]:
    """The report's charts of `rows` (default: all of the history), each with the lines of the job's `[checks]`
    thresholds that judge what it shows (`thresholds`), each aggregated when its points are many.

    Failed, cancelled and taken-over runs are marked on every chart (`sections`). A catch-up window (`sections`) is
    drawn per unit from the target in the chart of final rows, and kept out of the lines (its numbers are in a
    table apart, `catch_up_rows`), as it is when the target cannot be read per unit."""
    shown = history.rows if rows is None else rows
    uom = job.join.time_uom
    windows = series.windows_of(shown)
    marks = window_marks(shown, windows)
    per_unit = units_from_target(job, windows)
    wide = {series.window_label(w) for w in catch_ups(windows, uom)}
    lines = [w for w in windows if series.window_label(w) not in wide]
    apart = f"{len(wide)} catch-up window(s) shown apart, in the table under the charts" if wide else ""
    drawn = [w for w in windows if series.window_label(w) not in wide or series.window_label(w) in per_unit]
    outcomes = series.outcome_chart(drawn, per_unit, marks)
    if len(drawn) < len(windows):
        outcomes = replace(outcomes, note=apart)
    files, size = series.reads_charts(lines, marks)
    charts = [
        outcomes,
        series.backlog_chart(windows, marks),
        replace(series.late_chart(lines, marks), note=apart),
        series.lag_chart(shown, uom),
        series.duration_chart(shown),
        replace(files, note=apart),
        replace(size, note=apart),
    ]
    return [aggregate(with_thresholds(chart, job.checks, uom.value)) for chart in charts]


def catch_up_rows(job: JobConfig, rows: Sequence[series.Row]) -> list[dict[str, object]]:
    """The numbers of the catch-up windows among `rows`, one dict a window, for the page's table apart."""
    uom = job.join.time_uom
    final = [code.outcome for code in COUNTED_ORDER if code not in WAITING_TYPES]
    return [catch_up_cells(w, uom, final) for w in catch_ups(series.windows_of(rows), uom)]


def write_report(
    job: JobConfig,
    settings: Settings,
    out: Path | None = None,
    since: dt.date | None = None,
    last: int | None = None,
    png: Path | None = None,
) -> Report:
    """Write the report of `job`: the page at `out` (default `default_out`), and with `png` each chart as an image
    in that folder. Nothing is written when the run log cannot be read (ConfigError naming state_dir), the job
    never ran (NoRuns) or no run started since `since` (ConfigError naming --since).

    >>> write_report(load_job("conf/jobs/trx.toml"), load_settings(), Path("trx.html"), last=90)  # doctest: +SKIP
    Report(page=PosixPath('trx.html'), images=(), runs=90, windows=90)
    """
    history = read_history(job, settings)
    rows = chosen(history.rows, job.name, since, last)
    charts = charts_of(job, history, tuple(dict(r) for r in rows))
    now = dt.datetime.now(dt.timezone.utc)
    text = page_html(job, history.status, charts, rows, now, layout_text(job), catch_up_rows(job, rows))
    images: list[Path] = []
    if png is not None:
        from deltainc.report.drawing import write_pngs

        images = write_pngs(charts, png, job.name)
    page = out or default_out(job)
    _write_atomically(page, text)
    return Report(page, tuple(images), len(rows), len(series.windows_of(rows)))


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # as an ordinary file, not mkstemp's owner-only mode
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
