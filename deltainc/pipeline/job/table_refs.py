"""A Delta table as the job file names it, by path or catalog name; a source adds which of its rows are joined."""

from __future__ import annotations

from pydantic import model_validator

from deltainc.join.options import Text
from deltainc.pipeline.job.field_types import Location, Section

__all__ = ["TableRef", "SourceRef"]


class TableRef(Section):
    """A Delta table given by exactly one of `path` (a Delta path) or `table` (a catalog name)."""

    path: Location | None = None
    table: Text | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> TableRef:
        if (self.path is None) == (self.table is None):
            found = "both" if self.path is not None else "neither"
            raise ValueError(f"give exactly one of 'path' or 'table' (got {found})")
        return self

    @property
    def label(self) -> str:
        """A human label for messages and logs: 'path data/x' or 'table db.x'."""
        return f"path {self.path}" if self.path is not None else f"table {self.table}"


class SourceRef(TableRef):
    """A source table, and optionally which of its rows the job joins."""

    # A Spark SQL condition on the source's columns: only rows where it holds are joined, in every window alike
    # (e.g. "OrderId IS NOT NULL" leaves out rows whose key is NULL). A change is a change of the target's rows.
    where: Text | None = None
