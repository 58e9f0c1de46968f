"""Loading a job: find its file by name or path, read its TOML and validate it, each problem a ConfigError line
naming the file and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from deltainc.errors import ConfigError, did_you_mean
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.section_keys import known_keys
from deltainc.pipeline.job.toml_reader import TOMLDecodeError, read_toml
from deltainc.settings import Settings, load_settings

__all__ = ["load", "load_job", "resolve_job"]


def _where(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text.lstrip(".")


def _describe(error: Any) -> str:
    kind, ctx, got = error["type"], error.get("ctx", {}), error.get("input")
    if kind == "extra_forbidden":
        *section, key = error["loc"]
        return "unknown key" + did_you_mean(str(key), known_keys(JobConfig, section))
    if kind == "missing":
        return "required key is missing"
    if kind == "greater_than_equal":
        return f"must be >= {ctx['ge']} (got {got!r})"
    if kind in ("value_error", "assertion_error"):
        return str(ctx["error"])
    return f"{error['msg']} (got {got!r})"


def load_job(path: str | Path) -> JobConfig:
    """Read and validate a job file; every problem becomes a ConfigError naming the file and the field.

    Relative paths in the file are made absolute against the working directory, so the job means the same
    tables wherever Spark's JVM was started.

    Args:
        path: the job's TOML file.

    Returns:
        The validated job (`JobConfig`): `job.source_a.path`, `job.target.keys`, `job.join.max_waiting_time`, ...

    Raises:
        ConfigError: the file is missing or not TOML, or a key is unknown, missing or invalid, naming it.

    Example:
        ```python
        from deltainc import load_job

        job = load_job("conf/jobs/bank_trx.toml")
        print(job.name, job.join.look_back_time, job.join.max_waiting_time)
        ```
    """
    path = Path(path)
    try:
        data = read_toml(path)
    except FileNotFoundError:
        raise ConfigError(f"{path}: job file not found") from None
    except TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read job file: {exc.strerror or exc}") from None
    try:
        return JobConfig.model_validate(data)
    except ValidationError as exc:
        lines = []
        for error in exc.errors():
            where = _where(error["loc"])
            lines.append(f"{path}: {where + ': ' if where else ''}{_describe(error)}")
        raise ConfigError("\n".join(lines)) from None


def resolve_job(name_or_path: str, job_dir: Path) -> Path:
    """An existing .toml path as is, else `job_dir/<name>.toml`; a ConfigError lists the jobs available."""
    given = Path(name_or_path)
    if given.suffix == ".toml" and given.is_file():
        return given
    name = name_or_path.removesuffix(".toml")
    by_name = job_dir / f"{name}.toml"
    if by_name.is_file():
        return by_name
    available = sorted(p.stem for p in job_dir.glob("*.toml")) if job_dir.is_dir() else []
    raise ConfigError(
        f"job {name_or_path!r}: no such job file and no {by_name} (jobs in {job_dir}: {', '.join(available) or 'none'})"
    )


def load(job: JobConfig | str | Path, settings: Settings | None = None) -> tuple[JobConfig, Settings]:
    """The job (a config, or a job name or file under the settings' job_dir) and the settings to run it with.

    Example: ``job, settings = load("bank_trx")``.
    """
    settings = settings or load_settings()
    if not isinstance(job, JobConfig):
        job = load_job(resolve_job(str(job), settings.job_dir))
    return job, settings
