"""What a command returns: the windows it processed, each with the run-log row it committed. No Spark here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deltainc.join.options import counted_types
from deltainc.join.windows import Window
from deltainc.pipeline.state import RunRecord

__all__ = ["WindowReport", "PipelineResult"]


@dataclass(frozen=True)
class WindowReport:
    """One processed window and the run-log row that committed it (rows, files read, the target's commit)."""

    window: Window
    record: RunRecord
    how: str  # the job's join kind: which JoinTypes its windows count

    @property
    def counts(self) -> dict[str, int]:
        """Output rows by JoinType name, of the types a job of this kind outputs, in counting order."""
        return {code.outcome: self.record.rows(code.outcome) for code in counted_types(self.how)}

    def document(self) -> dict[str, object]:
        """The window as JSON: its label, then its run-log row (`RunRecord.document`)."""
        return {"window": str(self.window), **self.record.document()}


@dataclass(frozen=True)
class PipelineResult:
    """The outcome of one command: the windows processed and where the watermark stands."""

    job: str
    command: str
    run_id: str | None
    windows: tuple[WindowReport, ...]
    watermark: str | None
    message: str

    @property
    def nothing_pending(self) -> bool:
        return not self.windows

    def document(self) -> dict[str, Any]:
        """The result as one JSON-ready document (`--json`): its windows as their run-log rows."""
        return {
            "job": self.job,
            "command": self.command,
            "run_id": self.run_id,
            "windows": [report.document() for report in self.windows],
            "watermark": self.watermark,
            "message": self.message,
            "nothing_pending": self.nothing_pending,
        }
