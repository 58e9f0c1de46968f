"""The job file under one name: its section models, its closed-set options and its loader, each from its own
module of this package, for the code that imports them from here."""

from __future__ import annotations

from deltainc.pipeline.job.choices import Corrections, FeatureHow, ForwardWrite, SchemaEvolution
from deltainc.pipeline.job.feature_config import FeatureConfig
from deltainc.pipeline.job.field_types import absolute_location
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.job_file import load_job, resolve_job
from deltainc.pipeline.job.join_config import JoinConfig
from deltainc.pipeline.job.table_refs import SourceRef, TableRef
from deltainc.pipeline.job.target_config import StateConfig, TargetConfig

__all__ = [
    "TableRef",
    "SourceRef",
    "FeatureConfig",
    "JoinConfig",
    "TargetConfig",
    "StateConfig",
    "JobConfig",
    "load_job",
    "resolve_job",
    "absolute_location",
    "FeatureHow",
    "ForwardWrite",
    "Corrections",
    "SchemaEvolution",
]
