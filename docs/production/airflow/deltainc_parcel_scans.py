"""Airflow 3: the hourly job parcel_scans (conf/jobs/parcel_scans.toml), each hour once its loads are done.

Each DAG run processes its data interval's hours and no later one: `deltainc run --until` the last whole hour
before the interval's end. A cleared or backfilled past hour is processed already: its run says so and names the
`deltainc rerun` that recomputes it (deltainc_parcel_scans_rerun.py runs it). Then `deltainc check` fails the DAG
run when the job is unhealthy. docs/production/scheduling.md explains each setting.
"""

from __future__ import annotations

import os
import threading
from datetime import timedelta

import pendulum
from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import DAG

JOB = "parcel_scans"
# How the workers reach deltainc: its command and the folder holding conf/ (set here, or in the environment).
DELTAINC = os.environ.get("DELTAINC", "/opt/deltainc/.venv/bin/deltainc")
PROJECT = os.environ.get("DELTAINC_PROJECT", "/opt/deltainc")
# A run that takes longer is stopped with SIGTERM (it ends cleanly: see STOP_GRACE); then retried.
RUN_TIMEOUT = timedelta(seconds=float(os.environ.get("DELTAINC_RUN_TIMEOUT_S", 45 * 60)))
# How long a stopped deltainc may take to end cleanly: 20 s plus the job's longest target commit (`write_s`).
STOP_GRACE = 120.0
# The last whole hour before the data interval's end, the job's unit (`ts`: 2025-03-01T05:00:00+00:00, no space).
# The same with either timetable: the cron trigger's interval ends at its logical date, an interval's at its end.
UNTIL = "{{ (data_interval_end - macros.timedelta(hours=1)) | ts }}"


class DeltaincCommand(BashOperator):
    """A BashOperator that, when stopped (execution_timeout, a cancel), logs what deltainc says while it stops.

    Airflow stops reading a BashOperator's output when it sends SIGTERM; deltainc's lines (what it stops at once,
    how it ended seconds later) come after, and are read here until deltainc exits or STOP_GRACE runs out.
    """

    def on_kill(self) -> None:
        super().on_kill()  # SIGTERM to deltainc's process group
        process = self.subprocess_hook.sub_process
        if process is None or process.stdout is None:
            return
        output = process.stdout

        def log_the_rest() -> None:
            for line in iter(output.readline, b""):
                self.log.info("%s", line.decode(errors="backslashreplace").rstrip())

        reader = threading.Thread(target=log_the_rest, daemon=True)
        reader.start()
        reader.join(STOP_GRACE)


with DAG(
    dag_id=f"deltainc_{JOB}",
    schedule="@hourly",
    start_date=pendulum.datetime(2025, 3, 1, tz="UTC"),
    catchup=False,  # deltainc catches up itself: one run processes every pending hour up to its own
    max_active_runs=1,  # two runs of the job at once: the second exits 3 (locked)
    default_args={"cwd": PROJECT},
):
    run = DeltaincCommand(
        task_id="run",
        bash_command=f'{DELTAINC} run {JOB} --until "{UNTIL}"',
        retries=3,  # exit 3 (locked: another run is busy), 1 (a failure), 143 (the timeout's SIGTERM)
        retry_delay=timedelta(minutes=5),
        execution_timeout=RUN_TIMEOUT,
        skip_on_exit_code=None,  # no exit code of `run` means "skipped": 0 is done or nothing pending
    )
    check = BashOperator(
        task_id="check",
        bash_command=f"{DELTAINC} check {JOB} --fail-on-warn",
        retries=0,  # 4 (an error level breached) and 5 (a warn level) are facts, not a hiccup: fail at once
        skip_on_exit_code=None,
    )
    run >> check
