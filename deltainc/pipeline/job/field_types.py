"""The field types the job file's sections share: names, locations, column lists, strict numbers and flags, the
options that take one of a closed set of names (enums: the TOML, JSON and logs read the same strings, code compares
members mypy checks), the strict, frozen base every section is built on, and the keys a section knows."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Annotated, Any, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from deltainc.join.options import Text
from deltainc.settings import spark_location
from deltainc.text_enum import TextEnum

__all__ = [
    "Section",
    "Location",
    "Name",
    "Columns",
    "NonNegativeInt",
    "StrictBool",
    "absolute_location",
    "looks_like_path",
    "FeatureHow",
    "ForwardWrite",
    "Corrections",
    "SchemaEvolution",
    "known_keys",
]

_JOB_NAME = re.compile(r"[A-Za-z0-9_-]+")


def _unique(columns: list[str]) -> list[str]:
    seen: dict[str, str] = {}
    for column in columns:
        first = seen.get(column.lower())
        if first is not None:
            same = "" if first == column else f" (same as {first!r}: Spark column names ignore case)"
            raise ValueError(f"duplicate column {column!r}{same}")
        seen[column.lower()] = column
    return columns


def absolute_location(location: str) -> str:
    """A local path made absolute against the current directory (Spark resolves relative ones against where its
    JVM started, which need not be where the command runs); a URI is kept, but s3:// and s3n:// become s3a://."""
    if "://" in location or location.startswith(("file:", "dbfs:")):
        return spark_location(location)  # S3 as Spark names it (s3a://); delta-rs gets s3:// (deltainc.settings)
    return os.path.abspath(os.path.expanduser(location))


def looks_like_path(value: str) -> bool:
    """A location rather than a catalog table name: a URI, or a path with a slash or starting with . or ~."""
    return "://" in value or value.startswith(("/", ".", "~", "file:")) or os.sep in value


def _named(value: str) -> str:
    if not _JOB_NAME.fullmatch(value):
        raise ValueError(f"expected letters, digits, '_' or '-' only, got {value!r}")
    return value


Location = Annotated[Text, AfterValidator(absolute_location)]
Name = Annotated[str, AfterValidator(_named)]  # a job's or a feature source's name: it keys state and columns
Columns = Annotated[list[Text], AfterValidator(_unique)]
NonNegativeInt = Annotated[int, Field(ge=0, strict=True)]
StrictBool = Annotated[bool, Field(strict=True)]


class Section(BaseModel):
    """A section of the job file: unknown keys are refused and a loaded job cannot change."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class FeatureHow(TextEnum):
    """How a `[[features]]` source joins the spine (`features.how`; its aliases, e.g. left_outer, are normalised)."""

    LEFT = "left"
    ASOF = "asof"


class ForwardWrite(TextEnum):
    """How a forward window's two slices reach the target (`target.forward_write`)."""

    REPLACE_WHERE = "replace_where"  # Delta's replaceWhere of the two slices
    MERGE = "merge"  # one MERGE of the same slices


class Corrections(TextEnum):
    """What a rerun does with rows the sources corrected in the past (`target.corrections`)."""

    APPLY = "apply"  # recompute through the watermark: the target equals a reload
    KEEP = "keep"  # keep what the target has; such rows are only counted as too late


class SchemaEvolution(TextEnum):
    """What a column added to a source does to the target (`target.schema_evolution`)."""

    NONE = "none"  # the run is refused, naming the column
    ADD_COLUMNS = "add_columns"  # added through Delta's schema evolution (rows already there read NULL)


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
    """The keys of `model`'s section at `section` (a pydantic error's location without its last part, e.g.
    `("join",)` or `("features", 0)`), [] when it names none: an unknown key's message suggests the closest one."""
    current: type[BaseModel] | None = model
    for part in section:
        if current is None:
            return []
        if isinstance(part, int):  # an entry of a list of sections: the list's own model is already current
            continue
        field = current.model_fields.get(part)
        current = None if field is None else _section_model(field.annotation)
    return [] if current is None else list(current.model_fields)
