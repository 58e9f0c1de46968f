"""The package's exception types: user mistakes (config, schema, input) apart from internal bugs."""

from __future__ import annotations

__all__ = [
    "DeltaincError",
    "ConfigError",
    "SchemaError",
    "AmbiguousRowsError",
    "JobLockedError",
    "InternalError",
    "Cancelled",
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
