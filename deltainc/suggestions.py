"""'Did you mean': the known name closest to a misspelt one, for messages about an unknown column or key.
Pure Python (difflib), so the job file's loader suggests without importing Spark."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean"]


def did_you_mean(name: str, names: Iterable[str]) -> str:
    """'; did you mean 'X'?' when one of `names` is close to `name` (a case or a letter off), else ''.

    Args:
        name: the name that was not found.
        names: the names that exist.

    Example:
        >>> did_you_mean("max_wating_time", ["look_back_time", "max_waiting_time"])
        "; did you mean 'max_waiting_time'?"
    """
    known = list(names)
    same_case = [n for n in known if n.lower() == name.lower()]
    close = same_case or difflib.get_close_matches(name, known, n=1, cutoff=0.75)
    return f"; did you mean {close[0]!r}?" if close else ""
