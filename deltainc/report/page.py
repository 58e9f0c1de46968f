"""The report as one self-contained HTML page: a header (the job's settings, where it stands), the charts (inline
SVG, `drawing.py`) each with its legend and a table of its numbers, and a table of the last runs with their
messages. No script runs, no style sheet, font or image is fetched: the page opens from a file offline and
can be attached to a ticket. The numbers are also in the page as JSON (`<script type="application/json"
id="deltainc-report">`), the way `status --json` names them, for tools and tests. Pure: data in, text out.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from html import escape

from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds.two_source import kind_of
from deltainc.pipeline.state import JobStatus
from deltainc.report.charts import Chart
from deltainc.report.drawing import DASHES, LEVELS, MARK, chart_svg, color
from deltainc.report.sections import health_line
from deltainc.report.series import PHASES, Row, run_mark, window_label

__all__ = ["LAST_RUNS", "settings_rows", "page_html", "run_cells"]

LAST_RUNS = 30  # runs in the table under the charts

_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 6px}
table{border-collapse:collapse;font-size:12px}td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #eee}
th{background:#f6f6f6}td.text,th.text{text-align:left}
.header td{text-align:left;border:none;padding:1px 12px 1px 0}.header th{background:none;text-align:left;border:none}
.chart-block{display:flex;gap:18px;align-items:flex-start;flex-wrap:wrap}
.legend span{display:inline-block;margin-right:12px;font-size:12px}.legend i{display:inline-block;width:10px;
height:10px;margin-right:4px}.note{font-size:12px;color:#666}
svg.chart{background:#fff}svg .grid{stroke:#ddd}svg .tick{font-size:10px;fill:#555}svg .line{stroke-width:1.5}
svg .mark{fill:#d62728}details{font-size:12px}details table{max-height:240px}
.health{font-size:15px;margin:6px 0 12px;padding:6px 10px;background:#f3f6fa;border-left:4px solid #4e79a7}
.failed td{background:#fdecea}.cancelled td{background:#fff4e5}
"""


def _cell(value: object, text: bool = False) -> str:
    shown = "" if value is None else f"{value:,.2f}" if isinstance(value, float) else str(value)
    return f'<td class="text">{escape(shown)}</td>' if text else f"<td>{escape(shown)}</td>"


def settings_rows(job: JobConfig, status: JobStatus, layout: str) -> list[tuple[str, str]]:
    """The header's facts: the job's settings (sources, join, look back, wait, target), the target's layout as
    its log says it (`history.layout_text`) and where it stands (watermark, latest RecDate, each upstream job's
    watermark, pending, lock)."""
    join = job.join
    rows = [(f"source {role}", ref.label) for role, ref in job.sources]
    rows += kind_of(job).summary()
    rows += [
        ("incremental column", f"{join.inc_col} ({join.time_uom})"),
        ("target", job.target.label),
        ("layout", layout),
        ("start date", job.start_date.isoformat()),
        ("watermark", status.watermark or "none (never run)"),
        ("latest in all sources", status.latest_available or "none"),
    ]
    rows += [("upstream job", f"{name}: {text}") for name, text in status.upstream_lines(join.time_uom.value)]
    if status.problem:
        rows.append(("problem", status.problem))
    pending = status.pending
    rows.append(("pending", "nothing" if pending is None else f"{pending.whole} ({pending.whole.units} units)"))
    lock = status.lock
    rows.append(
        ("lock", "free" if lock is None else f"held by run {lock['run_id']} ({lock['owner']}): {lock['reason']}")
    )
    return rows


def _legend(chart: Chart) -> str:
    items = "".join(
        f'<span><i style="background:{color(n)}"></i>{escape(s.name)}</span>' for n, s in enumerate(chart.series)
    )
    if any(chart.marks):
        items += f'<span><b style="color:{MARK}">&#9650;</b> failed, cancelled or took over (hover)</span>'
    items += "".join(  # a dashed swatch in the line's colour, as the chart draws it
        f'<span class="threshold" data-level="{escape(line.level)}"><svg width="18" height="10"><line x1="0" x2="18" '
        f'y1="5" y2="5" stroke="{LEVELS.get(line.level, MARK)}" stroke-width="2" stroke-dasharray="{DASHES}"/></svg> '
        f"{escape(line.label)}</span>"
        for line in chart.lines
    )
    return f'<div class="legend">{items}<span>({escape(chart.unit)})</span></div>'


def _numbers(chart: Chart) -> str:
    """The chart's numbers as a table (folded in a <details>), one row per point."""
    head = "".join(f"<th>{escape(s.name)}</th>" for s in chart.series)
    marks = bool(chart.marks) and any(chart.marks)
    body = []
    for index, label in enumerate(chart.x):
        cells = "".join(_cell(s.values[index]) for s in chart.series)
        mark = _cell(chart.marks[index], text=True) if marks else ""
        body.append(f'<tr><td class="text">{escape(label)}</td>{cells}{mark}</tr>')
    extra = '<th class="text">mark</th>' if marks else ""
    return (
        f'<details><summary>numbers</summary><table class="numbers" data-chart="{escape(chart.key)}">'
        f'<tr><th class="text">point</th>{head}{extra}</tr>{"".join(body)}</table></details>'
    )


