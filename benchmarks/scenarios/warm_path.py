"""The warm path (issue 76 item 3): an hourly job run hour by hour under one `deltainc run JOB --every` loop, and as
Spark Connect clients of one `deltainc serve`, each hour alternately with the fresh floor of the `hourly` scenario
(a process that starts Spark, joins the hour's window with `inc_join` over the two Delta sources and appends it).

The sources, the job and the floor are the `hourly` scenario's (shipments and carrier scans, one delta-rs append per
source and hour). Per hour: the client's whole-process seconds and CPU seconds, the server JVM's CPU seconds and Spark
jobs over the same run (its /proc counters and its Spark event log), the Delta commits; the floor's seconds, CPU
seconds and Spark jobs. The `warm-path` scenario of `python -m benchmarks.run`.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from benchmarks.machine import load_average
from benchmarks.scenarios.hourly import A_SCHEMA, B_SCHEMA, JOB, Shipments, _append, _floor, job_toml
from benchmarks.small_job import bench_env, delta_commits
from benchmarks.timing import run_process

T = TypeVar("T")

__all__ = ["LoopHour", "WarmHour", "measure", "measure_loop", "render", "render_loop", "warm_path"]


@dataclass(frozen=True)
class WarmHour:
    """One scheduled hour: the client run's and the floor's costs, the client's first when `client_first`."""

    client_first: bool
    client_s: float  # `deltainc run JOB --remote URL --json`, the whole process
    client_cpu_s: float  # its own CPU (user + system)
    server_cpu_s: float  # the server JVM's CPU over the same run
    server_jobs: int  # Spark jobs the server ran for it
    commits: int  # Delta commits: target and state tables
    floor_s: float
    floor_cpu_s: float  # the floor process and its JVM
    floor_jobs: int
    load: float  # the 1-minute load average as the hour began


def _descendants_cpu(pid: int) -> float:
    """CPU seconds (user + system) of `pid` and every process under it, from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:  # ended meanwhile
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime (fields 14 and 15 of stat)
        pending += [int(child) for child in children]
    return total


def _server_jobs(events: Path) -> int:
    """Spark jobs started so far by the server, from its event log (flushed at each job's start)."""
    return sum(f.read_text().count('"Event":"SparkListenerJobStart"') for f in events.rglob("*") if f.is_file())


def _client(root: Path, url: str, server_pid: int, events: Path) -> tuple[float, float, float, int, int]:
    """One client run: its seconds and CPU seconds, the server's CPU seconds and Spark jobs, the Delta commits."""
    commits, cpu, jobs = delta_commits(root), _descendants_cpu(server_pid), _server_jobs(events)
    command = [sys.executable, "-m", "deltainc", "run", JOB, "--remote", url, "--json"]
    done = run_process(command, root, bench_env(root))
    json.loads(done.stdout)  # a run's document, or the run failed
    time.sleep(0.5)  # the server's event log of the run's last job
    return (
        done.seconds,
        done.cpu_s,
        _descendants_cpu(server_pid) - cpu,
        _server_jobs(events) - jobs,
        delta_commits(root) - commits,
    )


def _landed(root: Path, hours: int, warm: int, per_hour: int, events_name: str) -> tuple[Shipments, Path]:
    """`root` emptied, the job file written, `warm + hours` hours of rows drawn and the first `warm` landed; the
    rows and an empty folder `events_name` for Spark's event log."""
    shutil.rmtree(root, ignore_errors=True)
    (root / "jobs").mkdir(parents=True)
    (root / "jobs" / f"{JOB}.toml").write_text(job_toml(root))
    events = root / events_name
    events.mkdir()
    rows = Shipments.draw(warm + hours, per_hour)
    for hour in range(warm):
        _append(root / "shipments", rows.a[hour], A_SCHEMA)
        _append(root / "scans", rows.b[hour], B_SCHEMA)
    return rows, events


def _floor_counted(root: Path, hour: int) -> tuple[float, float, int]:
    """The floor of the `hourly` scenario for `hour`: its seconds, CPU seconds (its JVM with it) and Spark jobs."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds, jobs, _ = _floor(root, hour)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), jobs


def measure(root: Path, hours: int, warm: int, per_hour: int) -> list[WarmHour]:
    """`warm` hours caught up by one client run (not counted), then `hours` hours measured, under `root`
    (emptied first)."""
    from deltainc.connect_server import start_server

    rows, events = _landed(root, hours, warm, per_hour, "server-events")
    conf = {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.compress": "false",  # Spark 4 compresses it by default: the jobs are counted in plain text
        "spark.eventLog.dir": events.absolute().as_uri(),
    }
    server, url = start_server(root, bench_env(root), conf=conf)
    measured: list[WarmHour] = []
    try:
        _client(root, url, server.pid, events)  # the catch-up, and the server's first queries
        _floor(root, warm - 1)  # creates the floor's table, unrecorded
        for offset in range(hours):
            hour, load = warm + offset, os.getloadavg()[0]
            _append(root / "shipments", rows.a[hour], A_SCHEMA)
            _append(root / "scans", rows.b[hour], B_SCHEMA)
            client_first = offset % 2 == 0
            if not client_first:
                floor = _floor_counted(root, hour)
            client = _client(root, url, server.pid, events)
            if client_first:
                floor = _floor_counted(root, hour)
            measured.append(WarmHour(client_first, *client, *floor, load))
            print(f"warm-path: {measured[-1]}", file=sys.stderr, flush=True)
    finally:
        server.terminate()
        server.wait(timeout=120)
    return measured


@dataclass(frozen=True)
class LoopHour:
    """One hour landed under a running `deltainc run JOB --every`: how long until its watermark showed, what the
    loop spent on it, and the fresh floor's costs (the loop's first when `loop_first`)."""

    loop_first: bool
    loop_s: float  # from the hour's appends to its watermark in the run log (the look's wait included)
    window_s: float  # the window's own duration in its run-log row
    loop_cpu_s: float  # the loop process and its JVM, over the same stretch
    loop_jobs: int  # Spark jobs the loop ran for it
    commits: int  # Delta commits: target and state tables
    floor_s: float
    floor_cpu_s: float
    floor_jobs: int
    load: float


def _watermark_at(root: Path, hour: int, loop: subprocess.Popen[bytes], within_s: float = 300) -> dict[str, Any]:
    """Wait until the job's newest run-log row moves the watermark to `hour`; that row."""
    from benchmarks.scenarios.hourly import HOUR_ZERO
    from deltainc.pipeline.state.model import state_paths
    from deltainc.pipeline.state.store import read_runs

    wanted = (HOUR_ZERO + dt.timedelta(hours=hour)).replace(tzinfo=None).isoformat()
    deadline = time.monotonic() + within_s
    commits, seen = root / "state" / "runs" / "_delta_log", -1
    while time.monotonic() < deadline:
        # The run log is read only when a commit was added to it: a directory listing every 20 ms costs the
        # measured loop next to nothing of the machine's 2 cores, a delta-rs read every 50 ms did.
        count = len(list(commits.glob("*.json"))) if commits.exists() else 0
        if count != seen:
            seen = count
            rows = read_runs(state_paths(str(root / "state")), JOB, limit=1) if count else []
            if rows and rows[0].get("watermark") == wanted:
                return rows[0]
        if loop.poll() is not None:
            raise RuntimeError(f"the loop ended with exit {loop.returncode}; its log: {root / 'loop.log'}")
        time.sleep(0.02)
    raise RuntimeError(f"no watermark {wanted} within {within_s} s; the loop's log: {root / 'loop.log'}")


