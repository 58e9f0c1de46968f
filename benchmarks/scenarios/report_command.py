"""`deltainc report` as a fresh process: a year of daily runs and three years of hourly windows, and the hourly
page opened in a real browser.

The run logs are written with the state layer's own writer (delta-rs), one commit per daily run, and for the hourly
job one commit per day of 24 windows (1,095 commits; one per window would take this script an hour to build).
Both commands are the real command line in a fresh process on the same state, alternated (report, status, report,
status, ...) after one warm-up of each: `status` (which also answers from the logs without a JVM) is the yardstick
of a process's start. JAVA_HOME points nowhere, so a command that started a JVM would fail: Spark jobs 0. The run
log's Delta version is the same before and after: Delta commits 0. A Markdown table and the goal's verdict (the
`report` scenario of `python -m benchmarks.run`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

from benchmarks.small_job import bench_env
from benchmarks.timing import run_process
from deltainc.demo.jobs import left_job_toml
from deltainc.pipeline.state import RunRecord, state_paths
from deltainc.pipeline.state.store import _record_rows, append, create_table, run_schema

START = dt.datetime(2023, 1, 1)


def _record(job: str, index: int, when: dt.datetime, label: str, uom: str) -> RunRecord:
    return RunRecord(
        job, f"run-{index}", "run", label, label, "succeeded" if index % 97 else "failed",
        None if index % 97 else "ValueError: a failed run", when + dt.timedelta(minutes=5), 30.0 + index % 7,
        rows_same_time=1000 + index % 50, rows_a_late=40, rows_b_late=30 + index % 9, rows_a_timed_out=index % 4,
        rows_a_waiting=200 + index % 60, files_read_a=3, bytes_read_a=3_000_000, files_read_b=5, bytes_read_b=5_000_000,
        files_read_target=2, bytes_read_target=1_000_000, time_uom=uom, watermark=label if index % 97 else None,
        releases_lock=True, rows_too_late=index % 3, spark_start_s=12.0, join_s=10.0, write_s=5.0,
        bookkeeping_s=3.0 + index % 7, source_latest=json.dumps({"source_a": label, "source_b": label}),
    )  # fmt: skip


def build(root: Path, uom: str, windows: int, per_commit: int) -> None:
    """The job `trx` (a day or an hour job) and a run log of `windows` runs, `per_commit` rows a commit."""
    import pyarrow as pa

    shutil.rmtree(root, ignore_errors=True)
    (root / "jobs").mkdir(parents=True)
    toml = left_job_toml("trx", f"{root}/a", f"{root}/b", f"{root}/target", start=START.date(), look_back_time=1,
                         max_waiting_time=2)  # fmt: skip
    if uom == "hour":
        toml = toml.replace("[join]\n", '[join]\ntime_uom = "hour"\n')
    # Every check of the run log, with thresholds the runs above pass (the sources are never written: no lag).
    toml += ("[checks]\nwindows = 30\ntimed_out_share = { warn = 0.5 }\ntoo_late = { warn = 100 }\n"
             "freshness_hours = { warn = 10000000 }\nduration_s = { warn = 1000000 }\n")  # fmt: skip
    (root / "jobs" / "trx.toml").write_text(toml)
    runs = state_paths(str(root / "state")).runs
    create_table(runs, run_schema())
    step = dt.timedelta(days=1) if uom == "day" else dt.timedelta(hours=1)
    batch = []
    for index in range(windows):
        when = START + step * index
        label = when.date().isoformat() if uom == "day" else when.isoformat()
        batch.append(_record_rows(_record("trx", index, when + step, label, uom)))
        if len(batch) == per_commit:
            append(runs, pa.concat_tables(batch))
            batch = []
    if batch:
        append(runs, pa.concat_tables(batch))


def _version(root: Path) -> int:
    from deltalake import DeltaTable

    return DeltaTable(str(root / "state" / "runs")).version()


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """The wall seconds and the CPU seconds (user + system) of one fresh process running `argv`."""
    done = run_process([sys.executable, "-m", "deltainc", *argv], env=env)
    return done.seconds, done.cpu_s


def measure(root: Path, pairs: int) -> dict[str, object]:
    env = {**bench_env(root), "JAVA_HOME": "/nonexistent", "PYSPARK_SUBMIT_ARGS": "--no-such-option"}
    page = root / "trx.html"
    commands = {"report": ["report", "trx", "--out", str(page)], "status": ["status", "trx"], "check": ["check", "trx"]}
    before = _version(root)
    for argv in commands.values():  # warm-up: the file cache
        _timed(argv, env)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(pairs):
        for name, argv in commands.items():
            times[name].append(_timed(argv, env))
    return {
        **times,
        "commits": _version(root) - before,
        "page_bytes": page.stat().st_size,
    }


def browser(page: Path) -> dict[str, float | int]:
    """Open the page from its file offline in Debian's chromium; the seconds to its load event, the SVG elements."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium")
        try:
            tab = chromium.new_context(offline=True).new_page()
            started = time.perf_counter()
            tab.goto(page.as_uri(), wait_until="load")
            tab.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            took = time.perf_counter() - started
            elements = int(tab.evaluate("() => document.querySelectorAll('svg *').length"))
        finally:
            chromium.close()
    return {"load_s": took, "svg_elements": elements}