def _chart_block(chart: Chart) -> str:
    if chart.empty:
        return f'<h2>{escape(chart.title)}</h2><p class="note">nothing recorded yet</p>'
    note = f'<p class="note">{escape(chart.note)}</p>' if chart.note else ""
    return (
        f'<h2 id="{escape(chart.key)}">{escape(chart.title)}</h2>{_legend(chart)}{note}'
        f'<div class="chart-block">{chart_svg(chart)}{_numbers(chart)}</div>'
    )


def run_cells(row: Row) -> dict[str, object]:
    """One run of the last-runs table: what `status` shows of it, plus its phases and its message."""
    started = row.get("started_at")
    cells: dict[str, object] = {
        "started_at": started.isoformat() if isinstance(started, dt.datetime) else started,
        "run_id": row.get("run_id"),
        "command": row.get("command"),
        "window": window_label(row) if row.get("window_start") is not None else None,
        "status": row.get("status"),
        "duration_s": row.get("duration_s"),
    }
    cells.update({name: row.get(name) for name, _ in PHASES})
    cells["took_over"] = row.get("took_over")
    cells["error"] = row.get("error")
    return cells


def _runs_table(rows: Sequence[Row]) -> str:
    heads = ["started (UTC)", "run", "command", "window", "status", "s", *(label for _, label in PHASES), "message"]
    out = ['<table class="runs"><tr>' + "".join(f'<th class="text">{escape(h)}</th>' for h in heads) + "</tr>"]
    for row in reversed(rows[-LAST_RUNS:]):
        cells = run_cells(row)
        message = cells["error"] or (f"took over {cells['took_over']}" if cells["took_over"] else None)
        mark = run_mark(row) or ""
        out.append(
            f'<tr class="{escape(str(row.get("status")))}" data-run-id="{escape(str(row.get("run_id")))}" '
            f'data-mark="{escape(mark)}">'
            + _cell(cells["started_at"], True)
            + _cell(cells["run_id"], True)
            + _cell(cells["command"], True)
            + _cell(cells["window"], True)
            + _cell(cells["status"], True)
            + _cell(cells["duration_s"])
            + "".join(_cell(cells[name]) for name, _ in PHASES)
            + _cell((str(message).splitlines() or [""])[0][:300] if message else None, True)
            + "</tr>"
        )
    out.append("</table>")
    return "".join(out)


def _catch_up_table(cells: Sequence[Mapping[str, object]]) -> str:
    """The catch-up windows' numbers, apart from the charts' lines (`sections.catch_ups`)."""
    if not cells:
        return ""
    heads = list(cells[0])
    out = ['<h2 id="catch-ups">Catch-up windows, apart from the lines</h2>', '<table class="catch-ups"><tr>']
    out += [f'<th class="text">{escape(h)}</th>' for h in heads] + ["</tr>"]
    for row in cells:
        out.append("<tr>" + "".join(_cell(row[h], h == "window") for h in heads) + "</tr>")
    return "".join(out) + "</table>"


def _data(charts: Sequence[Chart], rows: Sequence[Row], health: str, catch_ups: Sequence[Mapping[str, object]]) -> str:
    """The page's numbers as JSON: the health line, each chart's points, series, marks and threshold lines, the
    catch-up windows and the last runs (`run_cells`)."""
    document = {
        "health": health,
        "charts": {
            c.key: {
                "x": list(c.x),
                "series": {s.name: list(s.values) for s in c.series},
                "marks": list(c.marks),
                "note": c.note,
                "lines": [{"label": line.label, "level": line.level, "value": line.value} for line in c.lines],
            }
            for c in charts
        },
        "catch_ups": list(catch_ups),
        "runs": [run_cells(row) for row in reversed(rows[-LAST_RUNS:])],
    }
    text = json.dumps(document, default=str)
    return text.replace("</", "<\\/")  # no '</script>' inside the element


def page_html(
    job: JobConfig,
    status: JobStatus,
    charts: Sequence[Chart],
    rows: Sequence[Row],
    generated: dt.datetime,
    layout: str,
    catch_ups: Sequence[Mapping[str, object]] = (),
    notes: Mapping[str, str] | None = None,
) -> str:
    """The whole page. `rows`: the run-log rows shown (oldest first); `layout`: the target's (`history.layout_text`);
    `catch_ups`: the catch-up windows' numbers (`catch_up.catch_up_cells`); `notes`: lines under the header."""
    header = "".join(
        f'<tr><th>{escape(k)}</th><td class="text">{escape(v)}</td></tr>' for k, v in settings_rows(job, status, layout)
    )
    health = health_line(rows, status, job.join.time_uom, generated, LAST_RUNS)
    shown = f"{len(rows)} run(s) from {run_cells(rows[0])['started_at']} to {run_cells(rows[-1])['started_at']}"
    lines = "".join(f'<p class="note">{escape(text)}</p>' for text in (notes or {}).values())
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>deltainc report: {escape(job.name)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{escape(job.name)}</h1>"
        f'<p class="health">{escape(health)}</p>'
        f'<p class="note">deltainc report, generated {generated.strftime("%Y-%m-%d %H:%M:%S")} UTC; {escape(shown)}</p>'
        f'<table class="header">{header}</table>{lines}'
        + "".join(_chart_block(c) for c in charts)
        + _catch_up_table(catch_ups)
        + f"<h2>Last runs</h2>{_runs_table(rows)}"
        + f'<script type="application/json" id="deltainc-report">{_data(charts, rows, health, catch_ups)}</script>'
        + "</body></html>"
    )
