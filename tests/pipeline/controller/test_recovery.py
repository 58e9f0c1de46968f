"""A killed run is recovered by the next run, with no person involved (docs/design.md#3-crash-safety).

Each test runs the job in a real process that is killed (`kill -9`), or stopped (SIGTERM, Ctrl-C)
at a named point, then runs the job again at once, and compares the whole target and the watermark with
those of an uninterrupted run.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from chispa import assert_df_equality
from cli_jobs import job_toml
from processes import KILLER, commits_of, env, lock_taken_at, python
from pyspark.sql import SparkSession

from deltainc.demo.sample_data import SampleSpec, write_sources
from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.delta.delta_log import open_table
from deltainc.pipeline.inspect.status_from_logs import status_from_log
from deltainc.pipeline.job.job_config import load_job
from deltainc.pipeline.state.processes import COMMAND, Process, decode
from deltainc.pipeline.state.store import read_state, state_paths
from deltainc.settings import Settings

pytestmark = pytest.mark.processes

START = dt.date(2025, 5, 1)
DAYS = 6
LAST = START + dt.timedelta(days=DAYS - 1)

# The command line as a scheduler starts it, stopped at the moment named by argv[2] of its argv[3]-th window: a
# signal to the process, or to its whole process group (as Airflow and a terminal's Ctrl-C send it: Spark's JVM
# gets it too).
STOPPED = textwrap.dedent(
    """
    import os, signal, sys, threading
    from deltainc.cli import app as cli, spark_start
    from deltainc.pipeline.controller import commands as controller
    from deltainc.pipeline.controller import window as window_run

    def send(sig, group):
        os.killpg(os.getpgrp(), sig) if group else os.kill(os.getpid(), sig)

    def later(sig, group, seconds=0.3):
        threading.Timer(seconds, send, (sig, group)).start()

    def on_call(module, name, act):
        real, calls = getattr(module, name), []
        def wrapped(*args, **kwargs):
            calls.append(1)
            act(len(calls))
            return real(*args, **kwargs)
        setattr(module, name, wrapped)

    moment, nth = sys.argv[2], int(sys.argv[3])
    if moment == "start-up":  # while the JVM starts, to the group: the JVM goes too
        on_call(spark_start, "start_spark", lambda n: later(signal.SIGTERM, True, 1.0))
    elif moment == "join":  # while the main thread waits inside a Spark call of the window (a daily one's write)
        on_call(window_run, "null_keys", lambda n: n == nth and later(signal.SIGTERM, False))
    elif moment == "commit":  # to the group while the window's target commit is under way
        on_call(window_run, "write_window", lambda n: n == nth and later(signal.SIGTERM, True))
    elif moment == "between windows":  # the window before it is committed, this one has not begun
        on_call(controller, "process_planned", lambda n: n == nth and send(signal.SIGTERM, False))
    elif moment == "ctrl-c":  # SIGINT to the group during the window's join
        on_call(window_run, "null_keys", lambda n: n == nth and later(signal.SIGINT, True))
    sys.exit(cli.main(["run", sys.argv[1]]))
    """
)


# The command line with its output redirected to a file, as cron's `>> log 2>&1`; killed in the second window.
KILLED_CLI = textwrap.dedent(
    """
    import os, signal, sys
    from deltainc.cli import app as cli
    from deltainc.pipeline.controller import window as pipeline

    real, calls = pipeline.null_keys, []

    def null_keys(*args, **kwargs):  # as the window's reads begin
        calls.append(1)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)

    pipeline.null_keys = null_keys
    sys.exit(cli.main(["run", sys.argv[1]]))
    """
)


# The command line killed (`kill -9`) at the phase named by argv[2] of its first window; just before, it writes the
# Spark driver JVMs it runs to drivers.json (as a lock row names them), for the test to watch them end.
KILLED_AT = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    from pathlib import Path
    from deltainc.cli import app as cli, spark_start
    from deltainc.pipeline.state.processes import encode, spark_drivers
    from deltainc.pipeline.controller import window as window_run

    def kill():
        Path("drivers.tmp").write_text(encode(spark_drivers()))
        os.replace("drivers.tmp", "drivers.json")  # whole, never seen half-written by the watcher
        os.kill(os.getpid(), signal.SIGKILL)

    def on_call(module, name, act):
        real = getattr(module, name)
        def wrapped(*args, **kwargs):
            act()
            return real(*args, **kwargs)
        setattr(module, name, wrapped)

    def once_a_jvm_runs():  # the driver JVM is launched, Spark is not up yet
        while not spark_drivers():
            time.sleep(0.01)
        kill()

    phase = sys.argv[2]
    if phase == "before Spark":  # the lock is taken, no JVM yet
        on_call(spark_start, "start_spark", kill)
    elif phase == "during Spark's start":
        on_call(spark_start, "start_spark", lambda: threading.Thread(target=once_a_jvm_runs, daemon=True).start())
    elif phase == "during the join":
        on_call(window_run, "null_keys", lambda: threading.Timer(0.3, kill).start())
    elif phase == "during the target commit":
        on_call(window_run, "write_window", lambda: threading.Timer(0.3, kill).start())
    elif phase == "during the bookkeeping":  # the target commit is done, the run-log row not
        on_call(window_run, "append_run", kill)
    sys.exit(cli.main(["run", sys.argv[1]]))
    """
)

