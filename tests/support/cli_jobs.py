"""A small left job and its Delta sources, shared by the tests that drive the command line (cli, verify, sources)."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
from dataclasses import dataclass
from pathlib import Path

import pytest
from delta_rows import write_rows

from deltainc.cli.app import main
from deltainc.demo.jobs import left_job_toml

D1, D2 = dt.date(2025, 3, 1), dt.date(2025, 3, 2)
A_SCHEMA = "TrxId long, Amount double, RecDate date"
B_SCHEMA = "SepaId long, TrxId long, Country string, RecDate date"
A_ROWS = [(1, 10.0, D1), (2, 20.0, D1), (3, 30.0, D2), (4, 40.0, D2)]
B_ROWS = [(10, 1, "NL", D1), (11, 2, "NL", D2), (12, 3, "DE", D2)]  # TrxId 2's B is a day late, 4 has none

LOOK_BACK_TIME, MAX_WAITING_TIME = 1, 2  # TrxId 2's B, a day late, matches; 4 waits two days, then times out


@dataclass(frozen=True)
class Sources:
    a: str
    b: str
    b_string_key: str  # TrxId is a string in B
    b_without_key: str  # no TrxId in B
    a_duplicates: str  # one A row twice


def settings_env(root: Path) -> dict[str, str]:
    """DELTAINC_* variables pointing every setting under `root`, sized for the 2-core test session."""
    return {
        "DELTAINC_SETTINGS_FILE": str(root / "no-settings-file.toml"),  # absent: the defaults apply
        "DELTAINC_STATE_DIR": str(root / "state"),
        "DELTAINC_JOB_DIR": str(root / "jobs"),
        "DELTAINC_WAREHOUSE_DIR": str(root / "warehouse"),
        "DELTAINC_SPARK__MASTER": "local[2]",
        "DELTAINC_SPARK__SHUFFLE_PARTITIONS": "2",
    }


def refused_run(root: Path, name: str, text: str, monkeypatch: pytest.MonkeyPatch,
                capsys: pytest.CaptureFixture[str]) -> str:  # fmt: skip
    """`deltainc run NAME` of the job file `text` (root/jobs/NAME.toml, settings under `root`), in-process: asserts
    exit 2 and that neither root/target nor the state was written; returns what it printed to stderr."""
    (root / "jobs").mkdir(exist_ok=True)
    (root / "jobs" / f"{name}.toml").write_text(text)
    monkeypatch.chdir(root)
    for variable, value in settings_env(root).items():
        monkeypatch.setenv(variable, value)
    assert main(["run", name]) == 2
    err = capsys.readouterr().err
    assert not (root / "target").exists() and not (root / "state").exists(), err
    return err


def write_job(root: Path, sources: Sources, name: str = "trx", max_window: int | None = None, **paths: str) -> Path:
    """The job file `root/jobs/<name>.toml`; its target under root; `paths` replaces a, b or target."""
    values = {"a": sources.a, "b": sources.b, "target": str(root / f"target_{name}"), **paths}
    path = root / "jobs" / f"{name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(job_toml(name, **values, start=D1, max_window=max_window))
    return path


def job_toml(
    name: str, a: str, b: str, target: str, start: dt.date, max_window: int | None = None, state: str | None = None
) -> str:
    """The tests' left job over the sample data's shape with these tolerances (`left_job_toml`)."""
    tolerances = {"look_back_time": LOOK_BACK_TIME, "max_waiting_time": MAX_WAITING_TIME}
    return left_job_toml(name, a, b, target, start=start, max_window=max_window, state=state, **tolerances)


def edit(path: Path, old: str, new: str) -> Path:
    text = path.read_text()
    assert text.count(old) == 1
    path.write_text(text.replace(old, new))
    return path


def logged_job(root: Path, monkeypatch: pytest.MonkeyPatch, name: str = "trx", max_window: int | None = None) -> Path:
    """The left job over its sources written with delta-rs (no JVM for them, partitioned by RecDate, so a window
    reads them from their logs), its settings and target under `root`, run from there: `root/jobs/<name>.toml`."""
    a, b = (write_rows(root / n, rows, schema, partition_by=["RecDate"])
            for n, rows, schema in (("a", A_ROWS, A_SCHEMA), ("b", B_ROWS, B_SCHEMA)))  # fmt: skip
    monkeypatch.chdir(root)
    for variable, value in settings_env(root).items():
        monkeypatch.setenv(variable, value)
    return write_job(root, Sources(a, b, "", "", ""), name, max_window)


def quiet(argv: list[str]) -> int:
    """`deltainc ARGV` in-process, its stdout dropped: the exit code."""
    with contextlib.redirect_stdout(io.StringIO()):
        return main(argv)


def daily_job(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`logged_job` with its first day already run: the next `run` is a daily one."""
    job = logged_job(root, monkeypatch)
    assert quiet(["run", str(job), "--until", "2025-03-01"]) == 0
    return job
