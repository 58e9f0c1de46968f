"""What the benchmark ran on, and RESULTS.md: machine, versions, sizes, and per scenario its goal, what was measured
against it and its tables (the scenarios themselves are in benchmarks.harness)."""

from __future__ import annotations

import datetime as dt
import os
import platform
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Protocol

from pyspark.sql import SparkSession

from benchmarks.data import Sources
from benchmarks.scenarios import OUTCOMES, PHASES, DailyPoint, ReloadResult, StreamResult
from benchmarks.timing import Measurement, fmt_ratio, fmt_s, ratio
from deltainc.pipeline.delta.spark_counts import ScanStats

__all__ = [
    "Results",
    "Section",
    "Verdict",
    "machine_info",
    "versions",
    "spark_conf",
    "render",
    "no_goal",
    "daily_section",
    "daily_check",
    "growth_section",
    "growth_check",
    "floor_section",
    "floor_check",
    "reload_section",
    "reload_check",
    "stream_section",
    "stream_check",
    "fixed_cost_section",
    "fixed_cost_check",
    "connect_section",
    "connect_check",
]

_CONF_PREFIXES = ("spark.master", "spark.driver.memory", "spark.default.parallelism", "spark.sql.", "spark.databricks.")
_CONF_SKIP = ("spark.sql.warehouse.dir", "spark.sql.extensions", "spark.sql.catalog.spark_catalog")


class Section(Protocol):
    """What RESULTS.md needs of a scenario: its name, what it measures, its goal, its section's body and what was
    measured against the goal. `benchmarks.harness.Scenario` is one; the report names no module above it, so the
    registry imports the report and never the other way round."""

    @property
    def name(self) -> str: ...
    def body(self, results: Results) -> list[str]: ...
    @property
    def measures(self) -> str: ...
    def verdict(self, results: Results) -> Verdict: ...
    @property
    def goal(self) -> str: ...


@dataclass
class Results:
    """Everything one benchmark run measured (filled in phase by phase; rendered after each phase)."""

    command: str
    options: dict[str, Any]
    started: dt.datetime
    machine: dict[str, str]
    versions: dict[str, str]
    conf: dict[str, str]
    sizes: list[int]
    sources: Sources | None = None
    daily: list[DailyPoint] | None = None
    reload: ReloadResult | None = None
    stream: StreamResult | None = None
    sessions: dict[str, list[dict[str, Any]]] | None = None  # fixed-cost, from benchmarks.session_ab
    sessions_size: tuple[int, int] = (2000, 40)
    connect: dict[str, Any] | None = None  # connect, from benchmarks.connect_ab
    reports: dict[str, list[str]] = field(default_factory=dict)  # scenario name -> the Markdown its module printed
    phases: list[tuple[str, float]] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    total_s: float | None = None
    load_end: str | None = None


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def machine_info() -> dict[str, str]:
    """nproc, memory, CPU model, OS, Python, and the load average when the benchmark started."""
    cpuinfo = _read_text("/proc/cpuinfo")
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")), "")
    meminfo = _read_text("/proc/meminfo")
    mem_kb = next((int(line.split()[1]) for line in meminfo.splitlines() if line.startswith("MemTotal:")), 0)
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "nproc (usable / online)": f"{usable} / {os.cpu_count()}",
        "memory": f"{mem_kb / 1024 / 1024:.1f} GiB" if mem_kb else "unknown",
        "CPU model": model or platform.processor() or "unknown",
        "OS": platform.platform(),
        "load average at start (1/5/15 min)": load_average(),
    }


def load_average() -> str:
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def _java_version() -> str:
    java = Path(os.environ["JAVA_HOME"]) / "bin" / "java" if os.environ.get("JAVA_HOME") else Path("java")
    try:
        done = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    lines = (done.stderr or done.stdout).strip().splitlines()
    return lines[0] if lines else "unknown"


