"""The package's exception types: user mistakes (config, schema, input) apart from internal bugs; and the 'did you
mean' of a message about an unknown column or key (pure Python: the job file's loader suggests without Spark)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "DeltaincError",
    "ConfigError",
    "SchemaError",
    "AmbiguousRowsError",
    "JobLockedError",
    "InternalError",
    "Cancelled",
    "did_you_mean",
]


class DeltaincError(Exception):
    """Base of every error raised by deltainc on purpose."""


class ConfigError(DeltaincError, ValueError):
    """A setting, argument or job file is invalid; the message names the field."""


class SchemaError(DeltaincError, ValueError):
    """A source lacks a column, has an incompatible type, or the output would have colliding names."""


class AmbiguousRowsError(DeltaincError, ValueError):
    """Two source rows share one identity (same keys and RecDate): the MERGE could not tell them apart."""


class JobLockedError(DeltaincError, RuntimeError):
    """Another run of the same job holds the lock."""


class InternalError(DeltaincError, RuntimeError):
    """A bug in deltainc: an invariant the code relies on did not hold."""


class Cancelled(BaseException):
    """The run was stopped by a signal (SIGTERM from a scheduler, or Ctrl-C's SIGINT in the command line); like
    KeyboardInterrupt, not an Exception."""

    def __init__(self, signal_number: int) -> None:
        super().__init__(f"stopped by signal {signal_number}")
        self.signal_number = signal_number
        self.summary: str | None = None  # what was stopped and what the last commit was, once the run knows


def did_you_mean(name: str, names: Iterable[str]) -> str:
    """'; did you mean 'X'?' when one of `names` (the names that exist) is close to `name` (a case or a letter off),
    else ''.

    Example:
        >>> did_you_mean("max_wating_time", ["look_back_time", "max_waiting_time"])
        "; did you mean 'max_waiting_time'?"
    """
    known = list(names)
    same_case = [n for n in known if n.lower() == name.lower()]
    close = same_case or difflib.get_close_matches(name, known, n=1, cutoff=0.75)
    return f"; did you mean {close[0]!r}?" if close else ""
