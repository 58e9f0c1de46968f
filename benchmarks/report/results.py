"""Everything one benchmark run measured, filled in scenario by scenario and rendered after each."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from benchmarks.data import Sources
from benchmarks.scenarios.daily import DailyPoint
from benchmarks.scenarios.reload import ReloadResult
from benchmarks.scenarios.stream import StreamResult

__all__ = ["Results"]


@dataclass
class Results:
    """Everything one benchmark run measured (filled in phase by phase; rendered after each phase)."""

    command: str
    options: dict[str, Any]
    started: dt.datetime
    machine: dict[str, str]
    versions: dict[str, str]
    conf: dict[str, str]
    sizes: list[int]
    sources: Sources | None = None
    daily: list[DailyPoint] | None = None
    reload: ReloadResult | None = None
    stream: StreamResult | None = None
    sessions: dict[str, list[dict[str, Any]]] | None = None  # fixed-cost, from benchmarks.scenarios.fixed_cost
    sessions_size: tuple[int, int] = (2000, 40)
    connect: dict[str, Any] | None = None  # connect, from benchmarks.scenarios.connect
    reports: dict[str, list[str]] = field(default_factory=dict)  # scenario name -> the Markdown its module printed
    phases: list[tuple[str, float]] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    total_s: float | None = None
    load_end: str | None = None
