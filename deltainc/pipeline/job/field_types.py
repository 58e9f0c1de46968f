"""The field types the job file's sections share: names, locations, column lists, strict numbers and flags, and
the strict, frozen base every section is built on."""

from __future__ import annotations

import os
import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from deltainc.join.options import Text
from deltainc.storage import spark_location

__all__ = [
    "Section",
    "Location",
    "Name",
    "Columns",
    "NonNegativeInt",
    "StrictBool",
    "absolute_location",
    "looks_like_path",
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
    """A local path made absolute against the current directory; a URI (file:/..., abfss://) is kept as is, but
    S3's s3:// and s3n:// become s3a://, the name Spark's Hadoop reads S3 by.

    Spark resolves relative paths against the directory its JVM started in, which need not be the
    directory the command runs in; absolute paths make a job mean the same wherever it is run from.
    """
    if "://" in location or location.startswith(("file:", "dbfs:")):
        return spark_location(location)  # S3 as Spark names it (s3a://); delta-rs gets s3:// (deltainc.storage)
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
