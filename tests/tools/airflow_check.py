"""`make airflow-check`: the Airflow 3 recipes (docs/production/airflow/) run as written under a real Airflow 3.

    python tests/tools/airflow_check.py AIRFLOW_VENV

AIRFLOW_VENV holds Airflow (constraints/airflow.txt), not deltainc: the DAGs call this checkout's deltainc as the
command `DELTAINC` names (its main virtualenv's Python, this checkout first on its path), in a project folder made
here (`DELTAINC_PROJECT`) with the repository's hourly job, conf/jobs/parcel_scans.toml, and tiny Delta sources
written with delta-rs. Airflow's metadata database is SQLite in a temporary AIRFLOW_HOME (`airflow db migrate`
first). Then, with `airflow dags test` of deltainc_parcel_scans per logical hour, each after that hour's "load"
(rows appended to both sources): two scheduled hours, each moving the watermark to its own hour and its check
passing; a cleared past hour, whose run names the rerun; that rerun through deltainc_parcel_scans_rerun; the run
task alone (`airflow tasks test`) with a short execution_timeout, whose SIGTERM deltainc answers in the task log
(the line said at the signal, then the last one); then the next hour runs (the lock was freed). Run with the main
virtualenv's Python (delta-rs writes the sources); it prints one summary line, or fails naming the step.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
from deltalake import write_deltalake

ROOT = Path(__file__).resolve().parents[2]
DAGS = ROOT / "docs" / "production" / "airflow"
DAG = "deltainc_parcel_scans"
DAY = dt.datetime(2025, 3, 1, tzinfo=dt.timezone.utc)
CHECKS = '\n[checks]\nlag = { warn = 1, error = 3 }\nlast_run = "error"\n'


class CheckFailed(Exception):
    """A step failed; the message names it and shows its output."""


def hour(n: int) -> dt.datetime:
    return DAY + dt.timedelta(hours=n)


def load(project: Path, n: int) -> None:
    """Hour n's loads: two parcels, one scanned in the same hour (the other waits)."""
    stamp = pa.array([hour(n)] * 2, pa.timestamp("us", tz="UTC"))
    parcels = pa.table({"ParcelId": pa.array([10 * n + 1, 10 * n + 2], pa.int64()), "RecDate": stamp})
    scans = pa.table(
        {"ScanId": pa.array([100 * n + 1], pa.int64()), "ParcelId": pa.array([10 * n + 1], pa.int64()),
         "RecDate": stamp[:1]}
    )  # fmt: skip
    write_deltalake(str(project / "data" / "parcels"), parcels, mode="append")
    write_deltalake(str(project / "data" / "carrier_scans"), scans, mode="append")


