"""Mutual exclusion across processes (docs/design.md#6-mutual-exclusion): many processes racing for one job's lock,
no JVM; on a local disk and in S3 (a real server, tests/support/s3_server.py).

Each process, in every round, waits at a barrier with the others, then reads the lock, judges the holder and
tries the compare and swap. A process that wins holds a marker file created with O_EXCL while it holds the
lock: a second holder at the same moment would find the marker there. Nothing here starts Spark.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
import uuid
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest
from s3_server import BUCKET, S3Server

from deltainc.pipeline.state.lock import release_lock, take_lock
from deltainc.pipeline.state.model import judge
from deltainc.pipeline.state.store import ensure_state_tables, read_state, state_paths

pytestmark = pytest.mark.processes

PROCESSES = 8
ROUNDS = 25
LEASE = 120


def _contend(root: str, marker: str, number: int, rounds: int, barrier: Barrier, results: mp.Queue) -> None:  # type: ignore[type-arg]
    """One racing process: its counts of held, lost, won, and of times it found another holder inside."""
    paths = state_paths(root)
    counts = {"held": 0, "lost": 0, "won": 0, "overlaps": 0}
    for round_number in range(rounds):
        barrier.wait()
        run_id = f"p{number}-r{round_number}"
        holder = read_state(paths, "j").holder
        if holder is not None and judge(holder, LEASE).alive:
            counts["held"] += 1
            continue
        if not take_lock(paths.locks, "j", run_id, holder):
            counts["lost"] += 1
            continue
        counts["won"] += 1
        try:
            handle = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            counts["overlaps"] += 1
        else:
            time.sleep(0.01)
            os.close(handle)
            os.remove(marker)
        release_lock(paths.locks, "j", run_id)
    results.put(counts)


def race(root: str, marker: str, processes: int, rounds: int) -> dict[str, int]:
    """`processes` processes racing for the lock of the state at `root` for `rounds` rounds: their totals."""
    ensure_state_tables(state_paths(root))
    context = mp.get_context("spawn")
    barrier, results = context.Barrier(processes, timeout=120), context.Queue()
    workers = [
        context.Process(target=_contend, args=(root, marker, number, rounds, barrier, results))
        for number in range(processes)
    ]
    for worker in workers:
        worker.start()
    totals = {"held": 0, "lost": 0, "won": 0, "overlaps": 0}
    for _ in workers:
        for name, value in results.get(timeout=300).items():
            totals[name] += value
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    return totals


def test_many_processes_racing_for_one_lock_never_hold_it_together(tmp_path: Path) -> None:
    root = str(tmp_path / "state")
    totals = race(root, str(tmp_path / "holder"), PROCESSES, ROUNDS)
    assert totals["overlaps"] == 0, totals
    assert totals["won"] >= ROUNDS and totals["lost"] > 0, totals  # every round had a winner, and commits raced
    assert sum(totals.values()) - totals["overlaps"] == PROCESSES * ROUNDS
    assert read_state(state_paths(root), "j").holder is None


@pytest.mark.service
def test_processes_racing_for_a_lock_in_s3_never_hold_it_together(server: S3Server, tmp_path: Path) -> None:
    # delta-rs commits to S3 with a conditional write (If-None-Match): the server refuses the second writer
    root = f"s3a://{BUCKET}/{uuid.uuid4().hex[:8]}/state"
    processes, rounds = 4, 8
    totals = race(root, str(tmp_path / "holder"), processes, rounds)
    assert totals["overlaps"] == 0, totals
    assert totals["won"] >= rounds and totals["lost"] > 0, totals
    assert read_state(state_paths(root), "j").holder is None
