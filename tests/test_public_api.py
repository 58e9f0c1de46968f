"""The public API (`from deltainc import ...`, `from deltainc.pipeline import ...`): each name is what its
home module defines, whichever of the package's modules were imported before."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pytest

import deltainc
import deltainc.pipeline

pytestmark = pytest.mark.pure


def _every_module() -> list[str]:
    return [info.name for info in pkgutil.walk_packages(deltainc.__path__, "deltainc.")]


@pytest.mark.parametrize("package", [deltainc, deltainc.pipeline], ids=lambda p: p.__name__)
def test_every_exported_name_is_its_home_modules_object_after_every_module_was_imported(package: ModuleType) -> None:
    for name in _every_module():
        if not name.endswith("__main__"):
            importlib.import_module(name)  # a submodule named like an export would now shadow it
    for name in package.__all__:
        value = getattr(package, name)
        assert not isinstance(value, ModuleType), f"{package.__name__}.{name} is a module, not the API's {name}"
        home = importlib.import_module(value.__module__)
        assert getattr(home, name) is value, f"{package.__name__}.{name} is not {value.__module__}.{name}"
