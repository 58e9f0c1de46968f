"""What the command-line tests of tests/cli share besides fixtures: the record of the job processed once per module,
whether a command wrote nothing, and a job that reads another job's target."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cli_jobs import D1


def nothing_written(root: Path, name: str = "trx") -> bool:
    """Neither the target of job `name` nor the state exists under `root`: the command wrote nothing."""
    return not (root / f"target_{name}").exists() and not (root / "state").exists()


@dataclass(frozen=True)
class Processed:
    """The job processed once per module (the `processed` fixture): its folder, its job file, each run's output."""

    root: Path
    job: Path
    outputs: tuple[str, ...]


def scans_job(root: Path, scans: str, name: str = "trx_scans", reads: str = "trx") -> Path:
    """A job in root/jobs whose source A is the job `reads`'s target (`job = ...`), joined with the scans at `scans`."""
    path = root / "jobs" / f"{name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'name = "{name}"\nstart_date = {D1}\n[source_a]\njob = "{reads}"\n[source_b]\npath = "{scans}"\n'
        '[join]\nhow = "left"\njoin_cols = ["TrxId"]\nlook_back_time = 3\nmax_waiting_time = 1\n'
        'alias_a = "A2"\nalias_b = "B2"\n'
        f'[target]\npath = "{root / f"target_{name}"}"\nkeys = ["TrxId"]\nb_keys = ["ScanId"]\n'
    )
    return path
