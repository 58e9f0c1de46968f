"""Mutual exclusion across processes (DESIGN invariant 6): many processes racing for one job's lock, no JVM.

Each process, in every round, waits at a barrier with the others, then reads the lock, judges the holder and
tries the compare and swap. A process that wins holds a marker file created with O_EXCL while it holds the
lock: a second holder at the same moment would find the marker there. Nothing here starts Spark.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from multiprocessing.synchronize import Barrier
from pathlib import Path

from deltainc.pipeline.lock import judge, release_lock, take_lock
from deltainc.pipeline.state import ensure_state_tables, read_state, state_paths

PROCESSES = 8
ROUNDS = 25
LEASE = 120


def _contend(root: str, marker: str, number: int, barrier: Barrier, results: mp.Queue) -> None:  # type: ignore[type-arg]
    """One racing process: its counts of held, lost, won, and of times it found another holder inside."""
    paths = state_paths(root)
    counts = {"held": 0, "lost": 0, "won": 0, "overlaps": 0}
    for round_number in range(ROUNDS):
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


def test_many_processes_racing_for_one_lock_never_hold_it_together(tmp_path: Path) -> None:
    root, marker = str(tmp_path / "state"), str(tmp_path / "holder")
    ensure_state_tables(state_paths(root))
    context = mp.get_context("spawn")
    barrier, results = context.Barrier(PROCESSES, timeout=120), context.Queue()
    workers = [
        context.Process(target=_contend, args=(root, marker, number, barrier, results)) for number in range(PROCESSES)
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
    assert totals["overlaps"] == 0, totals
    assert totals["won"] >= ROUNDS and totals["lost"] > 0, totals  # every round had a winner, and commits raced
    assert sum(totals.values()) - totals["overlaps"] == PROCESSES * ROUNDS
    assert read_state(state_paths(root), "j").holder is None
