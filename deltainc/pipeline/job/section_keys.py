"""The keys a section of the job file knows, read from its pydantic model, so that an unknown key's message can
suggest the closest known one (a misspelt key is refused, never read as its default)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, get_args

from pydantic import BaseModel

__all__ = ["known_keys"]


def _section_model(annotation: Any) -> type[BaseModel] | None:
    """The model of a section a field holds: the field's own type, or the model inside `X | None` or `list[X]`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for inner in get_args(annotation):
        found = _section_model(inner)
        if found is not None:
            return found
    return None


def known_keys(model: type[BaseModel], section: Sequence[int | str]) -> list[str]:
    """The keys of the section at `section` (a pydantic error's location without its last part) of `model`;
    [] when the location names no section.

    Args:
        model: the model of the whole file (`JobConfig`).
        section: the path to the section, e.g. `("join",)`, or `("features", 0)` for the first `[[features]]`.

    Example:
        >>> from deltainc.pipeline.job.job_config import JobConfig
        >>> "max_waiting_time" in known_keys(JobConfig, ("join",))
        True
    """
    current: type[BaseModel] | None = model
    for part in section:
        if current is None:
            return []
        if isinstance(part, int):  # an entry of a list of sections: the list's own model is already current
            continue
        field = current.model_fields.get(part)
        current = None if field is None else _section_model(field.annotation)
    return [] if current is None else list(current.model_fields)
