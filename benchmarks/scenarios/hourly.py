"""An hourly job run hour by hour as fresh processes, as cron starts it (issue 60 point 4).

Shipments (A, `--per-hour` an hour) and their carrier scans (B: one a few hours after the shipment, 10 % a second
one 40-60 hours later) land in two Delta tables, one append (one file) per source and hour, written with delta-rs
(no JVM). The job joins them left on ShipmentId in hours, `max_waiting_time` 30 and `look_back_time` 1. The first
`--warm-hours` are caught up in one untimed run; then each hour both sources get that hour's rows and, in
alternating order, two fresh processes run: `python -m deltainc run JOB` (the user's command) and the floor, a
process that starts the same Spark session, joins the hour's window with `inc_join` over the two Delta sources and
appends it to a Delta table of its own. Each process is timed whole; its Spark jobs come from its Spark event log;
the run's phases (Spark's start, join, write, bookkeeping) and files read of A and B from its run-log row; its Delta
commits from the target's and the state tables' logs. The `hourly` scenario of `python -m benchmarks.run`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import random
import shutil
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import write_deltalake

from benchmarks.machine import load_average
from benchmarks.small_job import counted_process, delta_commits

__all__ = ["Hour", "Shipments", "job_toml", "measure", "render", "hourly_runs"]

HOUR_ZERO = dt.datetime(2025, 3, 1, tzinfo=dt.timezone.utc)
JOB = "shipments_hourly"

FLOOR = """
import datetime, json, sys, time
from pathlib import Path
from benchmarks.floors import inc_join_window
from deltainc.pipeline.job.job_config import load_job
from deltainc.spark import get_spark
clock = time.perf_counter()
spark = get_spark()
started = time.perf_counter() - clock
job, hour, out = load_job(Path(sys.argv[1])), datetime.datetime.fromisoformat(sys.argv[2]), sys.argv[3]
clock = time.perf_counter()
inc_join_window(spark, job, hour).write.format("delta").mode("append").save(out)
print(json.dumps({"spark_start_s": started, "work_s": time.perf_counter() - clock}))
"""


@dataclass(frozen=True)
class Hour:
    """One scheduled hour: the run's and the floor's whole-process seconds, and what the run log and logs say."""

    hour: str
    run_first: bool
    run_s: float  # `python -m deltainc run JOB`, the whole process
    spark_start_s: float  # the run log's phases
    join_s: float
    write_s: float
    bookkeeping_s: float
    duration_s: float  # the run log's whole window (their sum)
    run_jobs: int  # Spark jobs, from the process's event log
    commits: int  # Delta commits: target and state tables
    files_a: int  # the run log's files read
    files_b: int
    floor_s: float  # the floor's whole process
    floor_start_s: float  # its Spark start
    floor_work_s: float  # its join and append
    floor_jobs: int
    load: float  # the 1-minute load average as the hour began


@dataclass(frozen=True)
class Shipments:
    """Every row of both sources, by hour: A's shipments and B's scans, drawn once from a seeded generator."""

    a: dict[int, list[dict[str, Any]]]
    b: dict[int, list[dict[str, Any]]]

    @classmethod
    def draw(cls, hours: int, per_hour: int, seed: int = 60) -> Shipments:
        """`per_hour` shipments in each of `hours` hours; a first scan 0-5 hours after its shipment (2 % never
        scanned), and for 10 % a second scan 40-60 hours after it (past the 30 hours a shipment waits)."""
        rng = random.Random(seed)
        a: dict[int, list[dict[str, Any]]] = {h: [] for h in range(hours)}
        b: dict[int, list[dict[str, Any]]] = {h: [] for h in range(hours)}
        for hour in range(hours):
            for number in range(per_hour):
                shipment = f"S{hour:05d}-{number:04d}"
                a[hour].append({"ShipmentId": shipment, "RecDate": _at(hour, rng), "Weight": rng.uniform(0.1, 30)})
                delays = [] if rng.random() < 0.02 else [rng.choice((0, 0, 1, 1, 1, 2, 2, 3, 4, 5))]
                if rng.random() < 0.10:
                    delays.append(rng.randint(40, 60))
                for scan, delay in enumerate(delays):
                    if hour + delay < hours:
                        row = {
                            "ScanId": f"{shipment}-{scan}",
                            "ShipmentId": shipment,
                            "RecDate": _at(hour + delay, rng),
                        }
                        b[hour + delay].append({**row, "Depot": f"D{rng.randint(1, 40):02d}"})
        return cls(a, b)


def _at(hour: int, rng: random.Random) -> dt.datetime:
    """A moment within hour `hour` after hour zero."""
    return HOUR_ZERO + dt.timedelta(hours=hour, seconds=rng.randint(0, 3599))


def _append(path: Path, rows: list[dict[str, Any]], schema: pa.Schema) -> None:
    """One hour's rows appended to the Delta table at `path` as one file (delta-rs: no JVM)."""
    write_deltalake(str(path), pa.Table.from_pylist(rows, schema=schema), mode="append")