def _paused(loop: subprocess.Popen[bytes], measure: Callable[[], T]) -> T:
    """`measure()` with the loop and its JVM stopped (SIGSTOP), so that its looks every 0.2 s take no CPU from the
    floor it is compared with; continued (SIGCONT) after."""
    os.killpg(loop.pid, signal.SIGSTOP)
    try:
        return measure()
    finally:
        os.killpg(loop.pid, signal.SIGCONT)


def measure_loop(root: Path, hours: int, warm: int, per_hour: int) -> list[LoopHour]:
    """`warm` hours caught up by the loop's first look (not counted), then `hours` hours landed one by one under
    `deltainc run JOB --every 0.2`, each alternately with the fresh floor, under `root` (emptied first)."""
    rows, events = _landed(root, hours, warm, per_hour, "loop-events")
    confs = {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.compress": "false",
        "spark.eventLog.dir": events.as_uri(),
    }
    command = [sys.executable, "-m", "deltainc", "run", JOB, "--every", "0.2"]
    for key, value in confs.items():
        command += ["--conf", f"{key}={value}"]
    with (root / "loop.log").open("wb") as log:
        loop = subprocess.Popen(
            command, cwd=root, env=bench_env(root), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        measured: list[LoopHour] = []
        try:
            _watermark_at(root, warm - 1, loop)  # the catch-up, and the session's first queries
            _floor(root, warm - 1)  # creates the floor's table, unrecorded
            for offset in range(hours):
                hour, load = warm + offset, os.getloadavg()[0]
                loop_first = offset % 2 == 0
                if not loop_first:
                    floor = _paused(loop, functools.partial(_floor_counted, root, hour))
                commits, cpu, jobs = delta_commits(root), _descendants_cpu(loop.pid), _server_jobs(events)
                began = time.perf_counter()
                _append(root / "shipments", rows.a[hour], A_SCHEMA)
                _append(root / "scans", rows.b[hour], B_SCHEMA)
                row = _watermark_at(root, hour, loop)
                seconds = time.perf_counter() - began
                time.sleep(0.5)  # the event log of the window's last job
                spent = (_descendants_cpu(loop.pid) - cpu, _server_jobs(events) - jobs, delta_commits(root) - commits)
                if loop_first:
                    floor = _paused(loop, functools.partial(_floor_counted, root, hour))
                measured.append(LoopHour(loop_first, seconds, float(row["duration_s"]), *spent, *floor, load))
                print(f"warm-path: {measured[-1]}", file=sys.stderr, flush=True)
        finally:
            loop.terminate()
            loop.wait(timeout=120)
    return measured


def render_loop(measured: list[LoopHour], per_hour: int, warm: int, load: tuple[str, str]) -> list[str]:
    """The loop's report: one row per hour, then the medians against the goal (at most 0.15x the fresh floor)."""
    lines = [
        f"# An hourly job under one `deltainc run JOB --every 0.2` ({per_hour} shipments an hour)",
        "",
        f"{warm} hours caught up by the loop's first look (not counted); then {len(measured)} hours, each landed "
        "(one delta-rs append per source) while the loop runs, timed from the appends to the hour's watermark in "
        "the run log (the look's wait of up to 0.2 s included), and a fresh floor process, alternating which runs "
        f"first. Load average {load[0]} before, {load[1]} after.",
        "",
        "| first | loop, appends to watermark s | window s (run log) | loop CPU s | loop Spark jobs | Delta commits "
        "| floor, whole s | floor CPU s | floor Spark jobs | loop / floor (s) | loop / floor (CPU) | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for h in measured:
        lines.append(
            f"| {'loop' if h.loop_first else 'floor'} | {h.loop_s:.2f} | {h.window_s:.2f} | {h.loop_cpu_s:.1f} | "
            f"{h.loop_jobs} | {h.commits} | {h.floor_s:.1f} | {h.floor_cpu_s:.1f} | {h.floor_jobs} | "
            f"{h.loop_s / h.floor_s:.3f}x | {h.loop_cpu_s / h.floor_cpu_s:.3f}x | {h.load:.1f} |"
        )
    seconds = statistics.median(h.loop_s for h in measured) / statistics.median(h.floor_s for h in measured)
    cpu = statistics.median(h.loop_cpu_s for h in measured) / statistics.median(h.floor_cpu_s for h in measured)
    lines += [
        "",
        f"- A loop window at most 0.15x the fresh floor: **{seconds:.3f}x** in seconds "
        f"({'MET' if seconds <= 0.15 else 'MISSED'}), {cpu:.3f}x in CPU seconds.",
    ]
    return lines


def render(measured: list[WarmHour], per_hour: int, warm: int, load: tuple[str, str]) -> list[str]:
    """The report: one row per hour, then the medians against the goal (at most 0.15x the fresh floor)."""
    lines = [
        f"# An hourly job as Spark Connect clients of one `deltainc serve` ({per_hour} shipments an hour)",
        "",
        f"{warm} hours caught up by one client run first (not counted); then {len(measured)} hours, each a fresh "
        "`python -m deltainc run JOB --remote URL --json` and a fresh floor process, alternating which runs first. "
        f"Load average {load[0]} before, {load[1]} after (other engineers share the machine's 2 cores).",
        "",
        "| first | client, whole s | client CPU s | server CPU s | server Spark jobs | Delta commits "
        "| floor, whole s | floor CPU s | floor Spark jobs | client / floor (s) | (client + server) / floor (CPU) "
        "| load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for h in measured:
        lines.append(
            f"| {'client' if h.client_first else 'floor'} | {h.client_s:.1f} | {h.client_cpu_s:.1f} | "
            f"{h.server_cpu_s:.1f} | {h.server_jobs} | {h.commits} | {h.floor_s:.1f} | {h.floor_cpu_s:.1f} | "
            f"{h.floor_jobs} | {h.client_s / h.floor_s:.2f}x | "
            f"{(h.client_cpu_s + h.server_cpu_s) / h.floor_cpu_s:.2f}x | {h.load:.1f} |"
        )
    seconds = statistics.median(h.client_s for h in measured) / statistics.median(h.floor_s for h in measured)
    cpu = statistics.median(h.client_cpu_s + h.server_cpu_s for h in measured) / statistics.median(
        h.floor_cpu_s for h in measured
    )
    lines += [
        "",
        f"- A client window at most 0.15x the fresh floor: **{seconds:.2f}x** in seconds "
        f"({'MET' if seconds <= 0.15 else 'MISSED'}), {cpu:.2f}x in CPU seconds (client and server together).",
    ]
    return lines


def warm_path(root: Path, hours: int, warm: int, per_hour: int) -> list[str]:
    """The report of `measure` under `root`, with the load average before and after.

    Example: `lines = warm_path(Path("bench-data/warm-path"), 4, 24, 300)`.
    """
    before = load_average()
    looped = measure_loop((root / "loop").absolute(), hours, warm, per_hour)
    between = load_average()
    measured = measure((root / "server").absolute(), hours, warm, per_hour)
    return [
        *render_loop(looped, per_hour, warm, (before, between)),
        "",
        *render(measured, per_hour, warm, (between, load_average())),
    ]
