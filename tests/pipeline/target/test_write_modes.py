"""The write modes (docs/design.md#run-modes), one object each: what moves the watermark, which window is a forward
one, whose rows are laid out as the target's files. No Spark session here."""

from __future__ import annotations

import pytest

from deltainc.pipeline.controller.plan import forward_mode
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.mode_names import ModeName
from deltainc.pipeline.target.forward_write import FORWARD
from deltainc.pipeline.target.merge import FORWARD_ONLY, RERUN
from deltainc.pipeline.target.modes import write_mode
from deltainc.pipeline.target.recompute_write import REBUILD, RECOMPUTE
from deltainc.pipeline.target.write_mode import WriteMode

pytestmark = pytest.mark.pure

MODES = (FORWARD, FORWARD_ONLY, RERUN, RECOMPUTE, REBUILD)


def job(sliding: bool) -> JobConfig:
    return JobConfig.model_validate(
        {
            "name": "trx",
            "start_date": "2025-03-01",
            "source_a": {"path": "/a"},
            "source_b": {"path": "/b"},
            "join": {"how": "left", "join_cols": ["TrxId"], "enforce_sliding_join_window": sliding},
            "target": {"path": "/t", "keys": ["TrxId"], "b_keys": ["SepaId"]},
        }
    )


def test_every_mode_has_its_own_name() -> None:
    assert len({mode.name for mode in MODES}) == len(MODES)


@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.name)
def test_only_a_run_s_windows_and_a_rebuild_move_the_watermark(mode: WriteMode) -> None:
    assert mode.moves_watermark == (mode in (FORWARD, FORWARD_ONLY, REBUILD))


def test_a_run_replaces_the_two_slices_only_with_the_sliding_join_window() -> None:
    # Without it a window's output depends on the window's size: only the forward-only MERGE keeps the target right.
    modes = (write_mode(forward_mode(job(sliding=True))), write_mode(forward_mode(job(sliding=False))))
    assert modes == (FORWARD, FORWARD_ONLY)


def test_each_mode_name_the_plan_gives_maps_to_the_writer_of_that_name() -> None:
    assert [write_mode(name).name for name in ModeName] == [name.value for name in ModeName]
    assert {write_mode(name) for name in ModeName} == set(MODES)


def test_the_forward_only_merge_writes_the_rows_as_the_join_gives_them_every_other_write_lays_them_out() -> None:
    assert [mode.name for mode in MODES if not mode.lays_out] == [FORWARD_ONLY.name, RERUN.name]


def test_only_a_rebuild_replaces_the_target_s_columns() -> None:
    assert [mode.name for mode in MODES if mode.replaces_columns] == [REBUILD.name]