A_SCHEMA = pa.schema([("ShipmentId", pa.string()), ("RecDate", pa.timestamp("us", "UTC")), ("Weight", pa.float64())])
B_SCHEMA = pa.schema(
    [
        ("ScanId", pa.string()),
        ("ShipmentId", pa.string()),
        ("RecDate", pa.timestamp("us", "UTC")),
        ("Depot", pa.string()),
    ]
)


def job_toml(root: Path) -> str:
    """The job file: shipments left join scans on ShipmentId, in hours, waiting 30 hours, looking back 1."""
    return "\n".join(
        [
            f'name = "{JOB}"', f"start_date = {HOUR_ZERO.date().isoformat()}",
            "[source_a]", f'path = "{root}/shipments"', "[source_b]", f'path = "{root}/scans"',
            "[join]", 'how = "left"', 'join_cols = ["ShipmentId"]', 'time_uom = "hour"',
            "look_back_time = 1", "max_waiting_time = 30",
            "[target]", f'path = "{root}/target"', 'keys = ["ShipmentId"]', 'b_keys = ["ScanId"]',
        ]
    ) + "\n"  # fmt: skip


def _last_run(root: Path) -> dict[str, Any]:
    """The job's newest run-log row (delta-rs: no JVM)."""
    from deltainc.pipeline.state.model import state_paths
    from deltainc.pipeline.state.store import read_runs

    return read_runs(state_paths(str(root / "state")), JOB, limit=1)[0]


def _run(root: Path) -> tuple[float, int, int, dict[str, Any]]:
    """`python -m deltainc run JOB` once: seconds, Spark jobs, Delta commits and its run-log row."""
    before = delta_commits(root)
    seconds, jobs, _ = counted_process([sys.executable, "-m", "deltainc", "run", JOB], root, root / "events-run")
    return seconds, jobs, delta_commits(root) - before, _last_run(root)


def _floor(root: Path, hour: int) -> tuple[float, int, dict[str, float]]:
    """The floor process for `hour`: seconds, Spark jobs, and its own split (Spark's start, join and append)."""
    job_file, out = str(root / "jobs" / f"{JOB}.toml"), str(root / "floor")
    start = (HOUR_ZERO + dt.timedelta(hours=hour)).replace(tzinfo=None).isoformat()  # naive UTC, as deltainc's
    command = [sys.executable, "-c", FLOOR, job_file, start, out]
    seconds, jobs, stdout = counted_process(command, root, root / "events-floor")
    return seconds, jobs, json.loads(stdout.strip().splitlines()[-1])


def measure(root: Path, hours: int, warm: int, per_hour: int, budget_s: float = 0.0) -> tuple[float, list[Hour]]:
    """The history's catch-up seconds (not in the medians) and the scheduled hours, up to `hours` of them; with
    `budget_s` > 0 no hour starts that would, at the pace so far, end past the budget (the first always runs).
    Each hour goes to stderr as JSON as it is measured: a run cut short still shows what it measured."""
    shutil.rmtree(root, ignore_errors=True)
    (root / "jobs").mkdir(parents=True)
    (root / "jobs" / f"{JOB}.toml").write_text(job_toml(root))
    rows = Shipments.draw(warm + hours, per_hour)
    for hour in range(warm):
        _append(root / "shipments", rows.a[hour], A_SCHEMA)
        _append(root / "scans", rows.b[hour], B_SCHEMA)
    catch_up = _run(root)[0]
    _floor(root, warm - 1)  # creates the floor's table, unrecorded
    measured: list[Hour] = []
    clock = time.perf_counter()
    for offset in range(hours):
        spent = time.perf_counter() - clock
        if offset and budget_s > 0 and spent + spent / offset > budget_s:
            break
        hour, load = warm + offset, os.getloadavg()[0]
        _append(root / "shipments", rows.a[hour], A_SCHEMA)
        _append(root / "scans", rows.b[hour], B_SCHEMA)
        run_first = offset % 2 == 0
        if not run_first:
            floor = _floor(root, hour)
        run_s, jobs, commits, row = _run(root)
        if run_first:
            floor = _floor(root, hour)
        phase = {name: float(row[name] or 0.0) for name in ("spark_start_s", "join_s", "write_s", "bookkeeping_s")}
        floor_s, floor_jobs, floor_split = floor
        measured.append(
            Hour(
                hour=(HOUR_ZERO + dt.timedelta(hours=hour)).strftime("%Y-%m-%d %H:00"),
                run_first=run_first,
                run_s=run_s,
                **phase,
                duration_s=float(row["duration_s"]),
                run_jobs=jobs,
                commits=commits,
                files_a=int(row["files_read_a"]),
                files_b=int(row["files_read_b"]),
                floor_s=floor_s,
                floor_start_s=floor_split["spark_start_s"],
                floor_work_s=floor_split["work_s"],
                floor_jobs=floor_jobs,
                load=load,
            )
        )
        print(f"hourly: {json.dumps(dataclasses.asdict(measured[-1]))}", file=sys.stderr, flush=True)
    return catch_up, measured