def _package(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def versions(spark: SparkSession) -> dict[str, str]:
    return {
        "Python": sys.version.split()[0],
        "Spark (JVM)": spark.version,
        "pyspark": _package("pyspark"),
        "delta-spark": _package("delta-spark"),
        "deltainc": _package("deltainc"),
        "Java": _java_version(),
    }


def spark_conf(spark: SparkSession) -> dict[str, str]:
    """The Spark settings that shape the numbers (master, memory, SQL and Delta settings), as the session has them."""
    conf = dict(spark.sparkContext.getConf().getAll())
    for key in (
        "spark.sql.shuffle.partitions",
        "spark.sql.adaptive.enabled",
        "spark.sql.streaming.stateStore.providerClass",
    ):
        try:
            conf[key] = conf.get(key) or str(spark.conf.get(key))
        except Exception:  # a key without a default
            conf[key] = "(unset)"
    return {k: v for k, v in sorted(conf.items()) if k.startswith(_CONF_PREFIXES) and k not in _CONF_SKIP}


# --- each scenario's goal: what was measured against it --------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """What was measured against a scenario's goal, and MET, MISSED, or "-" (not measured, or no number to judge)."""

    measured: str
    verdict: str


NOT_RUN, IN_SECTION = "not run", "in its section"  # what a Verdict says when there is no number to give


def _at_least(value: float | None, bound: float) -> bool | None:
    return None if value is None else value >= bound


def _at_most(value: float | None, bound: float) -> bool | None:
    return None if value is None else value <= bound


def _judge(parts: list[tuple[str, bool | None]]) -> Verdict:
    """One verdict from the parts of a goal (text, met?): MET when every judged part is, MISSED when one is not.
    With more than one judged part, each says whether it was met."""
    if not parts:
        return Verdict(NOT_RUN, "-")
    judged = [ok for _text, ok in parts if ok is not None]
    verdict = "-" if not judged else ("MET" if all(judged) else "MISSED")
    if len(judged) > 1:
        return Verdict("; ".join(t if ok is None else f"{t} ({'met' if ok else 'missed'})" for t, ok in parts), verdict)
    return Verdict("; ".join(text for text, _ok in parts), verdict)


def no_goal(ran: bool) -> Verdict:
    """A scenario whose numbers are judged in its own section (or that has no goal)."""
    return Verdict(IN_SECTION if ran else NOT_RUN, "-")


def daily_check(results: Results) -> Verdict:
    """naive / daily at the largest D (>= 10x) and at the smallest (> 1x); Delta commits of one daily run (<= 3)."""
    points = [p for p in results.daily or [] if p.naive is not None]
    if not points:
        return _judge([])
    smallest, largest = points[0], points[-1]
    value = ratio(largest.naive, largest.daily)
    parts = [(f"naive / daily = {fmt_ratio(value)} at D = {largest.days}", _at_least(value, 10))]
    if smallest is not largest:
        value = ratio(smallest.naive, smallest.daily)
        parts.append((f"{fmt_ratio(value)} at D = {smallest.days}", None if value is None else value > 1))
    if largest.commits:
        total = sum(largest.commits)
        parts.append((f"{total} Delta commits: {' / '.join(map(str, largest.commits))}", total <= 3))
    return _judge(parts)


def growth_check(results: Results) -> Verdict:
    """The daily run's time at the largest D over the smallest (<= 1.3x), and its files read."""
    points = results.daily or []
    if len(points) < 2:
        return Verdict("needs two sizes" if points else NOT_RUN, "-")
    smallest, largest = points[0], points[-1]
    value = ratio(largest.daily, smallest.daily)
    files = _files(largest) / max(1, _files(smallest))
    text = f"time {fmt_ratio(value)} from D = {smallest.days} to D = {largest.days}, files read {files:.2f}x"
    return _judge([(text, _at_most(value, 1.3))])


def floor_check(results: Results) -> Verdict:
    """The daily run over the floor 'join the window, append it' at the largest D (<= 2x)."""
    points = results.daily or []
    largest = points[-1] if points else None
    if largest is None or largest.floor_append is None:
        return _judge([])
    value = ratio(largest.daily, largest.floor_append)
    text = (
        f"daily / (join + append) = {fmt_ratio(value)} at D = {largest.days}; daily / read-only floor = "
        f"{fmt_ratio(ratio(largest.daily, largest.floor))}"
    )
    return _judge([(text, _at_most(value, 2))])


def reload_check(results: Results) -> Verdict:
    """The daily runs over the reload of the same days (>= 20x), and both targets equal."""
    r = results.reload
    if r is None:
        return _judge([])
    value = ratio(r.daily, r.reload)
    return _judge(
        [
            (f"daily runs / reload of {r.days} days = {fmt_ratio(value)}", _at_least(value, 20)),
            (f"targets equal: {_yes(r.comparison.equal)}", r.comparison.equal),
        ]
    )


def stream_check(results: Results) -> Verdict:
    """The stream over deltainc's daily run for the same day (no goal)."""
    if results.stream is None:
        return _judge([])
    return _judge([(f"stream / deltainc = {fmt_ratio(ratio(results.stream.stream, results.stream.daily))}", None)])


def fixed_cost_check(results: Results) -> Verdict:
    """deltainc's session: the daily run's median seconds (<= 3), Spark jobs (<= 15), Delta commits (<= 3)."""
    if not results.sessions or not results.sessions.get("deltainc"):
        return _judge([])
    runs = results.sessions["deltainc"]
    seconds = statistics.median(s for r in runs for s in r["daily_s"])
    jobs = statistics.median(j for r in runs for j in r["daily_jobs"])
    commits = sum(runs[-1]["commits"])
    parts: list[tuple[str, bool | None]] = [
        (f"{seconds:.2f} s", seconds <= 3),
        (f"{jobs:.0f} Spark jobs", jobs <= 15),
        (f"{commits} Delta commits", commits <= 3),
    ]
    defaults = [s for r in results.sessions.get("delta-defaults", []) for s in r["daily_s"]]
    if defaults:
        parts.append((f"Delta's defaults {statistics.median(defaults):.2f} s", None))
    return _judge(parts)


def connect_check(results: Results) -> Verdict:
    """A daily `deltainc run` starting its own JVM over the same as a Connect client (no goal)."""
    if not results.connect:
        return _judge([])
    daily = results.connect["daily"]
    ratios = [a / b for a, b in zip(daily["local_s"], daily["connect_s"], strict=True)]
    return _judge([(f"daily run, own JVM / Connect client = {statistics.median(ratios):.1f}x", None)])


# --- rendering -------------------------------------------------------------------------------------------


def _yes(flag: bool | None) -> str:
    return "-" if flag is None else ("yes" if flag else "**NO**")


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _mib(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MiB"


def _files(point: DailyPoint) -> int:
    r = point.report.record
    return r.files_read_a + r.files_read_b + r.files_read_target


def _read_cell(point: DailyPoint) -> str:
    r = point.report.record
    total = r.bytes_read_a + r.bytes_read_b + r.bytes_read_target
    return f"{r.files_read_a} / {r.files_read_b} / {r.files_read_target} ({_mib(total)})"


def _scans_cell(stats: tuple[ScanStats, ScanStats] | None) -> str:
    """'files of A / files of B (their MiB)' for two planned scans, or '-'."""
    if stats is None:
        return "-"
    a, b = stats
    return f"{a.files} / {b.files} ({_mib(a.bytes + b.bytes)})"


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
        *_table(header, rows),
    ]


def _per_size(points: list[DailyPoint], columns: dict[str, Callable[[DailyPoint], str]]) -> list[str]:
    """A table with a row per history size D: `D (days)`, then a column per header of `columns`, each point's cell."""
    return _table(["D (days)", *columns], [[str(p.days), *(cell(p) for cell in columns.values())] for p in points])


def _one_row(cells: dict[str, str]) -> list[str]:
    """A table of one row: a column per header of `cells`, with its cell."""
    return _table(list(cells), [list(cells.values())])


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
        *_per_size(
            points,
            {
                "deltainc daily run": lambda p: p.daily.cell(),
                "naive full recompute": lambda p: p.naive.cell() if p.naive else "-",
                "naive / daily": lambda p: fmt_ratio(ratio(p.naive, p.daily)),
                "files read deltainc A / B / target": _read_cell,
                "files read naive A / B": lambda p: _scans_cell(p.naive_stats),
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
            f"{_yes(c.equal)} ({c.rows_left} vs {c.rows_right} rows; {c.only_left} only in naive, "
            f"{c.only_right} only in deltainc)."
        )
    return lines


def growth_section(results: Results) -> list[str]:
    """The daily run at every history size, where its time goes, and how it grows."""
    points = results.daily or []
    if not points:
        return ["_Not run._"]
    lines = [
        "The same daily run at every history size. `rerun of day D` is `pipeline.rerun(job, day D)` after the "
        "day was processed: the same reads and the forward-only MERGE's planning, but nothing to write.",
        "",
        *_per_size(
            points,
            {
                "daily run (first time)": lambda p: p.daily.cell(),
                "of which the window": lambda p: _window_s(p.daily),
                "rerun of day D": lambda p: p.rerun.cell(),
                "Spark jobs daily / rerun": lambda p: f"{p.daily.count_cell()} / {p.rerun.count_cell()}",
                "files read A / B / target": _read_cell,
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
            f"files read {_files(last) / max(1, _files(first)):.2f}x, rerun time "
            f"{fmt_ratio(ratio(last.rerun, first.rerun))}.",
        ]
    return lines


def _median_int(values: list[int]) -> str:
    return str(sorted(values)[len(values) // 2]) if values else "-"


def reload_section(results: Results) -> list[str]:
    """One reload against the daily runs of the same days, and whether their targets agree."""
    r = results.reload
    if r is None:
        return ["_Not run._"]
    per_run = sorted(r.per_run)
    median_run = per_run[len(per_run) // 2] if per_run else None
    one_run = f"{fmt_s(median_run)} [{fmt_s(per_run[0], False)}-{fmt_s(per_run[-1], False)}]" if per_run else "-"
    c = r.comparison
    return [
        "Days 1..R in one `pipeline.run` (max_window = 0) into target X vs. R separate `pipeline.run` calls "
        "(max_window = 1, one day each) into target Y, each from an empty target and state.",
        "",
        *_one_row(
            {
                "days reloaded": str(r.days),
                "one run (max_window = 0)": r.reload.cell(),
                "daily runs, total": r.daily.cell(),
                "one daily run (last set)": one_run,
                "daily / reload": fmt_ratio(ratio(r.daily, r.reload)),
                "Spark jobs reload / one daily run": f"{r.reload.count_cell()} / {_median_int(r.jobs_per_run)}",
            }
        ),
        "",
        f"Targets identical (exceptAll both ways, counts): {_yes(c.equal)}: {c.rows_left} rows in the reload target, "
        f"{c.rows_right} in the daily target, {c.only_left} only in the reload, {c.only_right} only in the daily.",
        "",
        *_table(
            ["outcome", "reload target", "daily target"],
            [[name, str(r.counts_x[name]), str(r.counts_y[name])] for name in OUTCOMES.values()],
        ),
    ]


def stream_section(results: Results) -> list[str]:
    """Structured Streaming against deltainc's daily run for the same day, and how their outputs differ."""
    s = results.stream
    if s is None:
        return ["_Not run._"]
    progress = s.progress or {}
    report = s.daily.last.record if s.daily.last else None
    deltainc_read = f"{report.files_read_a} / {report.files_read_b} / {report.files_read_target}" if report else "-"
    return [
        "`readStream` of copies of A and B (days 1..D-1, then day D appended as one load), event time = RecDate, "
        "`withWatermark` on both, stream-stream left outer join on TrxId with B's time in [A's - lb, A's + mw], "
        "`trigger(availableNow=True)`, foreachBatch MERGE (insert if absent, pruned to the batch's RecDate_A "
        "range) into a Delta target. Timed: the AvailableNow run that processes day D (checkpoint and target "
        "restored between repetitions). deltainc: its daily run for day D on the same copies.",
        "",
        *_one_row(
            {
                "day": str(s.day),
                "stream (AvailableNow + foreachBatch MERGE)": s.stream.cell(),
                "deltainc daily run": s.daily.cell(),
                "stream / deltainc": fmt_ratio(ratio(s.stream, s.daily)),
                "stream batches / input rows": f"{progress.get('batches', '-')} / {progress.get('input_rows', '-')}",
                "deltainc files read A / B / target": deltainc_read,
                "deltainc Spark jobs": s.daily.count_cell(),
            }
        ),
        "",
        f"Outputs after day {s.day} (watermark delay {s.watermark_delay!r} on both sides):",
        "",
        *_table(
            ["outcome", "deltainc rows", "stream rows", "only in deltainc", "only in stream"],
            [[name, str(a), str(b), str(c), str(d)] for name, a, b, c, d in s.outcomes],
        ),
        "",
        "The stream's output is append-only: it emits an unmatched A row once, when the watermark evicts it "
        "from the join state, and cannot show it before (deltainc shows it as a_waiting and updates it later). "
        f"Of deltainc's a_timed_out rows missing from the stream, {s.late_timeouts} time out on day {s.day} itself "
        "(A.RecDate = D - mw): the stream still holds them, since it evicts only once the watermark is past "
        "A.RecDate + mw, i.e. on its next run. "
        f"Rows the stream emitted as timed out (final, it cannot revise them) whose A row deltainc matched: "
        f"{s.cannot_revise}.",
    ]


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
        *_per_size(
            points,
            {
                "floor: read A, B partitions": lambda p: p.floor.cell() if p.floor else "-",
                "floor + the target slice": lambda p: p.floor_target.cell() if p.floor_target else "-",
                "floor: join the window, append to Delta": lambda p: p.floor_append.cell() if p.floor_append else "-",
                "deltainc daily run": lambda p: p.daily.cell(),
                "daily / floor": lambda p: fmt_ratio(ratio(p.daily, p.floor)),
                "daily / (floor + target)": lambda p: fmt_ratio(ratio(p.daily, p.floor_target)),
                "daily / (join + append)": lambda p: fmt_ratio(ratio(p.daily, p.floor_append)),
                "floor files A / B": lambda p: _scans_cell(p.floor_stats),
                "deltainc files A / B": lambda p: f"{p.report.record.files_read_a} / {p.report.record.files_read_b}",
            },
        ),
    ]


def fixed_cost_section(results: Results) -> list[str]:
    if not results.sessions:
        return ["_Not run._"]
    from benchmarks.session_ab import render as render_sessions

    return [
        "A small daily run in a warm session, on deltainc's session and on a session built only with Delta's "
        "defaults (`configure_spark_with_delta_pip`), each in a child process of its own (`benchmarks.session_ab`).",
        "",
        *render_sessions(results.sessions, *results.sessions_size),
    ]


def connect_section(results: Results) -> list[str]:
    if not results.connect:
        return ["_Not run (Spark Connect needs Spark 4 and Delta 4)._"]
    from benchmarks.connect_ab import render as render_connect

    return render_connect(results.connect)


def render(results: Results, scenarios: Sequence[Section]) -> str:
    """RESULTS.md: the goals of `scenarios` with what was measured against them, the set-up, then a section per
    scenario, its goal beside its numbers."""
    lines = [
        "# deltainc benchmark results",
        "",
        f"Run {results.started:%Y-%m-%d %H:%M} UTC with `{results.command}`"
        + (f", {results.total_s / 60:.1f} min in all." if results.total_s is not None else " (in progress)."),
        "",
        "Times are wall-clock seconds (time.perf_counter around the whole call): median [min-max] over n "
        "repetitions; `*` = fewer repetitions than asked, because the time budget per measurement "
        f"(--max-seconds {results.options.get('max_seconds')}) would have been exceeded. Ratios are ratios of "
        "medians. Files read come from deltainc's WindowReport (files the pruned scans plan to read).",
        "",
    ]
    if results.errors:
        lines += ["**Errors:**", ""] + [f"- {name}: `{text}`" for name, text in results.errors.items()] + [""]
    verdicts = {s.name: s.verdict(results) for s in scenarios}
    lines += ["## Goals", "", "Reported, never asserted.", ""]
    lines += _table(
        ["scenario", "goal", "measured", "verdict"],
        [[f"[{s.name}](#{s.name})", s.goal, verdicts[s.name].measured, verdicts[s.name].verdict] for s in scenarios],
    )
    lines += ["", "## Machine", ""]
    machine = dict(results.machine)
    if results.load_end:
        machine["load average at end (1/5/15 min)"] = results.load_end
    lines += _table(["", ""], [[k, v] for k, v in machine.items()])
    lines += ["", "## Versions", ""]
    lines += _table(["", ""], [[k, v] for k, v in results.versions.items()])
    lines += ["", "## Spark configuration", "", "One SparkSession for the whole benchmark.", ""]
    lines += _table(["key", "value"], [[f"`{k}`", f"`{v}`"] for k, v in results.conf.items()])
    lines += ["", "## Sizes", ""]
    o = results.options
    src = results.sources
    size_rows = [
        ["rows per day per source (R)", str(o.get("rows_per_day"))],
        ["days of history generated", str(o.get("days"))],
        ["history sizes D (daily, growth, floor)", ", ".join(map(str, results.sizes))],
        ["days reloaded (reload)", str(o.get("reload_days"))],
        ["day streamed (stream)", str(o.get("stream_day"))],
        [
            "join",
            f"left on TrxId, look_back_time {o.get('look_back')}, max_waiting_time {o.get('max_wait')} days, "
            "include_waiting, target keys TrxId + SepaId",
        ],
        [
            "target partitioned by",
            "RecDate (the job's default layout)"
            if o.get("partition_by") is None
            else ", ".join(o.get("partition_by") or []) or "(not partitioned)",
        ],
        ["repetitions asked", str(o.get("repeat"))],
    ]
    if src is not None:
        generated = "reused from an earlier run" if src.reused else "generated by this run"
        size_rows += [
            ["source A (ledger)", f"{src.rows_a:,} rows, {src.files_a} files, {_mib(src.bytes_a)}"],
            ["source B (payment engine)", f"{src.rows_b:,} rows, {src.files_b} files, {_mib(src.bytes_b)}"],
            ["first RecDate", src.spec.start.isoformat()],
            ["sources", f"{generated}; generation took {fmt_s(src.generated_s)}"],
        ]
    lines += _table(["", ""], size_rows)
    for scenario in scenarios:
        verdict = verdicts[scenario.name]
        against = f"**Goal:** {scenario.goal}."
        if verdict.measured not in (NOT_RUN, IN_SECTION):
            against += f" **Measured:** {verdict.measured}" + (
                f": **{verdict.verdict}**." if verdict.verdict != "-" else "."
            )
        lines += ["", f"## {scenario.name}", "", f"Measures {scenario.measures}.", "", against, ""]
        lines += scenario.body(results)
    lines += ["", "## Phase timings", ""]
    lines += _table(["phase", "wall time"], [[name, fmt_s(seconds)] for name, seconds in results.phases])
    lines += [
        "",
        "## What we found",
        "",
        "_To be written by a human from the numbers above and the profile findings._",
        "",
    ]
    return "\n".join(lines)
