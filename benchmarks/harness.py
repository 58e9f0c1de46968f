"""The benchmark's scenarios, in one registry: each a named object with what it measures, its goal beside it, the
function that runs it and how RESULTS.md shows it (the texts, what each measures and its goal, are in goals.toml).

`python -m benchmarks.run` takes its `--scenarios` from SCENARIOS (by name, or by the number older command lines
used), lists them with their goals in `--help`, runs them in the registry's order and writes a section per scenario,
goal first. A new scenario is one more entry here and one in goals.toml.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.connect_ab import measure as measure_connect
from benchmarks.report import (
    Results,
    Verdict,
    connect_check,
    connect_section,
    daily_check,
    daily_section,
    fixed_cost_check,
    fixed_cost_section,
    floor_check,
    floor_section,
    growth_check,
    growth_section,
    no_goal,
    reload_check,
    reload_section,
    stream_check,
    stream_section,
)
from benchmarks.scenarios import Bench, daily_phase, reload_phase, stream_phase
from benchmarks.session_ab import run_pairs
from deltainc.spark_compat import spark_major

if sys.version_info >= (3, 11):
    import tomllib
else:  # the backport, a dependency on 3.10
    import tomli as tomllib

__all__ = ["Context", "Scenario", "SCENARIOS", "NAMES", "select", "plan", "describe"]


@dataclass(frozen=True)
class Context:
    """What a scenario's run gets: the shared bench (session, sources, work folder, how to measure), the command
    line's options, the names chosen with `--scenarios`, the results to fill in, and its own name."""

    bench: Bench
    args: argparse.Namespace
    chosen: frozenset[str]
    results: Results
    name: str


@dataclass(frozen=True)
class Scenario:
    """One scenario of the benchmark.

    `run` fills its part of the results; scenarios that share one measurement (daily, growth, floor) share the
    same `run`, which runs once for all of them. `section` is the body of its RESULTS.md section (default: the
    Markdown report its run stored under its name) and `check` what was measured against the goal (default:
    the goal has no number computed here; its section says).
    """

    name: str  # stable, short: what `--scenarios` takes and RESULTS.md heads its section with
    number: int  # the number older command lines and write-ups use (`--scenarios 1,2,5`)
    measures: str  # one line
    goal: str  # reported, never asserted
    run: Callable[[Context], None]
    section: Callable[[Results], list[str]] | None = None
    check: Callable[[Results], Verdict] | None = None
    available: Callable[[], bool] = lambda: True  # False: chosen, but not run here (and its section says why)

    def body(self, results: Results) -> list[str]:
        if self.section is not None:
            return self.section(results)
        return results.reports.get(self.name) or ["_Not run._"]

    def verdict(self, results: Results) -> Verdict:
        if self.check is not None:
            return self.check(results)
        return no_goal(self.name in results.reports)


# --- how the scenarios run -----------------------------------------------------------------------------------


def _daily(ctx: Context) -> None:
    """daily, growth and floor: one target built up through the history sizes, every daily run measured once for
    all three (growth alone needs only the smallest and the largest size)."""
    chosen, sizes = ctx.chosen, ctx.args.sizes
    if not chosen & {"daily", "floor"}:
        sizes = sorted({sizes[0], sizes[-1]})
    ctx.results.daily = daily_phase(
        ctx.bench, sizes, naive="daily" in chosen, floor="floor" in chosen, check_sizes={sizes[0]}
    )


def _reload(ctx: Context) -> None:
    ctx.results.reload = reload_phase(ctx.bench, ctx.args.reload_days)


def _stream(ctx: Context) -> None:
    ctx.results.stream = stream_phase(ctx.bench, ctx.args.stream_day)


def _fixed_cost(ctx: Context) -> None:
    ctx.results.sessions = run_pairs(2, 2000, 40, ctx.args.repeat)


def _connect(ctx: Context) -> None:
    ctx.results.connect = measure_connect(ctx.args.data / "connect", ctx.args.repeat)


