"""TOML read alike on every supported Python: the standard `tomllib` from 3.11, its backport `tomli` on 3.10.
The one place for that switch; the job file's loader reads with it and the command line classifies its error."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["TOMLDecodeError", "read_toml"]

TOMLDecodeError = tomllib.TOMLDecodeError


def read_toml(path: Path) -> dict[str, Any]:
    """The TOML document at `path`; raises OSError when it cannot be read and TOMLDecodeError when it is not TOML."""
    with path.open("rb") as handle:
        document: dict[str, Any] = tomllib.load(handle)
    return document
