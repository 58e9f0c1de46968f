"""A source that names another job (`job = "trx"` in a source section): which sections do, what such a section
becomes when the job file loads (that job's target's final rows, its state folder, and the job itself, whose
settings decide those rows)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from deltainc.errors import ConfigError

# A job as job_config.JobConfig holds it: job_config imports this module, so the type cannot be named here.
JobConfig = Any

__all__ = ["source_sections", "resolve_upstream", "reading", "check_dating", "reads_by_day"]

# What load_job sets on a source that names a job; a job file gives none of them.
_SET_BY_LOAD = ("path", "table", "job_state", "upstream")


def source_sections(data: Any) -> list[tuple[str, dict[str, Any]]]:
    """The job file's source sections (source_a, source_b, each [[features]]) as they are in its TOML, by name."""
    if not isinstance(data, dict):
        return []
    sections: list[tuple[str | int, Any]] = [(name, data.get(name)) for name in ("source_a", "source_b")]
    features = data.get("features")
    sections += list(enumerate(features)) if isinstance(features, list) else []
    return [(f"features[{name}]" if isinstance(name, int) else name, s) for name, s in sections if isinstance(s, dict)]


def resolve_upstream(
    section: dict[str, Any],
    label: str,
    job_dir: Path,
    chain: tuple[str, ...],
    load: Callable[[Path, tuple[str, ...]], JobConfig],
) -> JobConfig:
    """The job a source section names (a job file beside this one), loaded with `load`; the section made that
    job's target's final rows: its path or table, `IsFinal` (and the section's own `where`), its state folder and
    the upstream job itself (its settings decide the rows).

    Args:
        section: the source's TOML table, changed in place.
        label: how messages name the section, e.g. "jobs/scores.toml: source_a".
        job_dir: the folder of the job files.
        chain: the names of the jobs that read this one, in order (a cycle is one of them named again).
        load: loads a job file given the chain below it (`job_config._load`).

    Example: `resolve_upstream({"job": "trx"}, "scores.toml: source_a", Path("jobs"), ("scores",), _load)` returns
    trx's job and sets the section's path to trx's target.
    """
    name = section["job"]
    if not isinstance(name, str):
        raise ConfigError(f"{label}.job: the name of a job in {job_dir}, got {name!r}")
    given = [key for key in _SET_BY_LOAD if key in section]
    if given:
        raise ConfigError(f"{label}: give job or {given[0]}, not both (job = {name!r} reads that job's target)")
    if name in chain:
        raise ConfigError(f"{label}.job: the jobs read each other in a cycle: {' -> '.join((*chain, name))}")
    file = job_dir / f"{name}.toml"
    if not file.is_file():
        jobs = ", ".join(sorted(p.stem for p in job_dir.glob("*.toml"))) or "none"
        raise ConfigError(f"{label}.job: no job {name!r} in {job_dir} (jobs there: {jobs})")
    upstream = load(file, chain)
    section.update(reading(upstream, section.get("where")))
    return upstream


def reading(upstream: JobConfig, where: str | None = None) -> dict[str, Any]:
    """A source section's fields for `upstream`'s target's final rows (what `job = "..."` becomes): its path or
    table, `IsFinal` and `where`, its state folder and the job itself. A job built in code reads another this way.

    Example: ``{"name": "risk", **reading(trx), "how": "asof", ...}`` is a feature source of trx's final rows.
    """
    where = "IsFinal" if where is None else f"IsFinal AND ({where})"
    table = {"path": upstream.target.path} if upstream.target.path is not None else {"table": upstream.target.table}
    state = {} if upstream.state.path is None else {"job_state": upstream.state.path}
    return {"job": upstream.name, "where": where, "upstream": upstream, **table, **state}


def check_dating(label: str, upstream: JobConfig, job: JobConfig) -> None:
    """ConfigError unless `job` dates its rows as `upstream` dates its target's: the same inc_col, and the same
    time_uom or a day job on an hour or minute job (`reads_by_day`), never a finer job on a day job."""
    if upstream.join.inc_col != job.join.inc_col or not (
        upstream.join.time_uom == job.join.time_uom or reads_by_day(upstream, job)
    ):
        unit, own = upstream.join.time_uom.value, job.join.time_uom.value
        why = (
            f"; a job of {own}s cannot read a job of {unit}s, whose RecDate is a DATE that names no {own} (set "
            f"time_uom = '{unit}' here, or make {upstream.name} a job of {own}s)"
            if upstream.join.inc_col == job.join.inc_col and unit == "day"
            else ""
        )
        raise ConfigError(
            f"{label}.job: {upstream.name}'s target is dated by {upstream.join.inc_col} in "
            f"{unit}s; join.inc_col and join.time_uom must be the same here (they are "
            f"{job.join.inc_col} and {own}), or this job a day job on an hour or minute job{why}"
        )


def reads_by_day(upstream: JobConfig, job: JobConfig) -> bool:
    """Whether `job` is a day job on an hour or minute job's target: it reads that target's final rows by the day
    of their TIMESTAMP RecDate, a day once the upstream's watermark has passed the day's last unit."""
    return job.join.time_uom.value == "day" and upstream.join.time_uom.value in ("hour", "minute")
