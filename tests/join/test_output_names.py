"""Output column names when a source is another job's target (docs/concepts/target-as-source.md): the target's
own derived and suffixed columns pass through, and a collision that remains names the aliases that fit."""

from __future__ import annotations

import pytest

from deltainc import IncJoinSettings, SchemaError
from deltainc.join.output_layout import plan_layout

pytestmark = pytest.mark.pure

# The columns of a left job's target (keys TrxId, b_keys SepaId), read as the next job's source A.
TARGET = ["TrxId", "RecDate", "Amount", "RecDate_A", "SepaId", "RecDate_B", "DiffArrivalTime", "WaitingTime",
          "JoinType", "IsFinal"]  # fmt: skip
SCANS = ["TrxId", "ScanId", "RecDate"]


def test_a_source_column_named_like_a_derived_column_takes_its_sides_alias() -> None:
    layout = plan_layout(["TrxId", "JoinType", "IsFinal", "RecDate"], SCANS, ["TrxId"], "left", IncJoinSettings())
    assert dict(layout.a_names) == {"JoinType": "JoinType_A", "IsFinal": "IsFinal_A", "RecDate": "RecDate_A"}
    assert layout.selected == ("TrxId", "RecDate", "JoinType_A", "IsFinal_A", "RecDate_A", "ScanId", "RecDate_B",
                               "DiffArrivalTime", "JoinType")  # fmt: skip


def test_a_suffix_landing_on_a_column_of_a_source_is_refused_naming_both_and_aliases_that_fit() -> None:
    with pytest.raises(
        SchemaError,
        match=r"^output column collision: 'RecDate_A' from source_a column 'RecDate_A' collides with source_a "
        r"column 'RecDate' \(suffixed with alias_a 'A': source_b has a 'RecDate' too\); a source that is another "
        r"job's target has such suffixed columns already: give this job other suffixes, alias_a = \"A2\" and "
        r"alias_b = \"B2\" under \[join\]",
    ):
        plan_layout(TARGET, SCANS, ["TrxId"], "left", IncJoinSettings())


def test_the_aliases_the_message_names_let_the_targets_own_columns_through_unchanged() -> None:
    layout = plan_layout(TARGET, SCANS, ["TrxId"], "left", IncJoinSettings(alias_a="A2", alias_b="B2"))
    a_names = dict(layout.a_names)
    assert [a_names[c] for c in ("RecDate_A", "RecDate_B", "Amount", "SepaId")] == ["RecDate_A", "RecDate_B",
                                                                                      "Amount", "SepaId"]  # fmt: skip
    assert a_names["RecDate"] == "RecDate_A2" and a_names["JoinType"] == "JoinType_A2"
    assert dict(layout.b_names) == {"ScanId": "ScanId", "RecDate": "RecDate_B2"}


def test_a_collision_no_alias_can_undo_says_to_rename_in_a_view() -> None:
    with pytest.raises(
        SchemaError,
        match=r"^output column collision: 'RecDate' from the output inc_col collides with join_cols; rename one of "
        r"them in a view of the source \(given as `table`\)$",
    ):
        plan_layout(SCANS, SCANS, ["TrxId", "RecDate"], "left", IncJoinSettings())
