"""The job file's options that take one of a closed set of names, as enums whose members are those names: the
TOML (and the JSON and logs) read the same strings, and code compares with members mypy checks."""

from __future__ import annotations

from deltainc.text_enum import TextEnum

__all__ = ["FeatureHow", "ForwardWrite", "Corrections", "SchemaEvolution"]


class FeatureHow(TextEnum):
    """How a `[[features]]` source joins the spine (`features.how`; its aliases, e.g. left_outer, are normalised)."""

    LEFT = "left"
    ASOF = "asof"


class ForwardWrite(TextEnum):
    """How a forward window's two slices reach the target (`target.forward_write`)."""

    REPLACE_WHERE = "replace_where"  # Delta's replaceWhere of the two slices
    MERGE = "merge"  # one MERGE of the same slices


class Corrections(TextEnum):
    """What a rerun does with rows the sources corrected in the past (`target.corrections`)."""

    APPLY = "apply"  # recompute through the watermark: the target equals a reload
    KEEP = "keep"  # keep what the target has; such rows are only counted as too late


class SchemaEvolution(TextEnum):
    """What a column added to a source does to the target (`target.schema_evolution`)."""

    NONE = "none"  # the run is refused, naming the column
    ADD_COLUMNS = "add_columns"  # added through Delta's schema evolution (rows already there read NULL)