def _median(values: list[float]) -> float:
    return statistics.median(values)


def render(catch_up: float, measured: list[Hour], per_hour: int, warm: int, load: tuple[str, str]) -> list[str]:
    """The report: one row per hour, then the medians against the goals (issue 62)."""
    lines = [
        f"# An hourly job run hour by hour as fresh processes ({per_hour} shipments an hour)",
        "",
        f"{warm} hours of history caught up in one run first ({catch_up:.1f} s, not counted); then {len(measured)} "
        "hours, each a fresh `python -m deltainc run JOB` and a fresh floor process (Spark start, `inc_join` of the "
        f"hour's window over the two Delta sources, append), alternating which runs first. Load average {load[0]} "
        f"before, {load[1]} after.",
        "",
        "| hour | first | run, whole s | Spark start | join | write | bookkeeping | Spark jobs | Delta commits "
        "| files A / B | floor, whole s | its Spark start / work | its Spark jobs | run / floor | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for h in measured:
        lines.append(
            f"| {h.hour} | {'run' if h.run_first else 'floor'} | {h.run_s:.1f} | {h.spark_start_s:.1f} | "
            f"{h.join_s:.1f} | {h.write_s:.1f} | {h.bookkeeping_s:.2f} | {h.run_jobs} | {h.commits} | "
            f"{h.files_a} / {h.files_b} | {h.floor_s:.1f} | {h.floor_start_s:.1f} / {h.floor_work_s:.1f} | "
            f"{h.floor_jobs} | {h.run_s / h.floor_s:.2f}x | {h.load:.1f} |"
        )
    runs, floors = [h.run_s for h in measured], [h.floor_s for h in measured]
    work = _median([h.duration_s - h.spark_start_s for h in measured])
    ratio = _median(runs) / _median(floors)
    bookkeeping = _median([h.bookkeeping_s for h in measured])
    lines += [
        "",
        f"Medians: run {_median(runs):.1f} s whole (its window {work:.1f} s after Spark started: join "
        f"{_median([h.join_s for h in measured]):.1f}, write {_median([h.write_s for h in measured]):.1f}, "
        f"bookkeeping {bookkeeping:.2f}), floor {_median(floors):.1f} s whole "
        f"(work {_median([h.floor_work_s for h in measured]):.1f} s); Spark jobs "
        f"{_median([h.run_jobs for h in measured]):.0f} against {_median([h.floor_jobs for h in measured]):.0f}.",
        "",
        f"- An hourly run at most 1.5x its floor: **{ratio:.2f}x** ({'MET' if ratio <= 1.5 else 'MISSED'}).",
        f"- Bookkeeping under 0.5 s: **{bookkeeping:.2f} s** ({'MET' if bookkeeping < 0.5 else 'MISSED'}).",
    ]
    return lines


def hourly_runs(root: Path, hours: int, warm: int, per_hour: int, budget_s: float = 0.0) -> list[str]:
    """The report of `measure` under `root` (emptied first), with the load average before and after.

    Example: `lines = hourly_runs(Path("bench-data/hourly"), 12, 48, 300)`.
    """
    before = load_average()
    catch_up, measured = measure(root.absolute(), hours, warm, per_hour, budget_s)
    return render(catch_up, measured, per_hour, warm, (before, load_average()))
