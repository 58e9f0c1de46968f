"""The command line's grammar: every command, its arguments and their types; the global options, accepted before
the command and after it, are `context.add_global_options`. Usage errors are worded like every other error
(`deltainc: error: <message>`, exit 2).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from deltainc._version import __version__
from deltainc.cli import check_command, explain_command, inspect_commands, run_commands, tool_commands
from deltainc.cli.context import Context, add_global_options
from deltainc.cli.output import EXIT_INVALID, PROG
from deltainc.errors import ConfigError
from deltainc.time_units import parse_point

__all__ = ["build_parser"]


def _point(value: str) -> str:
    """A date (2025-03-07) or, for hourly jobs, a datetime (2025-03-07T10:00); kept as text for the pipeline."""
    try:
        parse_point(value, "date", "hour")
    except ConfigError:
        raise argparse.ArgumentTypeError(f"expected a date like 2025-03-07, got {value!r}") from None
    return value


def _date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date like 2025-03-07, got {value!r}") from None


_SECONDS = {"s": 1, "m": 60, "h": 3600}


def _every(value: str) -> float:
    """A poll interval: seconds (90, 2.5) or with a unit (90s, 5m, 1h)."""
    text = value.strip().lower()
    scale = _SECONDS.get(text[-1:], 0) if text else 0
    try:
        seconds = float(text[:-1] if scale else text) * (scale or 1)
    except ValueError:
        seconds = 0
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"expected seconds like 60, 90s, 5m or 1h, got {value!r}")
    return seconds


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value!r}")
    return number


class _Parser(argparse.ArgumentParser):
    """argparse, with usage errors worded like every other error: `deltainc: error: <message>`, exit 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_INVALID, f"{PROG}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command; each command's handler is its `handler` default."""
    parser = _Parser(
        prog=PROG,
        description="Keep a joined Delta target correct while two Delta sources are loaded incrementally "
        "and arrive late.",
        epilog="JOB is a job name in the job directory (settings job_dir, default conf/jobs) or a path to a "
        "job's TOML file. Exit codes: 0 done or nothing pending, 1 failure, 2 invalid configuration or "
        "input (nothing written), 3 job locked by a concurrent run; `check`: 4 a check breached its error level, 5 its "
        "warn level (with --fail-on-warn).",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    add_global_options(parser, "g_", None)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(
        name: str,
        help_text: str,
        handler: Callable[[Context], int],
        *,
        json_output: bool = True,
        job: str | None = "JOB",
    ) -> argparse.ArgumentParser:
        """A command; `json_output`: it takes --json; `job`: its JOB argument, "JOB" (required), "[JOB]" (every job
        when left out) or None."""
        sub = commands.add_parser(name, help=help_text, description=help_text)
        add_global_options(sub, "", argparse.SUPPRESS)
        if json_output:
            sub.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        if job == "JOB":
            sub.add_argument("job", metavar="JOB")
        elif job == "[JOB]":
            sub.add_argument("job", metavar="JOB", nargs="?", help="default: every job in the job directory")
        sub.set_defaults(handler=handler, json=False)
        return sub

    sub = command(
        "run", "process every pending window of a job (of every job, each after the jobs it reads)", run_commands.run,
        job="[JOB]",
    )  # fmt: skip
    sub.add_argument("--until", type=_point, metavar="DATE", help="process nothing after this date")
    sub.add_argument(
        "--every",
        type=_every,
        metavar="INTERVAL",
        help="keep running: look at the sources' Delta logs every INTERVAL (60, 90s, 5m, 1h) and process each new "
        "complete unit at once, in this one process and its one Spark session, until SIGTERM or Ctrl-C (exit 0 "
        "between two looks); for hourly and minute jobs",
    )
    sub.add_argument(
        "--rebuild",
        action="store_true",
        help="recompute the whole target under the job's current settings (after a change of look_back_time, "
        "max_waiting_time, how, keys, include_waiting, time_uom or start_date): one window from start_date "
        "to the latest RecDate, written over the target in one commit",
    )

    sub = command("rerun", "recompute an already processed window (the watermark never moves back)", run_commands.rerun)
    sub.add_argument("--start", type=_point, metavar="DATE", required=True)
    sub.add_argument(
        "--end",
        type=_point,
        metavar="DATE",
        help="the last unit whose rows the sources corrected (default: --start). With the sliding join window "
        'and target.corrections = "apply" (the defaults) the recompute runs on from --start to the watermark, '
        "since every later row can depend on a corrected one; otherwise exactly --start..--end is merged, "
        "forward only",
    )
    sub.add_argument(
        "--downstream",
        action="store_true",
        help="then re-run the jobs of the job directory that read this job's target (directly or through others), "
        "in dependency order, each from --start to its own watermark; without it the command names them",
    )

    sub = command(
        "backfill",
        "process a historic range in chunks; run it again to resume after a failure",
        run_commands.backfill,
    )
    sub.add_argument("--start", type=_point, metavar="DATE", required=True)
    sub.add_argument("--end", type=_point, metavar="DATE", required=True)
    sub.add_argument(
        "--chunk", choices=("day", "month", "year", "all"), default="month", help="window of one chunk (default: month)"
    )

    sub = command(
        "status",
        "watermark, latest RecDate available, pending window and last runs",
        inspect_commands.status,
        job="[JOB]",
    )
    sub.add_argument("--runs", type=_positive, default=5, metavar="N", help="how many recent runs (default: 5)")

    sub = command(
        "explain",
        "one key of the job's target: its A and B rows, its rows in the target, and why each A row came out as it "
        "did; exit 1 when the key is nowhere",
        explain_command.explain,
    )
    sub.add_argument("keys", nargs="+", metavar="KEY=VALUE", help="the target's keys, e.g. TrxId=6")

    sub = command(
        "check",
        "judge each job's health against its [checks] thresholds (lag, timed-out share, too-late rows, the last run's "
        "status, freshness and duration) from its run log, without Spark: exit 0 when no error level is breached, "
        "4 when one is, 5 for a warning with --fail-on-warn",
        check_command.check,
        job="[JOB]",
    )
    sub.add_argument("--fail-on-warn", action="store_true", help="exit 5 when a check breaches its warn level")

    sub = command(
        "validate",
        "check a job against its sources and show what the next run would read; writes nothing",
        inspect_commands.validate,
        job="[JOB]",
    )

    sub = command(
        "verify",
        "recompute a processed range in one shot and compare it with the target, row for row; writes nothing; "
        "exit 1 when they differ",
        inspect_commands.verify,
    )
    sub.add_argument("--start", type=_point, metavar="DATE", help="default: the job's start_date")
    sub.add_argument("--end", type=_point, metavar="DATE", help="default: the watermark")

    sub = command(
        "report",
        "the job's history as one self-contained HTML page of charts (rows by outcome, backlog, lag, durations, "
        "reads); reads the run log without Spark; writes nothing else",
        tool_commands.report,
        json_output=False,
    )
    sub.add_argument("--out", type=Path, metavar="FILE", help="the page to write (default: JOB-report.html)")
    sub.add_argument("--since", type=_date, metavar="DATE", help="only runs started on or after this UTC date")
    sub.add_argument("--last", type=_positive, metavar="N", help="only the last N runs")
    sub.add_argument("--png", type=Path, metavar="DIR", help="also write each chart as a PNG image into DIR")

    sub = command(
        "migrate",
        "rewrite a target created by an earlier version into the current layout (its open rows in partitions of "
        "their own, IsFinal), in one commit under the job's lock, and drop the deletion-vector reader feature its "
        "writes never use; the rows and the watermark stay",
        tool_commands.migrate,
        json_output=False,
    )
    sub.add_argument("--dry-run", action="store_true", help="say what migrate would do; write nothing")

    sub = command("unlock", "remove the lock a dead run left behind", tool_commands.unlock, json_output=False)
    sub.add_argument("--run-id", metavar="ID", help="remove the lock only if run ID holds it")

    sub = command(
        "profile",
        "how late B arrives relative to A: a delay profile to choose look_back_time and max_waiting_time",
        tool_commands.profile,
    )
    sub.add_argument("--start", type=_date, metavar="DATE")
    sub.add_argument("--end", type=_date, metavar="DATE")
    sub.add_argument("--chart", type=Path, metavar="PATH", help="also draw the profile into this image file")

    sub = command(
        "demo",
        "a month of generated bank transactions: its history caught up in one run, then joined day by day",
        tool_commands.demo,
        json_output=False,
        job=None,
    )
    sub.add_argument(
        "--root",
        type=Path,
        default=Path("demo-data"),
        metavar="DIR",
        help="folder for the demo's tables, emptied first (default: demo-data)",
    )
    sub.add_argument("--days", type=_positive, default=30, metavar="N", help="days of data (default: 30)")
    sub.add_argument(
        "--daily",
        type=_positive,
        default=10,
        metavar="N",
        help="the last N days are loaded and run one at a time, the days before in one run (default: 10)",
    )
    sub.add_argument(
        "--rows-per-day", type=_positive, default=200, metavar="N", help="ledger transactions per day (default: 200)"
    )

    sub = command(
        "serve",
        "a long-running Spark Connect server with Delta; commands given --remote sc://localhost:PORT use it",
        tool_commands.serve,
        json_output=False,
        job=None,
    )
    sub.add_argument("--port", type=_positive, default=15002, metavar="N", help="port to listen on (default: 15002)")
    sub.add_argument(
        "--host",
        default="127.0.0.1",
        metavar="ADDRESS",
        help="address to listen on (default: 127.0.0.1, this machine only; 0.0.0.0 for every interface: Spark Connect "
        "has no authentication of its own, so protect such a server with a proxy or firewall)",
    )
    return parser
