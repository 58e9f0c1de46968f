"""Whether a window's output fits the existing target's columns, and when it may add to them.

Sources evolve: a column added to A or B reaches the join output. With `[target] schema_evolution =
"add_columns"` the write adds it to the target through Delta's own schema evolution (rows already there read
it as NULL; no file is rewritten). A column that disappeared or changed type cannot be applied in place: that
is an error naming the column, raised before anything is written.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import types as T

from deltainc.errors import SchemaError

__all__ = ["new_columns"]


def _origin(origins: Mapping[str, tuple[str, str]], column: str) -> str:
    """Where an output column comes from, for messages."""
    if column not in origins:
        return "the join"
    role, source = origins[column]
    return f"{role} column {source!r}" if source == column else f"{role} column {source!r} as {column!r}"


def new_columns(
    target: T.StructType, output: T.StructType, origins: Mapping[str, tuple[str, str]], label: str, evolution: str
) -> list[str]:
    """The output's columns the target lacks, when `evolution` allows adding them; raises SchemaError for a
    column the target has but the output no longer produces, for a changed type, and for new columns that
    `evolution` does not allow."""
    target_types = {f.name: f.dataType for f in target.fields}
    output_types = {f.name: f.dataType for f in output.fields}
    gone = [name for name in target_types if name not in output_types]
    if gone:
        raise SchemaError(
            f"target: {label} has column(s) {gone} that the join no longer produces (dropped from a source, or "
            "from output_select); a target cannot lose columns in place: restore them in the source, or recompute "
            "the target without them with `deltainc run JOB --rebuild`, or write to a new target"
        )
    retyped = [
        f"{name!r} is {target_types[name].simpleString()} in the target but {kind.simpleString()} in the join "
        f"output ({_origin(origins, name)})"
        for name, kind in output_types.items()
        if name in target_types and target_types[name].simpleString() != kind.simpleString()  # nullability aside
    ]
    if retyped:
        raise SchemaError(
            f"target: {label}: a column changed type: {'; '.join(retyped)}; cast it back in the source, or "
            "recompute the target with `deltainc run JOB --rebuild`"
        )
    added = [name for name in output_types if name not in target_types]
    if added and evolution != "add_columns":
        named = ", ".join(f"{name!r} ({_origin(origins, name)})" for name in added)
        raise SchemaError(
            f"target: the join output has new column(s) the target {label} lacks: {named}; set [target] "
            'schema_evolution = "add_columns" to add them (rows already in the target read them as NULL), or '
            "recompute the target with `deltainc run JOB --rebuild`"
        )
    return added
