"""The tier rules (tests/tiers.py): a test's tier is the highest marker it carries, and a marker that says less than
the test uses is refused naming the marker it needs. No Spark here."""

from __future__ import annotations

import pytest
from tiers import fixture_problem, process_problem, tier_of

pytestmark = pytest.mark.pure


@pytest.mark.parametrize(
    ("markers", "tier"),
    [
        ([], None),
        (["smoke", "parametrize"], None),
        (["pure"], "pure"),
        (["spark", "smoke"], "spark"),
        (["processes", "spark"], "processes"),  # a test's own marker over its module's
        (["cluster", "service", "pure"], "service"),
    ],
)
def test_a_tests_tier_is_the_highest_marker_it_carries(markers: list[str], tier: str | None) -> None:
    assert tier_of(markers) == tier


@pytest.mark.parametrize(
    ("tier", "fixtures", "needed"),
    [
        (None, ["tmp_path"], "no tier marker"),
        ("pure", ["tmp_path", "spark"], "mark it 'spark'"),
        ("pure", ["worker_spark"], "mark it 'spark'"),
        ("spark", ["spark", "server"], "mark it 'service'"),
        ("processes", ["server"], "mark it 'service'"),
    ],
)
def test_a_marker_below_the_fixtures_a_test_uses_is_refused_naming_the_marker_it_needs(
    tier: str | None, fixtures: list[str], needed: str
) -> None:
    assert needed in (fixture_problem(tier, fixtures) or "")


@pytest.mark.parametrize(
    ("tier", "fixtures"),
    [("pure", ["tmp_path", "monkeypatch"]), ("spark", ["spark"]), ("service", ["spark", "server"])],
)
def test_a_marker_that_covers_the_fixtures_passes(tier: str, fixtures: list[str]) -> None:
    assert fixture_problem(tier, fixtures) is None


@pytest.mark.parametrize(
    ("tier", "started", "needed"),
    [
        ("pure", ["python -c pass"], "mark it 'processes'"),
        ("spark", ["python -m deltainc --help"], "mark it 'processes'"),
        ("pure", ["/opt/spark/bin/spark-submit pyspark-shell"], "take the `spark` fixture"),
        ("processes", ["python -c pass"], None),
        ("service", ["minio server"], None),
        ("pure", [], None),
    ],
)
def test_a_process_started_below_the_processes_tier_is_refused(
    tier: str, started: list[str], needed: str | None
) -> None:
    problem = process_problem(tier, started)
    assert (problem is None) if needed is None else (needed in (problem or ""))