def environment(venv: Path, home: Path, project: Path, **more: str) -> dict[str, str]:
    """Airflow's (its home, the recipes' folder, SQLite) and the DAGs' (where deltainc is), nothing of this
    process's Python or deltainc settings."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("DELTAINC", "PYTHON", "AIRFLOW", "VIRTUAL_ENV"))}
    deltainc = f"env PYTHONPATH={ROOT} {sys.executable} -m deltainc"
    return {
        **kept,
        "PATH": f"{venv / 'bin'}{os.pathsep}{kept.get('PATH', '')}",
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "DELTAINC": deltainc,
        "DELTAINC_PROJECT": str(project),
        "DELTAINC_SPARK__MASTER": "local[1]",  # sized for a tiny job on a busy machine
        "DELTAINC_SPARK__SHUFFLE_PARTITIONS": "1",
        **more,
    }


def step(name: str, command: list[str], env: dict[str, str], *, expect_ok: bool | None = True) -> str:
    """Run `command`; its output (stdout and stderr), or CheckFailed when its exit is not as expected (None: any
    exit; `airflow tasks test` exits 0 when its task failed)."""
    clock = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900, check=False)
    output = done.stdout + done.stderr
    print(f"{name}: exit {done.returncode} in {time.monotonic() - clock:.0f} s", flush=True)
    if expect_ok is not None and (done.returncode == 0) != expect_ok:
        raise CheckFailed(f"{name} exited {done.returncode}\n{output}")
    return output


def expect(name: str, output: str, *wanted: str) -> None:
    for text in wanted:
        if text not in output:
            raise CheckFailed(f"{name}: the output has no {text!r}\n{output}")


def status(env: dict[str, str], project: Path) -> dict[str, object]:
    found = subprocess.run(
        [*env["DELTAINC"].split(), "status", "parcel_scans", "--json"], cwd=project, env=env, capture_output=True,
        text=True, timeout=300, check=True,
    )  # fmt: skip
    document: dict[str, object] = json.loads(found.stdout)
    return document


def check(venv: Path, root: Path) -> str:
    home, project = root / "airflow", root / "project"
    (project / "conf" / "jobs").mkdir(parents=True)
    job = (ROOT / "conf" / "jobs" / "parcel_scans.toml").read_text() + CHECKS
    (project / "conf" / "jobs" / "parcel_scans.toml").write_text(job)
    env = environment(venv, home, project)
    airflow = str(venv / "bin" / "airflow")
    step("airflow db migrate", [airflow, "db", "migrate"], env)

    for n in range(2):  # the scheduled hours: the run at hour n+1 processes hour n, its interval's last
        load(project, n)
        said = step(f"hour {n:02d}", [airflow, "dags", "test", DAG, hour(n + 1).isoformat()], env)
        expect(f"hour {n:02d}", said, f'--until "{hour(n).isoformat()}"', f"watermark {hour(n):%Y-%m-%dT%H:%M:%S}")
        if (mark := status(env, project)["watermark"]) != f"{hour(n):%Y-%m-%dT%H:%M:%S}":
            raise CheckFailed(f"hour {n:02d}: the watermark is {mark}\n{said}")
        expect(f"hour {n:02d}", said, "parcel_scans: pass")  # the check task, --fail-on-warn
    cleared = step("cleared hour 00", [airflow, "dags", "test", DAG, hour(1).isoformat()], env)
    rerun = f"deltainc rerun parcel_scans --start {hour(0):%Y-%m-%dT%H:%M:%S} --end {hour(0):%Y-%m-%dT%H:%M:%S}"
    expect("cleared hour 00", cleared, "is processed already", rerun)
    hours = json.dumps({"start": f"{hour(0):%Y-%m-%dT%H:%M}", "end": f"{hour(0):%Y-%m-%dT%H:%M}"})
    redone = step("rerun of hour 00", [airflow, "dags", "test", f"{DAG}_rerun", "-c", hours], env)
    expect("rerun of hour 00", redone, "re-ran 2025-03-01T00:00:00", "parcel_scans: pass")

    load(project, 2)
    short = environment(venv, home, project, DELTAINC_RUN_TIMEOUT_S="6")  # SIGTERM while the run is under way
    task = [airflow, "tasks", "test", DAG, "run", hour(3).isoformat()]
    stopped = step("timed out hour 02", task, short, expect_ok=None)
    said = (
        "AirflowTaskTimeout",
        "deltainc: stopping (SIGTERM): parcel_scans run",
        "deltainc: error: cancelled (SIGTERM)",
    )
    expect("timed out hour 02", stopped, *said)  # the timeout, then deltainc's two lines in the task log
    last = step("hour 02", [airflow, "dags", "test", DAG, hour(3).isoformat()], env)
    expect("hour 02", last, f"watermark {hour(2):%Y-%m-%dT%H:%M:%S}", "parcel_scans: pass")
    return "3 scheduled hours (one after a timeout's SIGTERM), a cleared hour, a rerun"


def main() -> int:
    venv = Path(sys.argv[1]).resolve()
    root = Path(tempfile.mkdtemp(prefix="deltainc-airflow-"))
    clock = time.monotonic()
    try:
        done = check(venv, root)
    except (CheckFailed, subprocess.CalledProcessError) as exc:
        print(f"the Airflow check failed: {exc}")
        return 1
    finally:
        if not os.environ.get("KEEP"):
            shutil.rmtree(root, ignore_errors=True)
    print(f"the Airflow check: {done} under a real Airflow 3, in {time.monotonic() - clock:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