def _markdown_of(module: str, options: Callable[[argparse.Namespace], list[str]]) -> Callable[[Context], None]:
    """A run that starts `python -m module *options(args)` in its own process (its own SparkSession) and keeps the
    Markdown it prints as the scenario's section, headings moved two levels down to sit under it."""

    def run(ctx: Context) -> None:
        command = [sys.executable, "-m", module, *options(ctx.args)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        lines = done.stdout.splitlines()
        ctx.results.reports[ctx.name] = [("##" + line) if line.startswith("#") else line for line in lines]

    return run


def _small_job(args: argparse.Namespace) -> list[str]:
    """The options of a module measuring a warm daily run at R = 2,000 over 40 days, or less when the command line
    asks for less (the smoke test's sizes)."""
    return [
        "--rows-per-day", str(min(2000, args.rows_per_day)), "--days", str(min(40, args.days)),
        "--repeat", str(args.repeat),
    ]  # fmt: skip


def _report_options(args: argparse.Namespace) -> list[str]:
    """report_time's options: a pair a repetition, a year of daily runs (or --days when fewer), under --data."""
    return ["--pairs", str(args.repeat), "--days", str(min(365, args.days)), "--data", str(args.data / "report")]


def _new_days(args: argparse.Namespace) -> list[str]:
    """new_days' options: the demo's 200 rows a day (or fewer), 16 days with the first 4 unrecorded (or --days)."""
    days = max(3, min(16, args.days))
    return ["--rows-per-day", str(min(200, args.rows_per_day)), "--days", str(days), "--warm", str(min(4, days - 2))]


def _demo_options(args: argparse.Namespace) -> list[str]:
    """demo_time's options: the demo's 30 days of 200 rows (or fewer), a run a repetition, under --data."""
    sizes = ["--days", str(min(30, args.days)), "--rows-per-day", str(min(200, args.rows_per_day))]
    return [*sizes, "--repeat", str(args.repeat), "--data", str(args.data / "demo")]


def _hourly_options(args: argparse.Namespace) -> list[str]:
    """hourly_runs' options: 12 hours (or --days when fewer) after 48 of history, 300 shipments an hour (or
    --rows-per-day when fewer), under --data."""
    hours, per_hour = str(min(12, args.days)), str(min(300, args.rows_per_day))
    return ["--hours", hours, "--warm-hours", "48", "--per-hour", per_hour, "--data", str(args.data / "hourly")]


def _repeat(args: argparse.Namespace) -> list[str]:
    return ["--repeat", str(args.repeat)]


def _fresh_options(args: argparse.Namespace) -> list[str]:
    return ["--repeat", str(max(3, args.repeat)), "--data", str(args.data / "fresh")]


# --- the registry, in the order the scenarios run ----------------------------------------------------------------

_TEXTS: dict[str, dict[str, Any]] = tomllib.loads((Path(__file__).parent / "goals.toml").read_text())


def _scenario(
    name: str,
    run: Callable[[Context], None],
    section: Callable[[Results], list[str]] | None = None,
    check: Callable[[Results], Verdict] | None = None,
    available: Callable[[], bool] = lambda: True,
) -> Scenario:
    """The scenario `name`: its number, what it measures and its goal from goals.toml, bound to its code."""
    text = _TEXTS[name]
    return Scenario(name, text["number"], text["measures"], text["goal"], run, section, check, available)


SCENARIOS: tuple[Scenario, ...] = (
    _scenario("daily", _daily, daily_section, daily_check),
    _scenario("growth", _daily, growth_section, growth_check),
    _scenario("floor", _daily, floor_section, floor_check),
    _scenario("reload", _reload, reload_section, reload_check),
    _scenario("fixed-cost", _fixed_cost, fixed_cost_section, fixed_cost_check),
    _scenario("connect", _connect, connect_section, connect_check, available=lambda: spark_major() >= 4),
    _scenario("fresh-commands", _markdown_of("benchmarks.fresh_commands", _fresh_options)),
    _scenario("window-phases", _markdown_of("benchmarks.window_profile", _repeat)),
    _scenario("feature-sources", _markdown_of("benchmarks.feature_sources", _small_job)),
    _scenario("layout", _markdown_of("benchmarks.layout_ab", _small_job)),
    _scenario("too-late", _markdown_of("benchmarks.too_late", _small_job)),
    _scenario("report", _markdown_of("benchmarks.report_time", _report_options)),
    _scenario("new-days", _markdown_of("benchmarks.new_days", _new_days)),
    _scenario("demo", _markdown_of("benchmarks.demo_time", _demo_options)),
    _scenario("hourly", _markdown_of("benchmarks.hourly_runs", _hourly_options)),
    _scenario("stream", _stream, stream_section, stream_check),
)

NAMES: tuple[str, ...] = tuple(s.name for s in SCENARIOS)
_BY_KEY = {key: s for s in SCENARIOS for key in (s.name, str(s.number))}
assert len(_BY_KEY) == 2 * len(SCENARIOS), "scenario names and numbers must be unique"
assert set(_TEXTS) == set(NAMES), "goals.toml describes exactly the registered scenarios"


def select(text: str) -> tuple[str, ...]:
    """The names of the scenarios in `text`: comma-separated names or old numbers, or `all`; in registry order."""
    keys = [part.strip().lower() for part in text.split(",") if part.strip()]
    if not keys:
        raise ValueError("expected at least one scenario")
    if "all" in keys:
        return NAMES
    unknown = [key for key in keys if key not in _BY_KEY]
    if unknown:
        raise ValueError(
            f"unknown scenario {', '.join(unknown)}; expected names from {', '.join(NAMES)} (or 1..{len(NAMES)})"
        )
    wanted = {_BY_KEY[key].name for key in keys}
    return tuple(name for name in NAMES if name in wanted)


def plan(chosen: Sequence[str]) -> list[tuple[Callable[[Context], None], list[Scenario]]]:
    """What to run, in registry order: each run function once, with the chosen scenarios it measures."""
    steps: list[tuple[Callable[[Context], None], list[Scenario]]] = []
    for scenario in SCENARIOS:
        if scenario.name not in chosen or not scenario.available():
            continue
        for run, group in steps:
            if run is scenario.run:
                group.append(scenario)
                break
        else:
            steps.append((scenario.run, [scenario]))
    return steps


def describe(width: int = 100) -> str:
    """The scenarios for `--help`: name, old number, what each measures and its goal."""
    lines = ["scenarios (--scenarios takes their names, or the old numbers; they run in this order):"]
    for s in SCENARIOS:
        lines += ["", f"  {s.name} ({s.number})"]
        for label, text in (("measures", s.measures), ("goal", s.goal)):
            lines += textwrap.wrap(f"{label}: {text}", width, initial_indent=" " * 6, subsequent_indent=" " * 8)
    return "\n".join(lines)
