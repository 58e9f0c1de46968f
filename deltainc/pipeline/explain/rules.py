"""Why one A row of a job came out as it did (issue 64's `explain`), from the facts a reader gathers: its RecDate,
the RecDates of the B rows with its join keys, the job's tolerances, the watermark and the target's row for it.
Pure: the same rules as the engine (docs/concepts/join.md), said in one sentence a person can check.

The sliding join window of an A row at unit `a` is `a - look_back_time .. a + max_waiting_time`: a B row inside
it matches; a B row before it never will; a B row after it arrives too late, once the A row has timed out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from deltainc.join.options import JoinType
from deltainc.time_units import TimeUnit, unit_label

__all__ = [
    "BRow",
    "Placement",
    "Explanation",
    "place",
    "explain_a_row",
    "explain_absent",
    "explain_b_row",
    "history_line",
]


@dataclass(frozen=True)
class Placement:
    """Where a B row's unit falls against an A row's sliding join window: `inside`, `before` or `after` it, and
    by how many units (0 inside)."""

    where: str
    by: int


@dataclass(frozen=True)
class BRow:
    """A B row with the A row's join keys: its unit and where it falls against the A row's window."""

    unit: int
    placement: Placement


@dataclass(frozen=True)
class Explanation:
    """The A row's window, its B rows placed against it, and the sentence that says why."""

    window: tuple[int, int]  # first and last unit of the sliding join window
    b_rows: tuple[BRow, ...]
    sentence: str


def place(b_unit: int, a_unit: int, look_back_time: int, max_waiting_time: int) -> Placement:
    """Where `b_unit` falls against the window of an A row at `a_unit`.

    Example: ``place(18, 7, 2, 10) == Placement("after", 1)``: a B row a day after the window closed.
    """
    if b_unit < a_unit - look_back_time:
        return Placement("before", a_unit - look_back_time - b_unit)
    if b_unit > a_unit + max_waiting_time:
        return Placement("after", b_unit - a_unit - max_waiting_time)
    return Placement("inside", 0)


def _days(count: int, uom: TimeUnit) -> str:
    return f"{count} {uom.value}{'' if count == 1 else 's'}"


def explain_a_row(
    a_unit: int,
    b_units: Sequence[int],
    outcome: JoinType,
    look_back_time: int,
    max_waiting_time: int,
    uom: TimeUnit | str = TimeUnit.DAY,
    too_late_kept: bool = False,
) -> Explanation:
    """The explanation of an A row at `a_unit` whose target row has `outcome`, given the units of the B rows with
    its join keys.

    Args:
        a_unit: the A row's incremental unit (`to_index` of its RecDate).
        b_units: the units of the B rows with the A row's join keys, in any order.
        outcome: the target row's JoinType.
        look_back_time: units B may arrive before A.
        max_waiting_time: units A waits for B.
        uom: the job's time unit.
        too_late_kept: whether the job keeps too-late B rows in a table (`target.late_rows`).

    Example: ``explain_a_row(to_index(date(2025, 3, 7)), [to_index(date(2025, 3, 18))], JoinType.A_TIMED_OUT, 2,
    10).sentence`` says it timed out on 2025-03-17 and that its B row arrived a day after the window closed.
    """
    uom = TimeUnit.parse(uom)
    first, last = a_unit - look_back_time, a_unit + max_waiting_time
    placed = tuple(BRow(u, place(u, a_unit, look_back_time, max_waiting_time)) for u in sorted(b_units))

    def label(unit: int) -> str:
        return unit_label(unit, uom)

    inside = [b.unit for b in placed if b.placement.where == "inside"]
    after = [b for b in placed if b.placement.where == "after"]
    if outcome in (JoinType.SAME_TIME, JoinType.A_LATE, JoinType.B_LATE, JoinType.PROVISIONAL) and inside:
        b = min(inside, key=lambda u: (abs(u - a_unit), u))
        if b == a_unit:
            said = f"its B row arrived in the same {uom.value}, {label(b)}"
        elif b < a_unit:
            said = f"its B row arrived {_days(a_unit - b, uom)} earlier, on {label(b)}, within the look-back of " \
                   f"{_days(look_back_time, uom)}"  # fmt: skip
        else:
            said = f"its B row arrived {_days(b - a_unit, uom)} later, on {label(b)}, within the wait of " \
                   f"{_days(max_waiting_time, uom)}"  # fmt: skip
        how = "matched so far (a nearer B row may still arrive)" if outcome is JoinType.PROVISIONAL else "matched"
        sentence = f"{how} on {label(max(a_unit, b))}: {said}"
    elif outcome is JoinType.A_TIMED_OUT:
        sentence = f"timed out on {label(last)}: no B row arrived in its window {label(first)}..{label(last)}"
        if after:
            late = after[0]
            kept = "; it is in the too-late table" if too_late_kept else " (counted as too late in the run log)"
            sentence += f"; its B row arrived on {label(late.unit)}, {_days(late.placement.by, uom)} after the " \
                        f"window closed{kept}"  # fmt: skip
    elif outcome is JoinType.A_WAITING:
        sentence = f"waiting since {label(a_unit)}: no B row yet; it times out on {label(last)} unless one arrives"
    else:
        sentence = f"{outcome.outcome} (its A row's window {label(first)}..{label(last)})"
    early = [b for b in placed if b.placement.where == "before"]
    if early:
        sentence += f"; a B row of {label(early[0].unit)} came before the window and never matches"
    return Explanation((first, last), placed, sentence)


