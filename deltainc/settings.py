"""Global settings: a TOML file (conf/deltainc.toml), overridden by DELTAINC_* environment variables (nested with __);
and where a table lives, as each library names it, from the one `[storage]` setting.

The file is `load_settings(settings_file)`'s argument, else $DELTAINC_SETTINGS_FILE, else DEFAULT_SETTINGS_FILE; it
is given to pydantic-settings as its `toml_file`, so choosing one never writes to the environment.

Spark reads Hadoop paths (`s3a://`) configured by `spark.hadoop.fs.s3a.*` (deltainc.storage), delta-rs reads `s3://`
URIs with storage options; both come from `[storage]` (else the AWS_* variables the AWS tools read). Credentials are
SecretStr: never printed, logged or written.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
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
    "is_s3",
    "spark_location",
    "rs_location",
    "uses_s3",
    "resolved",
    "use",
    "active",
    "allows_http",
    "rs_options",
    "storage_options",
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
    the AWS tools read (`resolved`). The secrets are never printed."""

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


_S3 = re.compile(r"^s3[an]?://", re.IGNORECASE)
# AWS_* variables the AWS SDKs and delta-rs read, by StorageSettings field (the first one set wins).
_ENVIRONMENT = {
    "endpoint_url": ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
    "region": ("AWS_REGION", "AWS_DEFAULT_REGION"),
    "access_key_id": ("AWS_ACCESS_KEY_ID",),
    "secret_access_key": ("AWS_SECRET_ACCESS_KEY",),
    "session_token": ("AWS_SESSION_TOKEN",),
    "allow_http": ("AWS_ALLOW_HTTP",),
}
_active: StorageSettings | None = None


def is_s3(location: str) -> bool:
    """Whether `location` is in S3 (or an S3-compatible store): s3://, s3a:// or s3n://."""
    return bool(_S3.match(location))


def spark_location(location: str) -> str:
    """The location as Spark's Hadoop file systems name it: S3 through S3A (`s3a://`); anything else unchanged."""
    return _S3.sub("s3a://", location) if is_s3(location) else location


def rs_location(location: str) -> str:
    """The location as delta-rs names it: S3 as `s3://`; anything else unchanged."""
    return _S3.sub("s3://", location) if is_s3(location) else location


def uses_s3(locations: Iterable[str | None]) -> bool:
    """Whether any of the locations is in S3."""
    return any(location is not None and is_s3(location) for location in locations)


def resolved(storage: StorageSettings, environ: Mapping[str, str] | None = None) -> StorageSettings:
    """`storage` with every field it leaves unset taken from the AWS_* variables (`environ`, default os.environ)."""
    environ = os.environ if environ is None else environ
    filled: dict[str, object] = {}
    for field, names in _ENVIRONMENT.items():
        if getattr(storage, field) is not None:
            continue
        value = next((environ[name] for name in names if environ.get(name)), None)
        if value is not None:
            filled[field] = value.strip().lower() in ("1", "true", "yes") if field == "allow_http" else value
    return StorageSettings.model_validate({**_plain(storage), **filled}) if filled else storage


def _plain(storage: StorageSettings) -> dict[str, object]:
    """The fields as given (secrets revealed), to build a copy that validates again."""
    values = storage.model_dump()
    for field in ("secret_access_key", "session_token"):
        secret = getattr(storage, field)
        values[field] = None if secret is None else secret.get_secret_value()
    return values


def use(storage: StorageSettings) -> None:
    """Make `storage` the settings this process's delta-rs calls use (set where the settings are loaded)."""
    global _active
    _active = storage


def active() -> StorageSettings:
    """The storage settings in use: those given to `use`, else the defaults, filled from the environment."""
    return resolved(_active if _active is not None else StorageSettings())


def allows_http(storage: StorageSettings) -> bool:
    """Whether the store is reached over plain HTTP: `allow_http` when set, else an http:// endpoint_url."""
    if storage.allow_http is not None:
        return storage.allow_http
    return bool(storage.endpoint_url and storage.endpoint_url.lower().startswith("http://"))


def rs_options(storage: StorageSettings) -> dict[str, str]:
    """delta-rs's storage options for S3. Its commits are conditional writes (If-None-Match), which S3 and MinIO
    honour: no locking provider is needed."""
    options: dict[str, str] = {}
    if storage.endpoint_url:
        options["AWS_ENDPOINT_URL"] = storage.endpoint_url
    if storage.region:
        options["AWS_REGION"] = storage.region
    if storage.access_key_id:
        options["AWS_ACCESS_KEY_ID"] = storage.access_key_id
    if storage.secret_access_key is not None:
        options["AWS_SECRET_ACCESS_KEY"] = storage.secret_access_key.get_secret_value()
    if storage.session_token is not None:
        options["AWS_SESSION_TOKEN"] = storage.session_token.get_secret_value()
    if allows_http(storage):
        options["AWS_ALLOW_HTTP"] = "true"
    if storage.path_style is not None:
        options["AWS_VIRTUAL_HOSTED_STYLE_REQUEST"] = str(not storage.path_style).lower()
    return options


def storage_options(location: str) -> dict[str, str] | None:
    """What delta-rs is given beside `location`: the active settings' options for S3, nothing for a local path."""
    return rs_options(active()) if is_s3(location) else None
