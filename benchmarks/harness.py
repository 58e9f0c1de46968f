"""The benchmark's scenarios, in one registry: each a named object with what it measures, its goal beside it, the
function that runs it and how RESULTS.md shows it.

`python -m benchmarks.run` takes its `--scenarios` from SCENARIOS (by name, or by the number older command lines
used), lists them with their goals in `--help`, runs them in the registry's order and writes a section per scenario,
goal first. A new scenario is one more entry here, next to its own measuring code.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

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


# --- the registry, in the order the scenarios run ----------------------------------------------------------------

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        name="daily",
        number=1,
        measures="the daily run for day D against a naive full recompute of days 1..D, at every history size D",
        goal="a daily run at D = 365 at least 10x faster than a full recompute, already faster at the smallest D "
        "(30), in at most 3 Delta commits",
        run=_daily,
        section=daily_section,
        check=daily_check,
    ),
    Scenario(
        name="growth",
        number=2,
        measures="the daily run at the smallest and the largest D, and where its time goes, phase by phase",
        goal="the daily run grows at most 1.3x from D = 30 to D = 365",
        run=_daily,
        section=growth_section,
        check=growth_check,
    ),
    Scenario(
        name="floor",
        number=5,
        measures="the daily run against reading only what it needs, and against joining its window and appending it",
        goal="a daily run at most 2x the floor 'join the window and append its output to Delta'",
        run=_daily,
        section=floor_section,
        check=floor_check,
    ),
    Scenario(
        name="reload",
        number=3,
        measures="days 1..R (--reload-days) in one run against R daily runs, and whether both give the same target",
        goal="a reload at least 20x faster than the daily runs it replaces, with the same target",
        run=_reload,
        section=reload_section,
        check=reload_check,
    ),
    Scenario(
        name="fixed-cost",
        number=6,
        measures="a daily run at R = 2,000 in a warm session, on deltainc's session and on Delta's defaults "
        "(benchmarks.session_ab)",
        goal="a daily run at R = 2,000 in a warm session in at most 3 s, 15 Spark jobs and 3 Delta commits",
        run=_fixed_cost,
        section=fixed_cost_section,
        check=fixed_cost_check,
    ),
    Scenario(
        name="connect",
        number=7,
        measures="`deltainc run` as a fresh process, as a Spark Connect client of a warm `deltainc serve` against "
        "starting its own JVM (benchmarks.connect_ab; Spark 4)",
        goal="none: reported",
        run=_connect,
        section=connect_section,
        check=connect_check,
        available=lambda: spark_major() >= 4,
    ),
    Scenario(
        name="fresh-commands",
        number=8,
        measures="`run` with nothing pending, `status`, `unlock` and `validate` as fresh processes, and a Spark "
        "start with the Delta jars from disk against one resolving them (benchmarks.fresh_commands)",
        goal="`run` with nothing pending, `status` and `unlock` in at most 1 s each as a fresh process, no JVM",
        run=_markdown_of(
            "benchmarks.fresh_commands",
            lambda args: ["--repeat", str(max(3, args.repeat)), "--data", str(args.data / "fresh")],
        ),
    ),
    Scenario(
        name="window-phases",
        number=9,
        measures="one warm daily run at R = 2,000, phase by phase and Spark job by Spark job, against the floor "
        "(benchmarks.window_profile)",
        goal="a warm daily run at R = 2,000 in at most 3 s and 2x the floor 'join the window, append it', "
        "with at most 15 Spark jobs",
        run=_markdown_of("benchmarks.window_profile", lambda args: ["--repeat", str(args.repeat)]),
    ),
    Scenario(
        name="feature-sources",
        number=10,
        measures="the daily run of a three-source feature job against the three single-source jobs it replaces, "
        "at R = 2,000 (benchmarks.feature_sources)",
        goal="the three-source run costs at most the single-source runs' join work plus one fixed cost",
        run=_markdown_of("benchmarks.feature_sources", _small_job),
    ),
    Scenario(
        name="layout",
        number=11,
        measures="a warm daily run into a target that keeps its open rows apart (IsFinal) against the earlier "
        "layout, for a day job and an hour job, at R = 2,000: seconds, Spark jobs, the target commit's Delta "
        "metrics (benchmarks.layout_ab)",
        goal="on the default layout a forward write removes and adds whole files: no row copied, no deletion "
        "vector, and for the day job no file of the target read; at most 12 Spark jobs per window",
        run=_markdown_of("benchmarks.layout_ab", _small_job),
    ),
    Scenario(
        name="too-late",
        number=12,
        measures="a warm daily run at R = 2,000 with the too-late search (A rows from the target) against the same "
        "run without it: seconds, Spark jobs of every thread, Delta commits, files the search reads "
        "(benchmarks.too_late)",
        goal="none numeric: reported, the search's cost over a run without it",
        run=_markdown_of("benchmarks.too_late", _small_job),
    ),
    Scenario(
        name="report",
        number=13,
        measures="`deltainc report` as a fresh process on a year of daily runs and on three years of hourly "
        "windows, beside `status`, and its page opened in Chromium (benchmarks.report_time)",
        goal="`deltainc report` for a year of daily runs in at most 2 s as a fresh process, no JVM",
        run=_markdown_of(
            "benchmarks.report_time",
            lambda args: [
                "--pairs",
                str(args.repeat),
                "--days",
                str(min(365, args.days)),
                "--data",
                str(args.data / "report"),
            ],  # fmt: skip
        ),
    ),
    Scenario(
        name="stream",
        number=4,
        measures="Structured Streaming (stream-stream left join, AvailableNow, a MERGE per batch) for the same day "
        "as a daily run (--stream-day)",
        goal="none: reported, with what the stream's append-only output cannot show",
        run=_stream,
        section=stream_section,
        check=stream_check,
    ),
)

NAMES: tuple[str, ...] = tuple(s.name for s in SCENARIOS)
_BY_KEY = {key: s for s in SCENARIOS for key in (s.name, str(s.number))}
assert len(_BY_KEY) == 2 * len(SCENARIOS), "scenario names and numbers must be unique"


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