# The command line, sent SIGTERM (to its own process only, as `kill -TERM $!`) 0.3 s into its first window's join;
# just before, it writes the Spark driver JVMs it runs to drivers.json.
TERMINATED_IN_JOIN = textwrap.dedent(
    """
    import os, signal, sys, threading
    from pathlib import Path
    from deltainc.cli import app as cli
    from deltainc.pipeline.state.processes import encode, spark_drivers
    from deltainc.pipeline.controller import window as window_run

    real = window_run.null_keys

    def terminate():
        Path("drivers.tmp").write_text(encode(spark_drivers()))
        os.replace("drivers.tmp", "drivers.json")  # whole, never seen half-written by the watcher
        os.kill(os.getpid(), signal.SIGTERM)

    def null_keys(*args, **kwargs):  # as the window's reads begin
        threading.Timer(0.3, terminate).start()
        return real(*args, **kwargs)

    window_run.null_keys = null_keys
    sys.exit(cli.main(["run", sys.argv[1]]))
    """
)


def watch_ends(root: Path, command: subprocess.Popen[str] | None = None) -> tuple[dict[int, float], threading.Thread]:
    """Watch, in a thread, for the driver JVMs the command names in `root`/drivers.json and the command itself: the
    epoch second each was first seen gone (a JVM under its pid, the command under -1), polled every 5 ms."""
    gone: dict[int, float] = {}

    def watch() -> None:
        drivers: tuple[Process, ...] | None = None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if drivers is None and (root / "drivers.json").exists():
                drivers = decode((root / "drivers.json").read_text())
            for process in drivers or ():
                if process.pid not in gone and not process.alive():
                    gone[process.pid] = time.time()
            if command is not None and -1 not in gone and command.poll() is not None:
                gone[-1] = time.time()
            if drivers is not None and len(gone) == len(drivers) + (command is not None):
                return
            time.sleep(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    return gone, watcher


@pytest.fixture(scope="module")
def sources(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("recovery_sources")
    spec = SampleSpec(start=START, days=DAYS, rows_per_day=5, seed=7, p_no_b=0.2, p_orphan_b=0.1, p_two_b=0.1)
    write_sources(spark, spec, str(root / "a"), str(root / "b"))
    return str(root / "a"), str(root / "b")


@pytest.fixture(scope="module")
def uninterrupted(spark: SparkSession, sources: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("uninterrupted")
    job = write_job(root, sources)
    run(load_job(job), spark=spark, settings=Settings(state_dir=root / "state"))
    return root


def write_job(root: Path, sources: tuple[str, str], max_window: int = 3) -> Path:
    path = root / "job.toml"
    places = {"target": str(root / "target"), "state": str(root / "state")}
    path.write_text(job_toml("trx", *sources, start=START, max_window=max_window, **places))
    return path


def assert_same_as_uninterrupted(spark: SparkSession, root: Path, uninterrupted: Path) -> None:
    actual = spark.read.format("delta").load(str(root / "target"))
    expected = spark.read.format("delta").load(str(uninterrupted / "target"))
    assert_df_equality(actual, expected.select(*actual.columns), ignore_row_order=True)
    watermarks = [read_state(state_paths(str(r / "state")), "trx").watermark for r in (root, uninterrupted)]
    assert watermarks[0] == watermarks[1] is not None


def runs(spark: SparkSession, root: Path) -> list[dict[str, object]]:
    rows = spark.read.format("delta").load(str(root / "state" / "runs")).orderBy("started_at").collect()
    return [r.asDict() for r in rows]


@pytest.mark.parametrize(
    ("point", "how"),
    [
        ("start", "at"),  # before the join: the lock is taken, nothing else written
        pytest.param("writing", "during", marks=pytest.mark.smoke),  # during the target commit
        ("written", "at"),  # after the target commit, before the run-log row that moves the watermark
        ("watermark", "at"),  # after the run-log row (watermark and lock release), before the run returns
    ],
    ids=["before_the_join", "during_the_target_commit", "after_the_target_commit", "after_the_watermark"],
)
def test_a_run_killed_at_any_point_is_recovered_by_the_next_run(
    spark: SparkSession, sources: tuple[str, str], uninterrupted: Path, tmp_path: Path, point: str, how: str
) -> None:
    job = write_job(tmp_path, sources)
    run(load_job(job), until=START + dt.timedelta(days=2), spark=spark)  # the first window, committed
    killed = python(tmp_path, "-c", KILLER, str(job), point, how)  # killed in the next window
    assert killed.returncode == -9, killed.stderr[-2000:]
    dead = read_state(state_paths(str(tmp_path / "state")), "trx").holder
    assert dead is not None
    run(load_job(job), spark=spark)  # the next run, at once, in this process (its JVM is up already)
    assert_same_as_uninterrupted(spark, tmp_path, uninterrupted)
    if point != "watermark":  # the killed run still held the lock: the next run says it took it over
        took = [r["took_over"] for r in runs(spark, tmp_path) if r["took_over"]]
        assert len(took) == 1 and "gone" in str(took[0]), took
        # its Spark driver, which may still have been committing, was named in the lock row and ended first
        assert [p.role for p in dead.processes] == ["command", "spark driver"], dead.processes
        assert not any(p.alive() for p in dead.processes)
        taken = lock_taken_at(str(tmp_path / "state" / "locks"), "trx")
        late = [(v, t) for v, t in commits_of(str(tmp_path / "target"), dead.run_id) if t >= taken]
        assert late == [], (late, taken)  # no commit of the killed run after the next run took the lock


def test_sigterm_or_ctrl_c_at_any_moment_logs_the_run_cancelled_frees_the_lock_and_the_next_run_goes_on(
    spark: SparkSession, sources: tuple[str, str], uninterrupted: Path, tmp_path: Path
) -> None:
    # One window a day. Before each stop one window is committed: by the stopped run itself, stopped between its
    # first and second windows, or, for the stops inside a window, in this process (whose JVM is warm), the stopped
    # run then stopped in its first window. The next run goes on.
    job = write_job(tmp_path, sources, max_window=1)
    paths = state_paths(str(tmp_path / "state"))

    def logged() -> list[dict[str, object]]:  # the run log, empty before its table exists
        return runs(spark, tmp_path) if (tmp_path / "state" / "runs").exists() else []

    moments = [("start-up", 143, 0), ("join", 143, 1), ("commit", 143, 1), ("between windows", 143, 2)]
    moments += [("ctrl-c", 130, 1)]  # (moment, exit code, the stopped run's window it is stopped in)
    for moment, code, nth in moments:
        if nth == 1:  # one window a day: the next day is the number of windows committed so far
            committed = sum(r["status"] == "succeeded" for r in logged())
            run(load_job(job), until=START + dt.timedelta(days=committed), spark=spark)
        before = logged()
        stopped = python(tmp_path, "-c", STOPPED, str(job), moment, str(nth), new_session=True)
        said = "cancelled (SIGTERM)" if code == 143 else "interrupted"
        # two lines: at the signal, what is being stopped; at the end, what was stopped (and the last commit)
        lines = stopped.stderr.strip().splitlines()
        assert len(lines) == 2, (moment, stopped.stderr)
        stopping, error = lines
        how = "SIGTERM" if code == 143 else "Ctrl-C"
        assert stopped.returncode == code and error.startswith(f"deltainc: error: {said}: trx: stopped "), (
            moment,
            stopped.stderr,
        )
        assert stopping.startswith(f"deltainc: stopping ({how}): trx run, "), (moment, stopped.stderr)
        holder = read_state(paths, "trx").holder
        assert holder is None or holder.finished, moment  # the lock is free
        log = logged()
        added = [r["status"] for r in log[len(before) :]]
        # what the stopped run itself logged: its committed window where it had one, then its cancellation
        assert added == {0: [], 1: ["cancelled"], 2: ["succeeded", "cancelled"]}[nth], moment
        if added:
            stop = log[-1]
            assert stop["releases_lock"] and stop["error"].startswith(("Cancelled", "KeyboardInterrupt"))
            assert read_state(paths, "trx").watermark == log[-2]["watermark_unit"], moment
            # every commit of the stopped run came before its cancelled row freed the lock, and that row says
            # which one landed in the stopped window (none, or the version it names)
            commits = commits_of(str(tmp_path / "target"), str(stop["run_id"]))
            freed = stop["started_at"].timestamp() + stop["duration_s"]  # naive local time, as pyspark gives it
            assert all(t <= freed for _, t in commits), (moment, commits, freed)
            landed = [v for v, _ in commits if v != (log[-2]["target_version"] if nth == 2 else None)]
            assert landed == ([] if stop["target_version"] is None else [stop["target_version"]]), moment
    again = run(load_job(job), spark=spark)  # the next run, in this process (its JVM is up already)
    assert again.watermark == LAST.isoformat()
    log = runs(spark, tmp_path)
    assert all(r["took_over"] is None for r in log)  # every stop freed the lock: none was taken over
    cancelled = [r for r in log if r["status"] == "cancelled"]
    assert [r["window_start"] for r in cancelled] == [(START + dt.timedelta(days=d)).isoformat() for d in (1, 2, 3, 4)]
    assert_same_as_uninterrupted(spark, tmp_path, uninterrupted)


def test_a_run_holds_the_lock_before_spark_starts_and_a_second_run_exits_3_at_once_without_a_jvm(
    spark: SparkSession, sources: tuple[str, str], uninterrupted: Path, tmp_path: Path
) -> None:
    job = write_job(tmp_path, sources)
    paths = state_paths(str(tmp_path / "state"))
    command = [sys.executable, "-m", "deltainc", "run", str(job)]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    first = subprocess.Popen(command, cwd=tmp_path, env=env(tmp_path), **pipes)  # type: ignore[call-overload]
    while (holder := read_state(paths, "trx").holder if (tmp_path / "state" / "locks").exists() else None) is None:
        assert first.poll() is None, first.communicate()
        time.sleep(0.05)
    # taken before Spark started: the first lock row names the command alone, no Spark driver yet
    assert [p.role for p in holder.processes] == [COMMAND], holder
    shown = status_from_log(load_job(job), Settings(), runs=1).lock  # `status`, no JVM: running, alive
    assert shown is not None and shown["run_id"] == holder.run_id and shown["alive"], shown
    assert shown["processes"][0]["role"] == "command" and shown["processes"][0]["running"], shown
    logs = tmp_path / "second-spark-logs"  # a JVM started by the second run would write its log there
    second = subprocess.run(
        command, cwd=tmp_path, env={**env(tmp_path), "DELTAINC_SPARK_LOG_DIR": str(logs)}, timeout=120, **pipes
    )  # type: ignore[call-overload]
    assert second.returncode == 3 and f"is locked by run {holder.run_id}" in second.stderr, second.stderr
    assert not logs.exists()  # it started no JVM
    assert first.wait(timeout=300) == 0, first.communicate()
    windows = [(r["window_start"], r["window_end"]) for r in runs(spark, tmp_path) if r["status"] == "succeeded"]
    assert len(windows) == len(set(windows))  # no window written twice
    assert_same_as_uninterrupted(spark, tmp_path, uninterrupted)


def test_a_killed_runs_redirected_log_shows_every_window_it_committed_and_spark_logs_to_one_file_per_job(
    spark: SparkSession, sources: tuple[str, str], uninterrupted: Path, tmp_path: Path
) -> None:
    job = write_job(tmp_path, sources)
    logs = tmp_path / "logs"
    environment = {**env(tmp_path), "DELTAINC_SPARK_LOG_DIR": str(logs)}
    with (tmp_path / "cron.log").open("w") as cron_log:
        killed = subprocess.run(
            [sys.executable, "-c", KILLED_CLI, str(job)],
            cwd=tmp_path,
            env=environment,
            stdout=cron_log,
            stderr=subprocess.STDOUT,
            timeout=300,
            check=False,
        )
    assert killed.returncode == -9
    committed = [r for r in runs(spark, tmp_path) if r["status"] == "succeeded"]
    first = f"{committed[0]['window_start']}..{committed[0]['window_end']}"
    assert (tmp_path / "cron.log").read_text().startswith(f"{first}  same_time ")
    again = subprocess.run(
        [sys.executable, "-m", "deltainc", "run", str(job)],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert sorted(p.name for p in logs.iterdir()) == ["spark-trx.log"]  # both commands, one file
    assert_same_as_uninterrupted(spark, tmp_path, uninterrupted)


@pytest.mark.parametrize(
    "phase",
    ["before Spark", "during Spark's start", "during the join", "during the target commit", "during the bookkeeping"],
    ids=[
        "before_spark",
        "during_sparks_start",
        "during_the_join",
        "during_the_target_commit",
        "during_the_bookkeeping",
    ],
)
def test_a_command_killed_at_any_phase_leaves_no_jvm_that_can_commit_once_the_next_run_holds_the_lock(
    spark: SparkSession, sources: tuple[str, str], uninterrupted: Path, tmp_path: Path, phase: str
) -> None:
    job = write_job(tmp_path, sources)
    run(load_job(job), until=START + dt.timedelta(days=2), spark=spark)  # the first window, committed
    killed = python(tmp_path, "-c", KILLED_AT, str(job), phase)
    assert killed.returncode == -9, killed.stderr[-2000:]
    dead = read_state(state_paths(str(tmp_path / "state")), "trx").holder
    assert dead is not None and not dead.finished
    drivers = decode((tmp_path / "drivers.json").read_text())
    assert len(drivers) == (0 if phase == "before Spark" else 1), drivers
    gone, watcher = watch_ends(tmp_path)
    run(load_job(job), spark=spark)  # the next run, at once, in this process (its JVM is up already)
    watcher.join(timeout=300)
    taken = lock_taken_at(str(tmp_path / "state" / "locks"), "trx")
    assert sorted(gone) == sorted(p.pid for p in drivers)
    # the order: the killed run's last commit, its JVM gone, the next run holding the lock
    ended = max(gone.values(), default=taken)
    assert ended <= taken, (phase, ended, taken)
    assert all(t <= ended for _, t in commits_of(str(tmp_path / "target"), dead.run_id)), phase
    assert_same_as_uninterrupted(spark, tmp_path, uninterrupted)


def test_sigterm_during_a_window_says_at_once_what_it_stops_ends_its_jvm_before_the_lock_is_freed_then_one_line(
    spark: SparkSession, sources: tuple[str, str], uninterrupted: Path, tmp_path: Path
) -> None:
    job = write_job(tmp_path, sources, max_window=1)
    run(load_job(job), until=START, spark=spark)  # the first window, committed
    command = [sys.executable, "-c", TERMINATED_IN_JOIN, str(job)]
    stopped = subprocess.Popen(command, cwd=tmp_path, env=env(tmp_path), stderr=subprocess.PIPE, text=True)
    gone, watcher = watch_ends(tmp_path, stopped)
    assert stopped.stderr is not None
    first = stopped.stderr.readline()  # as a scheduler that stops reading at its signal sees it
    first_at = time.time()
    stderr = stopped.stderr.read()
    stopped.wait(timeout=300)
    watcher.join(timeout=300)
    assert stopped.returncode == 143, stderr
    cancelled = runs(spark, tmp_path)[-1]
    assert cancelled["status"] == "cancelled" and cancelled["releases_lock"], cancelled
    # the order: the stopped run's last commit, its JVM gone, the lock freed (the cancelled row), the command's exit
    [jvm] = [pid for pid in gone if pid != -1]
    freed = open_table(str(tmp_path / "state" / "runs")).history(1)[0]["timestamp"] / 1000  # type: ignore[union-attr]
    commits = commits_of(str(tmp_path / "target"), str(cancelled["run_id"]))
    assert all(t <= gone[jvm] for _, t in commits), (commits, gone)
    assert gone[jvm] <= freed <= gone[-1], (gone, freed)
    # one line: what was stopped and what the target's last commit is
    window, last = cancelled["window_start"], open_table(str(tmp_path / "target")).history(1)[0]  # type: ignore[union-attr]
    if cancelled["target_version"] is None:
        of = json.loads(last["userMetadata"])["window"]
        said = f"stopped in window {window}, which committed nothing; the target's last commit is version "
        said += f"{last['version']} (window {of})"
    else:
        said = f"stopped in window {window} after its target commit landed (version {last['version']}); the "
        said += "watermark stays and the next run writes the window again"
    assert stderr.strip().splitlines() == [f"deltainc: error: cancelled (SIGTERM): trx: {said}"]
    # the first line, at the signal: before the JVM was gone, naming the job, the command and the window
    assert first_at < gone[jvm] < gone[-1], (first_at, gone)
    stopping = f"deltainc: stopping (SIGTERM): trx run, window {window}: nothing after the target's last commit "
    assert first.startswith(stopping + "will land (a target commit under way is finished first)"), first
    again = run(load_job(job), spark=spark)  # the next run goes on, without taking over
    assert again.watermark == LAST.isoformat()
    assert all(r["took_over"] is None for r in runs(spark, tmp_path))
    assert_same_as_uninterrupted(spark, tmp_path, uninterrupted)
