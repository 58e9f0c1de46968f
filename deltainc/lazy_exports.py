"""Names a package exports but imports only on first use: importing pyspark costs ~0.5 s that `status` never needs."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` that imports each name of `homes` from its module (the value)."""

    def __getattr__(name: str) -> Any:
        if name in homes:
            return getattr(importlib.import_module(homes[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
