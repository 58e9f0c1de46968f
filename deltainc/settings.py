"""Global settings: conf/deltainc.toml, overridden by DELTAINC_* environment variables (nested with __)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

__all__ = ["SparkSettings", "Settings", "load_settings", "DEFAULT_SETTINGS_FILE"]

DEFAULT_SETTINGS_FILE = Path("conf/deltainc.toml")


class SparkSettings(BaseModel):
    """How to build the SparkSession: master, resources and any extra Spark conf."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    master: str | None = "local[*]"  # None: leave it to spark-submit --master
    app_name: str = "deltainc"
    executor_memory: str | None = None
    executor_cores: int | None = None
    shuffle_partitions: int = Field(default=8, ge=1)
    ui_enabled: bool = False
    log_level: str = "WARN"
    conf: dict[str, str] = Field(default_factory=dict)


class Settings(BaseSettings):
    """Where things live and how Spark runs; every field can be set by DELTAINC_<FIELD> (nested: __)."""

    model_config = SettingsConfigDict(
        env_prefix="DELTAINC_",
        env_nested_delimiter="__",
        extra="forbid",
        frozen=True,
    )

    spark: SparkSettings = Field(default_factory=SparkSettings)
    warehouse_dir: Path = Path("spark-warehouse")
    state_dir: Path = Path("data/_deltainc")
    job_dir: Path = Path("conf/jobs")
    log_level: str = "INFO"
    # Spark's own output (unless --verbose): one file per job here, spark-<job>.log, rotated at 10 MB.
    spark_log_dir: Path = Field(default_factory=lambda: Path(tempfile.gettempdir()) / "deltainc-logs")
    # A run renews its lock every quarter of this; a lock not renewed for this long belongs to a dead run.
    lock_expiry_seconds: int = Field(default=120, ge=10)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_file = Path(os.environ.get("DELTAINC_SETTINGS_FILE", DEFAULT_SETTINGS_FILE))
        return (
            init_settings,
            env_settings,
            TomlConfigSettingsSource(settings_cls, toml_file=toml_file),
        )


def load_settings(**overrides: object) -> Settings:
    """Settings from the TOML file and the environment, with explicit overrides on top."""
    return Settings(**overrides)  # type: ignore[arg-type]
