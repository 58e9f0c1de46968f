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
from deltainc.pipeline.job.kinds import kind_of

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
    """The settings that decide which rows the target holds, by their names in the job file (JSON values): what
    the job's kind remembers (`JobKind.remembered`)."""
    return kind_of(job).remembered()


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
