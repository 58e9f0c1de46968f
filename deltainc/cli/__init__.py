"""The command line layer: `deltainc run|rerun|backfill|status|validate|verify|unlock|profile|demo`.

`app.main` is the entry point; `parser` the grammar; `context` what a command gets; `*_commands` the commands;
`output` what they print and how they fail; `spark_start` where Spark's own output goes.
"""

from __future__ import annotations

from deltainc.cli.app import build_parser, main

__all__ = ["main", "build_parser"]
