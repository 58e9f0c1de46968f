"""The benchmark's scenarios, in one registry: each a named object with what it measures, its goal beside it, the
function that runs it and how RESULTS.md shows it (the texts, what each measures and its goal, are in goals.toml).

`python -m benchmarks.run` takes its `--scenarios` from SCENARIOS (by name, or by the number older command lines
used), lists them with their goals in `--help`, runs them in the registry's order and writes a section per scenario,
goal first. Every scenario runs in this process, on the harness's session; those that measure a command as a fresh
process start that process as the thing they time. A new scenario is one more entry here and one in goals.toml.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.harness.context import Context
from benchmarks.report.connect import connect_check, connect_section
from benchmarks.report.daily import daily_check, daily_section
from benchmarks.report.fixed_cost import fixed_cost_check, fixed_cost_section
from benchmarks.report.floor import floor_check, floor_section
from benchmarks.report.growth import growth_check, growth_section
from benchmarks.report.reload import reload_check, reload_section
from benchmarks.report.results import Results
from benchmarks.report.stream import stream_check, stream_section
from benchmarks.report.verdicts import Verdict, no_goal
from benchmarks.scenarios import feature_sources, layout, memory, reload_cost, too_late
from benchmarks.scenarios.chain import chain_runs
from benchmarks.scenarios.connect import measure as measure_connect
from benchmarks.scenarios.daily import daily_phase
from benchmarks.scenarios.demo import demo_time
from benchmarks.scenarios.explain import explain_time
from benchmarks.scenarios.first_window import first_window
from benchmarks.scenarios.fixed_cost import run_pairs
from benchmarks.scenarios.fresh_commands import fresh_commands
from benchmarks.scenarios.hourly import hourly_runs
from benchmarks.scenarios.new_days import new_days
from benchmarks.scenarios.reload import reload_phase
from benchmarks.scenarios.report_command import report_time
from benchmarks.scenarios.source_kinds import source_kinds
from benchmarks.scenarios.stream import stream_phase
from benchmarks.scenarios.warm_path import warm_path
from benchmarks.scenarios.window_phases import window_phases
from deltainc.spark_compat import spark_major

if sys.version_info >= (3, 11):
    import tomllib
else:  # the backport, a dependency on 3.10
    import tomli as tomllib

__all__ = ["Scenario", "SCENARIOS", "NAMES", "select", "plan", "describe"]


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
    sources: bool = False  # runs on the command line's sources (generated before the scenarios when chosen)

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
    """Two pairs at R = 2,000 over 40 days, or --rows-per-day and --days when smaller."""
    sizes = min(2000, ctx.args.rows_per_day), min(40, ctx.args.days)
    ctx.results.sessions = run_pairs(2, *sizes, ctx.args.repeat)
    ctx.results.sessions_size = sizes


def _connect(ctx: Context) -> None:
    ctx.results.connect = measure_connect(ctx.spark, ctx.folder, ctx.args.repeat)


def _report(body: Callable[[Context], list[str]]) -> Callable[[Context], None]:
    """A run that keeps the Markdown `body` returns as the scenario's section, headings moved two levels down to
    sit under it."""

    def run(ctx: Context) -> None:
        lines = body(ctx)
        ctx.results.reports[ctx.name] = [("##" + line) if line.startswith("#") else line for line in lines]

    return run


def _new_days(ctx: Context) -> list[str]:
    """The demo's 200 rows a day (or fewer), 16 days with the first 4 unrecorded (or --days)."""
    args = ctx.args
    days = max(3, min(16, args.days))
    return new_days(ctx.spark, ctx.folder, min(200, args.rows_per_day), days, min(4, days - 2))


def _source_kinds(ctx: Context) -> list[str]:
    """The last 6 days of the command line's history (the first a warm-up), or fewer when it is shorter; the samples
    beside the report in the scenario's folder (samples.json)."""
    last = max(2, min(6, ctx.args.days - 1))
    ctx.folder.mkdir(parents=True, exist_ok=True)
    return source_kinds(ctx.bench, last, ctx.folder / "samples.json")


def _demo(ctx: Context) -> list[str]:
    """The demo's 30 days of 200 rows (or fewer), a run a repetition."""
    return demo_time(ctx.folder, min(30, ctx.args.days), min(200, ctx.args.rows_per_day), ctx.args.repeat)