GOALS = {
    "report": ("`deltainc report` for a year of daily runs in at most 2 s as a fresh process, no JVM (issue 49)", 2.0),
    "check": ("`deltainc check` for a year of daily runs in at most 1 s as a fresh process, no JVM (issue 64)", 1.0),
}


def _goal(name: str, daily_walls: list[float], days: int) -> str:
    """The goal's verdict, judged on the daily job's `name` command when its run log holds a year (365 runs)."""
    goal, limit = GOALS[name]
    median = statistics.median(daily_walls)
    if days < 365:
        return f"Goal: {goal}. Measured {median:.2f} s for {days} daily runs: not judged (fewer than a year)."
    return f"Goal: {goal}. Measured {median:.2f} s: **{'MET' if median <= limit else 'MISSED'}**."


def report_time(data: Path, pairs: int, days: int) -> list[str]:
    """The report: `pairs` report/status pairs on a log of `days` daily runs and one of 3 x `days` days of hourly
    windows, both built under `data`.

    Example: `lines = report_time(Path("bench-data/report"), 3, 365)`.
    """
    cases = (
        (f"{days} daily runs", "day", days, 1),
        (f"{3 * days} days of hourly windows", "hour", 24 * 3 * days, 24),
    )
    load_before = os.getloadavg()
    lines = [
        "| job | run-log rows / commits | `report` wall s (median, min..max) | `report` CPU s (median) | `status` "
        "wall s, CPU s (median) | `check` wall s, CPU s (median) | Spark jobs | Delta commits | page | browser: "
        "load s, SVG elements |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    daily: dict[str, list[float]] = {}
    for name, uom, windows, per_commit in cases:
        root = data.absolute() / uom
        build(root, uom, windows, per_commit)
        found = measure(root, pairs)
        seen = browser(root / "trx.html")
        report, status, check = found["report"], found["status"], found["check"]
        assert isinstance(report, list) and isinstance(status, list) and isinstance(check, list)
        walls, cpus = [w for w, _ in report], [c for _, c in report]
        daily = daily or {"report": walls, "check": [w for w, _ in check]}
        pair = " | ".join(f"{statistics.median(w for w, _ in t):.2f}, {statistics.median(c for _, c in t):.2f}"
                          for t in (status, check))  # fmt: skip
        lines.append(
            f"| {name} | {windows:,} / {-(-windows // per_commit):,} | {statistics.median(walls):.2f} "
            f"({min(walls):.2f}..{max(walls):.2f}) | {statistics.median(cpus):.2f} | {pair} | 0 | "
            f"{found['commits']} | {int(str(found['page_bytes'])) / 1024:,.0f} KiB | {seen['load_s']:.2f}, "
            f"{seen['svg_elements']:,} |"
        )
    load_after = os.getloadavg()
    return [
        f"{pairs} pairs, {days} days: load average {load_before[0]:.1f} at the start, {load_after[0]:.1f} at the end. "
        "Each command is a fresh `python -m deltainc` process, report, status and check alternated after one "
        "warm-up each; JAVA_HOME points nowhere (no JVM can start). On busy cores the wall time is mostly waiting "
        "for a core: the CPU seconds (user + system of the process) are what the command costs.",
        "",
        *lines,
        "",
        _goal("report", daily["report"], days),
        "",
        _goal("check", daily["check"], days),
    ]
