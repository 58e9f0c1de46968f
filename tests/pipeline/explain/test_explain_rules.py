"""Why an A row came out as it did (`pipeline/explain/rules.py`), on the README's seven transactions: each A row's
sliding join window, where its B row falls against it, and the facts of the sentence (dates, units, outcome).
The outcomes are the README's table (look back 2, wait 11; transaction 6 also with wait 10). Pure."""

from __future__ import annotations

import datetime as dt

import pytest
from seven_transactions import SEVEN

from deltainc.join.options import JoinType
from deltainc.pipeline.explain.rules import Placement, explain_a_row, explain_absent, explain_b_row, history_line, place
from deltainc.time_units import to_index

pytestmark = pytest.mark.pure


def unit(text: str) -> int:
    return to_index(dt.date.fromisoformat(text))


@pytest.mark.parametrize("trx", sorted(SEVEN))
def test_each_of_the_seven_transactions_is_matched_on_the_later_of_its_two_days_inside_its_window(trx: int) -> None:
    a, b, outcome = SEVEN[trx]
    found = explain_a_row(unit(a), [unit(b)], outcome, 2, 11)
    assert found.window == (unit(a) - 2, unit(a) + 11)
    assert [row.placement.where for row in found.b_rows] == ["inside"]
    assert found.sentence.startswith(f"matched on {max(a, b)}: ")
    diff = unit(b) - unit(a)
    if diff:
        assert f"{abs(diff)} day" in found.sentence and b in found.sentence
    else:
        assert "the same day" in found.sentence


def test_with_a_wait_of_10_transaction_6_times_out_on_the_17th_and_its_b_row_is_a_day_too_late() -> None:
    found = explain_a_row(unit("2025-03-07"), [unit("2025-03-18")], JoinType.A_TIMED_OUT, 2, 10, too_late_kept=True)
    assert found.window == (unit("2025-03-05"), unit("2025-03-17"))
    assert found.b_rows[0].placement == Placement("after", 1)
    assert found.sentence.startswith("timed out on 2025-03-17: ")
    assert "arrived on 2025-03-18, 1 day after the window closed" in found.sentence
    assert "too-late table" in found.sentence


def test_a_b_row_before_the_look_back_never_matches_and_is_said_so() -> None:
    assert place(unit("2025-03-03"), unit("2025-03-06"), 2, 11) == Placement("before", 1)
    found = explain_a_row(unit("2025-03-06"), [unit("2025-03-03")], JoinType.A_WAITING, 2, 11)
    assert found.sentence.startswith("waiting since 2025-03-06: ") and "times out on 2025-03-17" in found.sentence
    assert "a B row of 2025-03-03 came before the window" in found.sentence


def test_a_window_in_hours_counts_hours() -> None:
    a = to_index(dt.datetime(2025, 3, 6, 10), "hour")
    found = explain_a_row(a, [a + 3], JoinType.B_LATE, 1, 4, uom="hour")
    assert found.window == (a - 1, a + 4) and "3 hours later" in found.sentence
    assert found.sentence.startswith("matched on 2025-03-06T13:00:00")


def test_a_key_missing_from_the_target_is_after_the_watermark_filtered_or_absent_from_a() -> None:
    assert "window not yet run (the watermark 2025-03-09)" in explain_absent(
        [unit("2025-03-11")], unit("2025-03-09"), False
    )
    assert "no run yet" in explain_absent([unit("2025-03-11")], None, False)
    assert "where condition" in explain_absent([unit("2025-03-01")], unit("2025-03-09"), True)
    assert explain_absent([], unit("2025-03-09"), False).startswith("no A row has these keys")


def test_a_history_in_one_line_names_each_outcome_once_at_the_commit_that_first_wrote_it() -> None:
    entries = [{"outcome": "a_waiting", "RecDate": f"2025-03-{day:02d}", "version": day - 5, "run_id": "r1"}
               for day in range(7, 17)]  # fmt: skip
    entries.append({"outcome": "a_timed_out", "RecDate": "2025-03-17", "version": 12, "run_id": "r2"})
    line = history_line(entries, "RecDate")
    assert line.count("a_waiting") == line.count("a_timed_out") == 1
    assert line.index("a_waiting since 2025-03-07 (version 2, run r1)") < line.index(
        "a_timed_out on 2025-03-17 (version 12"
    )


def test_a_b_row_no_a_row_reached_is_not_matched_when_its_look_back_ends_and_an_a_row_after_it_is_named() -> None:
    why = explain_b_row(unit("2025-03-09"), [unit("2025-03-14")], JoinType.NOT_MATCHED, 2, 10)
    assert why.startswith("not matched on 2025-03-11: ") and "2025-02-27..2025-03-11" in why
    assert "an A row of 2025-03-14 arrived 3 days after the window" in why


def test_a_b_row_still_waiting_says_until_when_an_a_row_can_match_it() -> None:
    why = explain_b_row(unit("2025-03-09"), [], JoinType.B_WAITING, 2, 10)
    assert why.startswith("waiting since 2025-03-09") and why.endswith("by 2025-03-11")
