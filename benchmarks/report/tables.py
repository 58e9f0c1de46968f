"""Markdown tables and the cells every section writes (yes / no, MiB)."""

from __future__ import annotations

__all__ = ["mib", "one_row", "table", "yes"]


def yes(flag: bool | None) -> str:
    """'yes', '**NO**', or '-' when not known."""
    return "-" if flag is None else ("yes" if flag else "**NO**")


def table(headers: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table of `headers` and `rows`."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def mib(n: int) -> str:
    """`n` bytes in MiB."""
    return f"{n / 1024 / 1024:.1f} MiB"


def one_row(cells: dict[str, str]) -> list[str]:
    """A table of one row: a column per header of `cells`, with its cell."""
    return table(list(cells), [list(cells.values())])
