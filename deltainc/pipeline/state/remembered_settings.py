"""The settings a job's target was built with, remembered in its run log, and refusing a run when they changed.

A target is correct only as the result of one set of join settings (docs/design.md#the-contract: every window
equals a one-shot run). A run under changed settings would mix two meanings in one table, and rows left
waiting under the old ones might never be read again; so a change is refused, naming each setting, until the
target is rebuilt.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from deltainc.errors import ConfigError
from deltainc.pipeline.job.job_config import JobConfig

__all__ = ["SettingChange", "SettingsChangedError", "built_with", "encode", "changes", "refusal", "check_unchanged"]


@dataclass(frozen=True)
class SettingChange:
    """One remembered setting whose value in the job file differs from the one the target was built with."""

    setting: str
    before: object
    now: object


class SettingsChangedError(ConfigError):
    """A job's settings changed since its target was built; the message names each change and the ways out."""

    def __init__(self, message: str, changed: tuple[SettingChange, ...]) -> None:
        super().__init__(message)
        self.changed = changed


def built_with(job: JobConfig) -> dict[str, object]:
    """The settings that decide which rows the target holds, by their names in the job file (JSON values)."""
    join, target = job.join, job.target
    if job.features:
        return _feature_job_built_with(job)
    asof = {f"join.{name}": getattr(join, name) for name in ("asof_strategy", "asof_col", "asof_col_b")}
    assert job.source_b is not None
    return {
        "start_date": job.start_date.isoformat(),
        "source_a.where": job.source_a.where,
        "source_b.where": job.source_b.where,
        "join.how": join.how,
        "join.join_cols": list(join.join_cols),
        "join.join_cond": join.join_cond,
        "join.inc_col": join.inc_col,
        "join.time_uom": join.time_uom,
        "join.look_back_time": join.look_back_time,
        "join.max_waiting_time": join.max_waiting_time,
        "join.include_waiting": join.include_waiting,
        "join.enforce_sliding_join_window": join.enforce_sliding_join_window,
        "target.keys": list(target.keys),
        "target.b_keys": list(target.b_keys),
        **(asof if join.how == "asof" else {}),
    }


def _feature_job_built_with(job: JobConfig) -> dict[str, object]:
    """A feature job's remembered settings: the spine's, the sources by name, and each source's join."""
    spine: dict[str, object] = {
        "start_date": job.start_date.isoformat(),
        "source_a.where": job.source_a.where,
        "join.how": None,  # as a two-source job records it: a job turned into a feature job is a change
        "join.inc_col": job.join.inc_col,
        "join.time_uom": job.join.time_uom,
        "join.include_waiting": job.join.include_waiting,
        "target.keys": list(job.target.keys),
        "features": [f.name for f in job.features],
    }
    for feature in job.features:
        spine[feature.role] = feature.model_dump(mode="json", exclude={"path", "table", "name"}, exclude_defaults=False)
    return spine


def encode(settings: Mapping[str, object]) -> str:
    """The settings as the run log stores them: one JSON object, keys sorted."""
    return json.dumps(dict(settings), sort_keys=True)


def changes(recorded: Mapping[str, object] | None, current: Mapping[str, object]) -> tuple[SettingChange, ...]:
    """The settings whose value differs; one the record does not know (added by a later version) is no change."""
    if recorded is None:
        return ()
    return tuple(
        SettingChange(name, recorded[name], value)
        for name, value in current.items()
        if name in recorded and recorded[name] != value
    )


def _show(value: object) -> str:
    if isinstance(value, Enum):  # a TimeUnit, quoted as the job file writes it: 'day'
        value = value.value
    return json.dumps(value) if not isinstance(value, str) else repr(value)


def refusal(job: JobConfig, changed: tuple[SettingChange, ...], command: str) -> SettingsChangedError:
    """The error refusing `command` on `job`: each changed setting, old and new value, and the ways out."""
    lines = [
        f"{command}: job {job.name!r} changed since its target was built, so its rows would mean two things "
        f"(rows waiting under the old settings might never be read again):"
    ]
    lines += [f"{c.setting}: {_show(c.before)} -> {_show(c.now)}" for c in changed]
    lines.append(
        "ways out: restore the old value(s); or recompute the whole target under the new settings with "
        f"`deltainc run {job.name} --rebuild` (one window from start_date to the latest RecDate); "
        "or give the job a new name and a new target and backfill that"
    )
    return SettingsChangedError("\n".join(lines), changed)


def check_unchanged(job: JobConfig, recorded: Mapping[str, object] | None, command: str) -> None:
    """Raise SettingsChangedError when the job file's settings differ from the ones its target was built with."""
    changed = changes(recorded, built_with(job))
    if changed:
        raise refusal(job, changed, command)
