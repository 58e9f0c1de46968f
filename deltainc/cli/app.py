"""The `deltainc` command line's entry point: parse, load the settings, run the command, turn errors into exit codes.

The SparkSession is started only by commands that need it, after the settings and the job file have been
checked (`Context.spark`). Errors go to stderr as `deltainc: error: <message>` (exit codes: `output`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence

from deltainc.cli.context import Context, command_settings, global_options
from deltainc.cli.output import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_LOCKED,
    EXIT_OK,
    EXIT_TERMINATED,
    PROG,
    make_console,
    print_error,
    report,
)
from deltainc.cli.parser import build_parser
from deltainc.errors import Cancelled
from deltainc.spark_driver import not_from_py4j
from deltainc.stop_notice import notice, say

__all__ = ["main", "build_parser", "command_logging", "EXIT_OK", "EXIT_FAILURE", "EXIT_INVALID", "EXIT_LOCKED"]

log = logging.getLogger("deltainc")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (the console script calls `sys.exit(main())`)."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # --help (0) or a usage error (2, message already printed by argparse)
        return exc.code if isinstance(exc.code, int) else EXIT_INVALID
    options = global_options(args)
    ctx: Context | None = None
    try:
        with _cancel_on_signals():
            settings = command_settings(options.settings, options.master, options.remote)
            ctx = Context(args, settings, options.verbose, options.conf, make_console())
            with command_logging(settings.log_level, options.verbose):
                return int(args.handler(ctx))
    except (KeyboardInterrupt, Cancelled) as exc:
        ctrl_c = isinstance(exc, KeyboardInterrupt) or exc.signal_number == signal.SIGINT
        what = "interrupted" if ctrl_c else "cancelled (SIGTERM)"
        summary = getattr(exc, "summary", None)  # what was stopped and the last commit, set by the run
        what = f"{what}: {summary}" if summary else what
        print_error(f"{what} ({ctx.hint})" if ctx is not None and ctx.hint else what)
        return EXIT_INTERRUPTED if ctrl_c else EXIT_TERMINATED
    except Exception as exc:
        if ctx is None:
            return report(exc, options.verbose)
        return report(exc, options.verbose, ctx.hint, ctx.spark_log)


@contextlib.contextmanager
def command_logging(settings_level: str, verbose: bool) -> Iterator[None]:
    """The package's log records on stderr: warnings only, or from settings.log_level with --verbose. Py4J's own
    tracebacks of a lost JVM connection are shown with --verbose only: the command reports the error itself.
    `main` runs every command inside it; public so that the logging a command gets can be held on its own."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{PROG}: %(levelname)s: %(message)s"))
    level = logging.getLevelName(settings_level.upper()) if verbose else logging.WARNING
    previous = log.level, log.propagate
    root = logging.getLogger()
    log.addHandler(handler)
    log.setLevel(level if isinstance(level, int) else logging.INFO)
    log.propagate = False  # printed once, by this handler, even when a library configures the root logger
    if not verbose:
        root.addFilter(not_from_py4j)
    try:
        yield
    finally:
        root.removeFilter(not_from_py4j)
        log.removeHandler(handler)
        log.setLevel(previous[0])
        log.propagate = previous[1]


@contextlib.contextmanager
def _cancel_on_signals() -> Iterator[None]:
    """Turn SIGTERM (a scheduler's timeout or cancel) and SIGINT (Ctrl-C) into Cancelled, so that the run stops
    cleanly: its run-log row says cancelled and releases the lock. Not KeyboardInterrupt, which Py4J logs with
    a traceback when it lands inside a Spark call. Only in the main thread, where signals arrive.

    The first signal says at once, on stderr, what is being stopped (`stop_notice`): the stop takes seconds
    before the command's last line, and a scheduler may stop reading the output at its signal."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    said = False
    try:  # stderr as the command began: while Spark starts, descriptor 2 points at Spark's log file
        terminal: int | None = os.dup(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):  # a stream without a descriptor (a test's capture)
        terminal = None

    def stop(signal_number: int, _frame: object) -> None:
        nonlocal said
        if not said:
            said = True
            say(notice(signal_number), terminal)
        raise Cancelled(signal_number)

    previous = {number: signal.signal(number, stop) for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if terminal is not None:
            os.close(terminal)
