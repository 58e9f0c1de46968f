"""Airflow 3: recompute hours of parcel_scans that are processed already (a past hour's sources corrected, an
Airflow backfill or a cleared past run of deltainc_parcel_scans), triggered by hand with the hours to recompute:

    airflow dags trigger deltainc_parcel_scans_rerun -c '{"start": "2025-03-01T04:00", "end": "2025-03-01T05:00"}'

`start` and `end` are the first and the last hour, inclusive (for a cleared data interval [s, e): s and e minus one
hour), as the hourly run's "processed already" line names them. Then `deltainc check`, as after every run.
"""

from __future__ import annotations

import os
from datetime import timedelta

import pendulum
from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import DAG, Param

JOB = "parcel_scans"
DELTAINC = os.environ.get("DELTAINC", "/opt/deltainc/.venv/bin/deltainc")
PROJECT = os.environ.get("DELTAINC_PROJECT", "/opt/deltainc")

with DAG(
    dag_id=f"deltainc_{JOB}_rerun",
    schedule=None,  # triggered by hand
    start_date=pendulum.datetime(2025, 3, 1, tz="UTC"),
    params={"start": Param("2025-03-01T00:00", type="string"), "end": Param("2025-03-01T00:00", type="string")},
    default_args={"cwd": PROJECT},
):
    rerun = BashOperator(
        task_id="rerun",
        bash_command=f'{DELTAINC} rerun {JOB} --start "{{{{ params.start }}}}" --end "{{{{ params.end }}}}"',
        retries=3,  # exit 3: the hourly run is busy; 2 (an hour not processed yet) fails again at once
        retry_delay=timedelta(minutes=5),
        execution_timeout=timedelta(hours=2),
        skip_on_exit_code=None,
    )
    check = BashOperator(task_id="check", bash_command=f"{DELTAINC} check {JOB} --fail-on-warn", skip_on_exit_code=None)
    rerun >> check
