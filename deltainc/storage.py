"""Where a table lives, as each library needs it: Spark reads Hadoop paths (`s3a://`) configured by
`spark.hadoop.fs.s3a.*`, delta-rs reads `s3://` URIs with storage options; both come from the one `[storage]`
setting (else the AWS_* variables the AWS tools read). Credentials are SecretStr: never printed, logged or written.

docs/production/object-storage.md says what makes the lock and the commits safe there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from deltainc.settings import StorageSettings

__all__ = [
    "is_s3",
    "spark_location",
    "rs_location",
    "resolved",
    "use",
    "active",
    "rs_options",
    "storage_options",
    "spark_conf",
    "s3_packages",
    "slim_s3_jars",
    "uses_s3",
    "commit_warnings",
]

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
# hadoop-aws's AWS SDK, by the Hadoop version pyspark ships: the S3 client alone instead of the whole SDK bundle
# (18 MB instead of 690 MB). Other Hadoop versions take hadoop-aws's own dependencies.
_SDK = {"3.5.0": "2.35.4"}
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


def _allow_http(storage: StorageSettings) -> bool:
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
    if _allow_http(storage):
        options["AWS_ALLOW_HTTP"] = "true"
    if storage.path_style is not None:
        options["AWS_VIRTUAL_HOSTED_STYLE_REQUEST"] = str(not storage.path_style).lower()
    return options


def storage_options(location: str) -> dict[str, str] | None:
    """What delta-rs is given beside `location`: the active settings' options for S3, nothing for a local path."""
    return rs_options(active()) if is_s3(location) else None


def spark_conf(storage: StorageSettings) -> dict[str, str]:
    """Spark's S3A configuration for `storage` (the default credential chain when it names no keys)."""
    prefix = "spark.hadoop.fs.s3a."
    conf: dict[str, str] = {}
    if storage.endpoint_url:
        conf[f"{prefix}endpoint"] = storage.endpoint_url
        conf[f"{prefix}connection.ssl.enabled"] = str(not _allow_http(storage)).lower()
    if storage.region:
        conf[f"{prefix}endpoint.region"] = storage.region
    path_style = storage.path_style if storage.path_style is not None else storage.endpoint_url is not None
    conf[f"{prefix}path.style.access"] = str(path_style).lower()
    if storage.access_key_id and storage.secret_access_key is not None:
        conf[f"{prefix}access.key"] = storage.access_key_id
        conf[f"{prefix}secret.key"] = storage.secret_access_key.get_secret_value()
        if storage.session_token is not None:
            conf[f"{prefix}session.token"] = storage.session_token.get_secret_value()
            conf[f"{prefix}aws.credentials.provider"] = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
    return conf


def hadoop_version() -> str:
    """The Hadoop version pyspark ships (its hadoop-client-api jar), which hadoop-aws must match."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    for jar in sorted(jars.glob("hadoop-client-api-*.jar")):
        return jar.name.removeprefix("hadoop-client-api-").removesuffix(".jar")
    raise RuntimeError(f"no hadoop-client-api jar in {jars}: cannot tell which hadoop-aws to use")


def slim_s3_jars(version: str | None = None) -> bool:
    """Whether S3A's jars for this Hadoop come without the whole AWS SDK bundle (the tested line: about 18 MB)."""
    return (version or hadoop_version()) in _SDK


def s3_packages(version: str | None = None) -> tuple[list[str], list[str]]:
    """The Maven coordinates S3A needs beside Delta's, and those to leave out of the resolution."""
    version = version or hadoop_version()
    packages = [f"org.apache.hadoop:hadoop-aws:{version}"]
    excludes: list[str] = []
    sdk = _SDK.get(version)
    if sdk is not None:
        packages += [f"software.amazon.awssdk:s3:{sdk}", f"software.amazon.awssdk:s3-transfer-manager:{sdk}"]
        excludes = [
            "software.amazon.awssdk:bundle",
            "org.apache.hadoop:hadoop-client-api",
            "org.apache.hadoop:hadoop-client-runtime",
        ]
    return packages, excludes


_MULTI_WRITER_STORES = ("S3DynamoDBLogStore",)


def commit_warnings(target_locations: Iterable[str | None], conf: Mapping[str, str]) -> list[str]:
    """What `validate` says of a target in S3 when Spark's commits there are atomic for one driver only: Delta's
    default S3 log store (S3SingleDriverLogStore) writes a commit without a conditional write."""
    store = conf.get("spark.delta.logStore.s3a.impl") or conf.get("spark.delta.logStore.s3.impl") or ""
    if not uses_s3(target_locations) or store.endswith(_MULTI_WRITER_STORES):
        return []
    return [
        "target.path is in S3, where Delta's commits from Spark are atomic for one driver only (its default "
        "S3SingleDriverLogStore). deltainc's lock, a conditional write to S3, lets one run of this job write at "
        "a time; nothing else may write the target while a run holds it, unless [spark.conf] sets "
        "spark.delta.logStore.s3a.impl = io.delta.storage.S3DynamoDBLogStore (with io.delta:delta-storage-s3-"
        "dynamodb's jar and a DynamoDB table; docs/production/object-storage.md)"
    ]
