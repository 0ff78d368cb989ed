"""Where an S3 URI points and with which keys: the shared front of Doris' S3 paths (the S3() table
function, SELECT … INTO OUTFILE, EXPORT and Broker Load).

Doris spells the connection properties two ways (`s3.endpoint`, `s3.access_key`… in the table
function and OUTFILE; `AWS_ENDPOINT`, `AWS_ACCESS_KEY`… in `WITH S3 (…)`), or names a resource
made with CREATE RESOURCE (`"resource" = "name"`), whose endpoint, region and keys are used. The URI
gives the bucket and the key (or key pattern). Strata's own object store client does the talking
(storage.object_store), so DuckDB never reaches the network, and a statement reaches only the one
endpoint and bucket it names. No message here carries a secret key.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

from query.context import Context, SqlFailure
from schemas.errors import ErrorCode
from storage.object_store import ObjectStore, ResourceError

# Doris' older spellings (Broker Load's WITH S3) → the s3.* names; keys compare case-insensitively.
_ALIASES = {
    "aws_endpoint": "s3.endpoint", "endpoint": "s3.endpoint", "s3.endpoint": "s3.endpoint",
    "aws_access_key": "s3.access_key", "access_key": "s3.access_key", "s3.access_key": "s3.access_key",
    "aws_secret_key": "s3.secret_key", "secret_key": "s3.secret_key", "s3.secret_key": "s3.secret_key",
    "aws_region": "s3.region", "region": "s3.region", "s3.region": "s3.region",
    "aws_token": "s3.session_token", "s3.session_token": "s3.session_token",
    "use_path_style": "use_path_style", "resource": "resource",
}
CONNECTION_KEYS = frozenset(_ALIASES)
_URI = re.compile(r"^(?:s3|s3a|s3n)://([^/]+)/(.*)$", re.IGNORECASE)
DEFAULT_REGION = "us-east-1"


@dataclass(frozen=True)
class S3Target:
    """One bucket on one endpoint, and a key (or key pattern) in it."""

    store: ObjectStore
    bucket: str
    key: str

    @property
    def uri(self) -> str:
        return f"s3://{self.bucket}/{self.key}"


def lowered(properties: dict[str, str]) -> dict[str, str]:
    """Properties with lower-cased keys (Doris compares them so); a key given twice is refused."""
    out: dict[str, str] = {}
    for key, value in properties.items():
        if key.lower() in out:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"property '{key}' is given twice")
        out[key.lower()] = value
    return out


def connection_properties(properties: dict[str, str]) -> dict[str, str]:
    """The connection properties among `properties` (lower-cased keys), under their s3.* names."""
    out: dict[str, str] = {}
    for key, value in properties.items():
        name = _ALIASES.get(key)
        if name is not None:
            out[name] = value
    return out


def split_uri(uri: str, what: str) -> tuple[str, str]:
    """`s3://bucket/key` → (bucket, key); nothing else is a place Strata reads or writes."""
    scheme = uri.strip().split("://", 1)[0].lower() if "://" in uri else ""
    if scheme and scheme not in ("s3", "s3a", "s3n"):
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"{what}: '{scheme}://' is not supported; only s3://bucket/key "
                                                      "(the server reads and writes no local files)")
    found = _URI.match(uri.strip())
    if found is None or not found.group(2):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{what}: '{uri}' is not an s3://bucket/key URI (local files "
                                                    "and other schemes are not supported)")
    return found.group(1), found.group(2)


def target(ctx: Context, uri: str, properties: dict[str, str], what: str) -> S3Target:
    """The store a statement's URI and properties (lower-cased keys) name."""
    bucket, key = split_uri(uri, what)
    given = connection_properties(properties)
    if "resource" in given:
        name = given.pop("resource")
        with store_errors(what):
            stored = ctx.stores.properties(name)
        base = {k: v for k, v in stored.items() if k in ("s3.endpoint", "s3.region", "s3.access_key",
                                                        "s3.secret_key", "s3.session_token", "use_path_style")}
        given = {**base, **given}
    missing = [k for k in ("s3.endpoint", "s3.access_key", "s3.secret_key") if not given.get(k)]
    if missing:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{what}: missing propert{'y' if len(missing) == 1 else 'ies'} "
                                                    f"{', '.join(missing)} (or \"resource\" = \"<name>\")")
    endpoint = given["s3.endpoint"]
    if "://" not in endpoint:
        endpoint = f"http://{endpoint}"
    check_endpoint(endpoint, what)
    location = {**given, "type": "s3", "s3.endpoint": endpoint, "s3.bucket": bucket,
                "s3.region": given.get("s3.region") or DEFAULT_REGION}
    with store_errors(what):
        store = ctx.stores.build(f"s3://{bucket}", location)
    return S3Target(store, bucket, key)


def check_endpoint(endpoint: str, what: str) -> None:
    """A statement's endpoint is the user's to choose (as in Doris), but never a link-local address:
    that is where cloud machines answer with their own credentials (169.254.169.254)."""
    host = urlsplit(endpoint).hostname or ""
    try:
        link_local = ipaddress.ip_address(host).is_link_local
    except ValueError:
        link_local = host.lower() in ("metadata", "metadata.google.internal")
    if link_local:
        raise SqlFailure(ErrorCode.SPECIFIC_ACCESS_DENIED, f"{what}: s3.endpoint '{host}' is a link-local "
                                                           "(instance metadata) address; it is refused")


@contextmanager
def store_errors(what: str) -> Iterator[None]:
    """The store's failures as the statement's, named by the statement rather than a resource."""
    try:
        yield
    except ResourceError as exc:
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"{what}: {exc.detail}") from None


def resource_name(properties: dict[str, str]) -> str | None:
    """The resource a statement's properties name, if any (its use needs a privilege: query.access)."""
    for key, value in properties.items():
        if key.lower() == "resource":
            return value
    return None