def explain_absent(
    a_units: Sequence[int],
    watermark: int | None,
    filtered: bool,
    uom: TimeUnit | str = TimeUnit.DAY,
    side: str = "A",
) -> str:
    """Why a key has no row in the target: its A row is after the watermark (a window not yet run), left out by
    the job's `where`, or there is no A row with the key (`side` "B": the same of a full_outer job's B row).

    Example: ``explain_absent([20160], 20158, False)`` says the A row of 2025-03-11 waits for a run after the
    watermark 2025-03-09.
    """
    uom = TimeUnit.parse(uom)
    if not a_units:
        return f"no {side} row has these keys: nothing to join"
    first = min(a_units)
    if filtered:
        return f"its {side} row is left out by the job's where condition"
    if watermark is None or first > watermark:
        mark = "no run yet" if watermark is None else f"the watermark {unit_label(watermark, uom)}"
        return f"its {side} row of {unit_label(first, uom)} is in a window not yet run ({mark})"
    return f"its {side} row of {unit_label(first, uom)} is processed, yet the target has no row for it"


def history_line(entries: Sequence[Mapping[str, Any]], inc: str) -> str:
    """A key's history (`key_history` entries, oldest first) in one line: each run of commits with the same outcome
    once, at its first commit, e.g. "a_waiting since 2025-03-07 (version 2, run 3f2a…), a_timed_out on 2025-03-17
    (version 12, run 91c0…)".

    Example: ``history_line([{"outcome": "a_waiting", "RecDate": "2025-03-07", "version": 2, "run_id": "3f2a"}],
    "RecDate")`` -> ``"a_waiting since 2025-03-07 (version 2, run 3f2a)"``.
    """
    said: list[str] = []
    previous = None
    for entry in entries:
        if entry["outcome"] == previous:
            continue
        previous = entry["outcome"]
        how = "since" if previous == JoinType.A_WAITING.outcome else "on"
        run = f", run {entry['run_id']}" if entry.get("run_id") else ""
        said.append(f"{previous} {how} {entry[inc]} (version {entry['version']}{run})")
    return ", ".join(said)


def explain_b_row(
    b_unit: int,
    a_units: Sequence[int],
    outcome: JoinType,
    look_back_time: int,
    max_waiting_time: int,
    uom: TimeUnit | str = TimeUnit.DAY,
) -> str:
    """Why a B row of a full_outer job came out as it did, given the units of the A rows with its join keys. An A
    row matches it when it arrives from `max_waiting_time` units before it (that A row still waiting) to
    `look_back_time` units after it (the B row waiting for an A row).

    Example: ``explain_b_row(to_index(date(2025, 3, 9)), [], JoinType.NOT_MATCHED, 2, 10)`` says it was not matched
    on 2025-03-11: no A row arrived in 2025-02-27..2025-03-11.
    """
    uom = TimeUnit.parse(uom)
    first, last = b_unit - max_waiting_time, b_unit + look_back_time

    def label(unit: int) -> str:
        return unit_label(unit, uom)

    inside = sorted(a for a in a_units if first <= a <= last)
    outside = sorted(a for a in a_units if not first <= a <= last)
    if outcome in (JoinType.SAME_TIME, JoinType.A_LATE, JoinType.B_LATE) and inside:
        a = min(inside, key=lambda u: (abs(u - b_unit), u))
        return f"matched on {label(max(a, b_unit))}: the A row of {label(a)} with its join keys is within its window"
    if outcome is JoinType.B_WAITING:
        sentence = f"waiting since {label(b_unit)} for an A row: not matched unless one arrives by {label(last)}"
    elif outcome is JoinType.NOT_MATCHED:
        sentence = f"not matched on {label(last)}: no A row with its join keys arrived in {label(first)}..{label(last)}"
    else:
        sentence = f"{outcome.outcome} (its B row's window {label(first)}..{label(last)})"
    for a in outside:
        where = f"{_days(a - last, uom)} after" if a > last else f"{_days(first - a, uom)} before"
        sentence += f"; an A row of {label(a)} arrived {where} the window"
    return sentence
