"""The command line's global options: --settings, --master, --remote, --conf and --verbose, accepted before the
command and after it (`add_global_options`), and where they were given read into one value (`global_options`)."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from deltainc.settings import DEFAULT_SETTINGS_FILE, SETTINGS_FILE_ENV

__all__ = ["GlobalOptions", "add_global_options", "global_options"]


def _conf(value: str) -> tuple[str, str]:
    key, sep, val = value.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value (e.g. spark.executor.memory=4g), got {value!r}")
    return key.strip(), val


# Each option: its flags, and what argparse takes for it besides its dest and default.
_OPTIONS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (("--settings",), {"metavar": "FILE",
                       "help": f"settings file (default: ${SETTINGS_FILE_ENV} or {DEFAULT_SETTINGS_FILE})"}),
    (("--master",), {"metavar": "URL", "help": "Spark master URL, overrides spark.master of the settings"}),
    (("--remote",), {"metavar": "URL", "help": "be a client of this Spark Connect server (sc://host:15002) instead "
                     "of starting Spark; overrides spark.remote of the settings and $SPARK_REMOTE"}),
    (("--conf",), {"metavar": "KEY=VALUE", "type": _conf, "action": "append",
                   "help": "extra Spark configuration (repeatable)"}),
    (("--verbose", "-v"), {"action": "store_true",
                           "help": "full traceback on errors and Spark's own log output on the terminal"}),
)  # fmt: skip


def add_global_options(parser: argparse.ArgumentParser, prefix: str, default: Any) -> None:
    """--settings, --master, --remote, --conf, --verbose: accepted before the command (prefix 'g_') and after it."""
    group = parser.add_argument_group("global options")
    for flags, options in _OPTIONS:
        group.add_argument(*flags, dest=f"{prefix}{flags[0][2:]}", default=default, **options)


@dataclasses.dataclass(frozen=True)
class GlobalOptions:
    """The global options, wherever they were given (after the command wins, --conf from both)."""

    settings: str | None
    master: str | None
    remote: str | None
    conf: dict[str, str]
    verbose: bool


def global_options(args: argparse.Namespace) -> GlobalOptions:
    """The global options of parsed arguments."""
    return GlobalOptions(
        settings=getattr(args, "settings", None) or args.g_settings,
        master=getattr(args, "master", None) or args.g_master,
        remote=getattr(args, "remote", None) or args.g_remote,
        conf=dict([*(args.g_conf or []), *getattr(args, "conf", [])]),
        verbose=bool(getattr(args, "verbose", False) or args.g_verbose),
    )
