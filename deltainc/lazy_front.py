"""The lazy public fronts' one mechanism: a package's exported names, each imported from its home module on first
use, so that `deltainc status` reads job files and Delta logs without importing pyspark (~0.5 s)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The module-level `__getattr__` of a lazy front: a name of `homes` imported from its module on first use.

    Args:
        package: the front's module name, for the error on a name it does not export.
        homes: each exported name's home module.

    Example:
        ```python
        __getattr__ = lazy_names(__name__, {"inc_join": "deltainc.join.engine"})
        ```
    """

    def exported(name: str) -> Any:
        if name in homes:
            return getattr(importlib.import_module(homes[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return exported