def _hourly(ctx: Context) -> list[str]:
    """12 hours (or --days when fewer) after 48 of history, 300 shipments an hour (or --rows-per-day when fewer)."""
    args = ctx.args
    return hourly_runs(ctx.folder, min(12, args.days), 48, min(300, args.rows_per_day), args.max_seconds)


def _warm_path(ctx: Context) -> list[str]:
    """6 hours (or --days when fewer) after 24 of history, 300 shipments an hour (or --rows-per-day when fewer),
    under one `run --every` loop and as clients of one `deltainc serve`."""
    args = ctx.args
    return warm_path(ctx.folder, min(6, args.days), 24, min(300, args.rows_per_day))


def _chain(ctx: Context) -> list[str]:
    """2,000 ledger rows a day (or --rows-per-day when fewer), 20 days of history (fewer when --days is smaller),
    then 6 scheduled days (or --days when fewer)."""
    args = ctx.args
    return chain_runs(
        ctx.spark, ctx.folder, min(2000, args.rows_per_day), max(2, min(20, args.days)), min(6, args.days)
    )


def _explain(ctx: Context) -> list[str]:
    """The command line's sources (100,000 rows a day over 365 days by default), the last 30 days (or a third of
    --days when fewer) run a window a day."""
    return explain_time(ctx.bench, min(30, max(3, ctx.args.days // 3)))


def _report_time(ctx: Context) -> list[str]:
    """A pair a repetition, a year of daily runs (or --days when fewer)."""
    return report_time(ctx.folder, ctx.args.repeat, min(365, ctx.args.days))


def _memory(ctx: Context) -> list[str]:
    """The command line's sources; the warm session's last 60 days (or half of --days when fewer) a window each."""
    return memory.render(memory.measure(ctx.bench, min(60, max(6, ctx.args.days // 2))))


# --- the registry, in the order the scenarios run ----------------------------------------------------------------

_TEXTS: dict[str, dict[str, Any]] = tomllib.loads((Path(__file__).parents[1] / "goals.toml").read_text())


def _scenario(
    name: str,
    run: Callable[[Context], None],
    section: Callable[[Results], list[str]] | None = None,
    check: Callable[[Results], Verdict] | None = None,
    available: Callable[[], bool] = lambda: True,
    sources: bool = False,
) -> Scenario:
    """The scenario `name`: its number, what it measures and its goal from goals.toml, bound to its code."""
    text = _TEXTS[name]
    return Scenario(name, text["number"], text["measures"], text["goal"], run, section, check, available, sources)


SCENARIOS: tuple[Scenario, ...] = (
    _scenario("daily", _daily, daily_section, daily_check, sources=True),
    _scenario("growth", _daily, growth_section, growth_check, sources=True),
    _scenario("floor", _daily, floor_section, floor_check, sources=True),
    _scenario("reload", _reload, reload_section, reload_check, sources=True),
    _scenario("fixed-cost", _fixed_cost, fixed_cost_section, fixed_cost_check),
    _scenario("connect", _connect, connect_section, connect_check, available=lambda: spark_major() >= 4),
    _scenario("fresh-commands", _report(lambda ctx: fresh_commands(ctx.spark, ctx.folder, max(3, ctx.args.repeat)))),
    _scenario("window-phases", _report(lambda ctx: window_phases(ctx.small()))),
    _scenario("first-window", _report(lambda ctx: first_window(ctx.spark, ctx.folder, max(3, ctx.args.repeat)))),
    _scenario("feature-sources", _report(lambda ctx: feature_sources.render(feature_sources.measure(ctx.small())))),
    _scenario("layout", _report(lambda ctx: layout.measure(ctx.small()))),
    _scenario("too-late", _report(lambda ctx: too_late.render(too_late.measure(ctx.small())))),
    _scenario("report", _report(_report_time)),
    _scenario("new-days", _report(_new_days)),
    _scenario("source-kinds", _report(_source_kinds), sources=True),
    _scenario("demo", _report(_demo)),
    _scenario("hourly", _report(_hourly)),
    _scenario("warm-path", _report(_warm_path), available=lambda: spark_major() >= 4),
    _scenario("chain", _report(_chain)),
    _scenario("explain", _report(_explain), sources=True),
    _scenario("memory", _report(_memory), sources=True),
    _scenario(
        "reload-cost", _report(lambda ctx: reload_cost.reload_cost(ctx.bench, ctx.args.reload_days)), sources=True
    ),
    _scenario("stream", _stream, stream_section, stream_check, sources=True),
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
