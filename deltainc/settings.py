"""Global settings: a TOML file (conf/deltainc.toml), overridden by DELTAINC_* environment variables (nested with __).

The file is `load_settings(settings_file)`'s argument, else $DELTAINC_SETTINGS_FILE, else DEFAULT_SETTINGS_FILE; it
is given to pydantic-settings as its `toml_file`, so choosing one never writes to the environment.
"""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

__all__ = [
    "SparkSettings",
    "StorageSettings",
    "Settings",
    "load_settings",
    "settings_file",
    "DEFAULT_SETTINGS_FILE",
    "SETTINGS_FILE_ENV",
]

DEFAULT_SETTINGS_FILE = Path("conf/deltainc.toml")
SETTINGS_FILE_ENV = "DELTAINC_SETTINGS_FILE"  # the settings file when none is given (read, never written)


class SparkSettings(BaseModel):
    """How to build the SparkSession: master, resources and any extra Spark conf."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    master: str | None = "local[*]"  # None: leave it to spark-submit --master
    # A Spark Connect server (sc://host:15002) to be a client of instead of starting a JVM; $SPARK_REMOTE also sets it.
    remote: str | None = None
    app_name: str = "deltainc"
    executor_memory: str | None = None
    executor_cores: int | None = None
    shuffle_partitions: int = Field(default=8, ge=1)
    ui_enabled: bool = False
    log_level: str = "WARN"
    conf: dict[str, str] = Field(default_factory=dict)


class StorageSettings(BaseModel):
    """How to reach S3 or an S3-compatible store (`[storage]`); a field left unset is taken from the AWS_* variable
    the AWS tools read (deltainc.storage.resolved). The secrets are never printed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    endpoint_url: str | None = None  # AWS_ENDPOINT_URL: an S3-compatible server, e.g. http://127.0.0.1:9000
    region: str | None = None  # AWS_REGION
    access_key_id: str | None = None  # AWS_ACCESS_KEY_ID
    secret_access_key: SecretStr | None = None  # AWS_SECRET_ACCESS_KEY
    session_token: SecretStr | None = None  # AWS_SESSION_TOKEN
    allow_http: bool | None = None  # AWS_ALLOW_HTTP; default: whether endpoint_url starts with http://
    path_style: bool | None = None  # bucket in the path, not the host name; default: with an endpoint_url


class Settings(BaseSettings):
    """Where things live and how Spark runs; every field can be set by DELTAINC_<FIELD> (nested: __)."""

    model_config = SettingsConfigDict(
        env_prefix="DELTAINC_",
        env_nested_delimiter="__",
        extra="forbid",
        frozen=True,
    )

    spark: SparkSettings = Field(default_factory=SparkSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
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
        """Explicit values first, then DELTAINC_* variables, then the TOML file: the class's `toml_file` (set
        by `load_settings(settings_file)`), else the one `settings_file()` names."""
        toml_file = settings_cls.model_config.get("toml_file") or settings_file()
        return (
            init_settings,
            env_settings,
            TomlConfigSettingsSource(settings_cls, toml_file=toml_file),
        )


def settings_file() -> Path:
    """The settings file used when none is given: $DELTAINC_SETTINGS_FILE, else DEFAULT_SETTINGS_FILE."""
    return Path(os.environ.get(SETTINGS_FILE_ENV, str(DEFAULT_SETTINGS_FILE)))


@functools.cache
def _reading(toml_file: Path) -> type[Settings]:
    """Settings whose TOML source is `toml_file`: pydantic-settings' own `toml_file` configuration."""

    class SettingsFromFile(Settings):
        model_config = SettingsConfigDict(toml_file=toml_file)

    return SettingsFromFile


def load_settings(settings_file: Path | None = None, **overrides: object) -> Settings:
    """Settings from `settings_file` (default: $DELTAINC_SETTINGS_FILE or DEFAULT_SETTINGS_FILE) and the
    environment, with explicit overrides on top. A missing file means the defaults; a bad one raises
    tomllib.TOMLDecodeError or pydantic.ValidationError."""
    settings_cls = Settings if settings_file is None else _reading(Path(settings_file))
    return settings_cls(**overrides)  # type: ignore[arg-type]
