"""The command line layer: `deltainc run|rerun|backfill|status|validate|verify|unlock|profile|demo`."""

from __future__ import annotations

from deltainc.cli.app import main

__all__ = ["main"]
