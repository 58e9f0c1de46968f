"""An enum whose members are their own strings: equal to them, stored and printed as them (Python 3.10 has no
StrEnum), so a closed set of names is checked by mypy and still reads as text in logs, JSON and Delta tables."""

from __future__ import annotations

import enum

__all__ = ["TextEnum"]


class TextEnum(str, enum.Enum):
    """A closed set of names; `str(member)` and f-strings give its value."""

    def __str__(self) -> str:
        return str(self.value)
