"""`deltainc report`: a job's history as a page of charts, read from its run log and state without a JVM."""

from __future__ import annotations

from deltainc.report.build import Report, charts_of, default_out, write_report
from deltainc.report.history import History, NoRuns, read_history

__all__ = ["Report", "History", "NoRuns", "write_report", "read_history", "charts_of", "default_out"]
