"""The package's version, in one place: pyproject.toml reads it (setuptools' dynamic version), and so do
`deltainc.__version__` and `deltainc --version`."""

from __future__ import annotations

__version__ = "0.2.0"
