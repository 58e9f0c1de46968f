"""Closed sets of names are enums whose members are their own strings (run-log columns, JSON, log lines)."""

from __future__ import annotations

import json

import pytest

from deltainc.pipeline.controller.window import Step
from deltainc.pipeline.state.model import RunStatus

pytestmark = pytest.mark.pure


def test_a_member_reads_stores_and_prints_as_its_string() -> None:
    assert RunStatus.SUCCEEDED == "succeeded"
    logged = "%s" % Step.WRITTEN  # noqa: UP031 (as logging formats its arguments)
    assert (str(Step.WRITTEN), f"{Step.WRITTEN}", logged) == ("written",) * 3
    assert json.dumps({"status": RunStatus.CANCELLED}) == '{"status": "cancelled"}'
