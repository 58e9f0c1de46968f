"""When a B row matches an A row: the join condition, in one place.

The engine's join and the pipeline's too-late rows (`deltainc.pipeline.target.too_late`) both build it here, so
that the two can never drift apart: every join key equal (`==`, so a null key matches nothing), the `join_cond`
(SQL text or a Column), and, when asked for, the sliding join window B.t in [A.t - lb, A.t + mw].
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from deltainc.join.join_spec import JoinSpec, condition_column

__all__ = ["side_column", "match_condition"]


def side_column(alias: str, name: str) -> Column:
    """Column `name` of the join side aliased `alias` (the settings' alias_a or alias_b), the name in backticks."""
    return F.col(f"{alias}.`{name}`")


def match_condition(spec: JoinSpec, unit_column: str | None) -> Column:
    """The condition a B row (aliased alias_b) meets to match an A row (alias_a): the keys equal and the join_cond;
    with `unit_column` (both sides' unit index) also the sliding join window B.t in [A.t - lb, A.t + mw]."""
    alias_a, alias_b = spec.settings.alias_a, spec.settings.alias_b
    condition = F.lit(True)
    for key in spec.join_cols:
        condition = condition & (side_column(alias_a, key) == side_column(alias_b, key))
    if spec.join_cond is not None:
        condition = condition & condition_column(spec.join_cond)
    if unit_column is not None:
        a_t, b_t = side_column(alias_a, unit_column), side_column(alias_b, unit_column)
        condition = condition & b_t.between(a_t - F.lit(spec.look_back_time), a_t + F.lit(spec.max_waiting_time))
    return condition
