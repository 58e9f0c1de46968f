"""A scenario's goal against what was measured: MET, MISSED, or "-" when there is no number to judge."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["IN_SECTION", "NOT_RUN", "Verdict", "at_least", "at_most", "judge", "no_goal"]


@dataclass(frozen=True)
class Verdict:
    """What was measured against a scenario's goal, and MET, MISSED, or "-" (not measured, or no number to judge)."""

    measured: str
    verdict: str


NOT_RUN, IN_SECTION = "not run", "in its section"  # what a Verdict says when there is no number to give


def at_least(value: float | None, bound: float) -> bool | None:
    """Whether `value` reaches `bound`; None when not measured."""
    return None if value is None else value >= bound


def at_most(value: float | None, bound: float) -> bool | None:
    """Whether `value` stays within `bound`; None when not measured."""
    return None if value is None else value <= bound


def judge(parts: list[tuple[str, bool | None]]) -> Verdict:
    """One verdict from the parts of a goal (text, met?): MET when every judged part is, MISSED when one is not.
    With more than one judged part, each says whether it was met."""
    if not parts:
        return Verdict(NOT_RUN, "-")
    judged = [ok for _text, ok in parts if ok is not None]
    verdict = "-" if not judged else ("MET" if all(judged) else "MISSED")
    if len(judged) > 1:
        return Verdict("; ".join(t if ok is None else f"{t} ({'met' if ok else 'missed'})" for t, ok in parts), verdict)
    return Verdict("; ".join(text for text, _ok in parts), verdict)


def no_goal(ran: bool) -> Verdict:
    """A scenario whose numbers are judged in its own section (or that has no goal)."""
    return Verdict(IN_SECTION if ran else NOT_RUN, "-")
