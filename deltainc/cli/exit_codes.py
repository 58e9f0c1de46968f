"""How a command fails: its exit code, classified from the exception, and its `deltainc: error: <message>` line.

Exit codes: 0 done (or nothing pending), 1 any other failure, 2 invalid configuration or input (nothing
written), 3 the job is locked by a concurrent run, 130 interrupted (Ctrl-C), 143 cancelled (SIGTERM).
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

from pydantic import ValidationError

from deltainc.errors import AmbiguousRowsError, ConfigError, JobLockedError, SchemaError
from deltainc.pipeline.job.job_config import TOMLDecodeError

__all__ = [
    "PROG",
    "EXIT_OK",
    "EXIT_FAILURE",
    "EXIT_INVALID",
    "EXIT_LOCKED",
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "classify",
    "validation_message",
    "print_error",
    "print_trace",
    "report",
]

PROG = "deltainc"

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_INVALID = 2
EXIT_LOCKED = 3
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

# Spark's Hive catalog could not open its metastore. The embedded one (Derby, in the settings' warehouse_dir) is
# single-process: a second Spark (a `deltainc serve`, a notebook, a run) on the same warehouse cannot open it.
METASTORE_SIGNS = ("SessionHiveMetaStoreClient", "Another instance of Derby may have already booted")
METASTORE_HINT = (
    "Spark could not open its Hive metastore: the embedded Derby metastore of warehouse_dir allows one process at "
    "a time, and another Spark may hold it (a `deltainc serve`, a notebook); give the session a metastore server "
    "(hive.metastore.uris) or run through Spark Connect (--remote)"
)


def validation_message(exc: ValidationError, source: str) -> str:
    """One line per problem of a pydantic validation error: `<source>: <field>: <what> (got <input>)`."""
    lines = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        got = f" (got {error['input']!r})" if error["type"] != "missing" and "input" in error else ""
        lines.append(f"{source}: {where + ': ' if where else ''}{error['msg']}{got}")
    return "\n".join(lines)


def classify(exc: BaseException) -> tuple[int, str]:
    """The exit code of an exception and its one-line (or, for config errors, one-line-per-problem) message."""
    if isinstance(exc, (ConfigError, SchemaError, AmbiguousRowsError)):
        return EXIT_INVALID, str(exc)
    if isinstance(exc, ValidationError):
        return EXIT_INVALID, validation_message(exc, "input")
    if isinstance(exc, TOMLDecodeError):
        return EXIT_INVALID, f"invalid TOML: {exc}"
    if isinstance(exc, JobLockedError):
        return EXIT_LOCKED, str(exc)
    java = getattr(exc, "java_exception", None)  # py4j's Py4JJavaError: its own first line says nothing
    text = str(java) if java is not None else str(exc)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if len(first) > 300:
        first = first[:297] + "..."
    message = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    if any(sign in text for sign in METASTORE_SIGNS):
        message = f"{message} ({METASTORE_HINT})"
    return EXIT_FAILURE, message


def print_error(message: str) -> None:
    """`deltainc: error: <first line>` on stderr, further lines indented under it."""
    lines = message.splitlines() or [""]
    sys.stderr.write(f"{PROG}: error: {lines[0]}\n")
    for line in lines[1:]:
        sys.stderr.write(f"  {line}\n")
    sys.stderr.flush()


def print_trace(exc: BaseException) -> None:
    """The full traceback on stderr (--verbose)."""
    traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)


def report(exc: BaseException, verbose: bool, hint: str | None = None, spark_log: Path | None = None) -> int:
    """Print why the command failed and return its exit code. A failure (1) notes the command's `hint` (how
    to resume), --verbose and Spark's log file; a locked job (3) notes the hint; invalid input (2) nothing."""
    code, message = classify(exc)
    if verbose:
        print_trace(exc)
    if code == EXIT_FAILURE:
        notes = []
        if hint:
            notes.append(hint)
        if not verbose:
            notes.append("--verbose for the full trace")
        if spark_log is not None:
            notes.append(f"Spark's log: {spark_log}")
        if notes:
            message = f"{message} ({'; '.join(notes)})"
    elif hint and code != EXIT_INVALID:
        message = f"{message} ({hint})"
    print_error(message)
    return code
