"""Pipeline jobs over Delta sources in one folder, with their target and state there, and the days they run on:
shared by the pipeline tests that build their jobs in Python (asof, B side, NULL keys, schema evolution, feature
jobs, checks from the logs)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deltainc.pipeline.job.job_config import JobConfig


def job_config(
    root: Path,
    name: str,
    start_date: dt.date,
    join: dict[str, Any],
    /,
    *,
    keys: list[str],
    b_keys: list[str],
    sources: tuple[str, str] = ("a", "b"),
    max_window: int = 1,
    **changes: Any,
) -> JobConfig:
    """The job `name` joining root/<sources[0]> with root/<sources[1]>; its target root/target_<name>, identified
    by `keys` and `b_keys`; its state in root/state. `changes` update a section (a dict: `join=` too) or replace a
    value."""
    document: dict[str, Any] = {
        "name": name,
        "start_date": start_date,
        "max_window": max_window,
        "source_a": {"path": str(root / sources[0])},
        "source_b": {"path": str(root / sources[1])},
        "join": join,
        "target": {"path": str(root / f"target_{name}"), "keys": keys, "b_keys": b_keys},
        "state": {"path": str(root / "state")},
    }
    for section, value in changes.items():
        document[section] = {**document[section], **value} if isinstance(value, dict) else value
    return JobConfig.model_validate(document)


def feature_job_config(
    root: Path, name: str, start_date: dt.date, features: list[dict[str, Any]], /, *, max_window: int = 1
) -> JobConfig:
    """The feature job `name`: the spine root/trx (identified by TrxId) with `features`, its [[features]]
    entries; its target root/target_<name>, its state root/state."""
    return JobConfig.model_validate(
        {
            "name": name,
            "start_date": start_date,
            "max_window": max_window,
            "source_a": {"path": str(root / "trx")},
            "features": features,
            "target": {"path": str(root / f"target_{name}"), "keys": ["TrxId"]},
            "state": {"path": str(root / "state")},
        }
    )


def days_from(start: dt.date) -> tuple[Callable[[int], dt.date], Callable[[int, int], dt.datetime]]:
    """`day(n)`: the date n days after `start`; `at(n, hour)`: that day at `hour` o'clock."""

    def day(n: int) -> dt.date:
        return start + dt.timedelta(days=n)

    def at(n: int, hour: int) -> dt.datetime:
        return dt.datetime(start.year, start.month, start.day) + dt.timedelta(days=n, hours=hour)

    return day, at
