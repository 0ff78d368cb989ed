"""One S3 resource as an object store: parsing its Doris properties, and uploads, verified
downloads, listings and removals through `minio`, every failure named by the resource.

Rowset objects are keyed `<s3.root.path>/<rowset path>`, the same id-only relative path the rowset
has on local media, so an object's key alone says which rowset it holds.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
import ssl
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

import urllib3
from minio import Minio
from minio.error import MinioException, S3Error

# Rowset files up to this size go up in one PUT (ETag = MD5 of the bytes); larger ones in parts
# of this size (ETag = MD5 of the parts' MD5s, "-<parts>"). Either way the ETag is checked.
PART_SIZE = 64 << 20
CHECKSUM_META = "strata-sha256"
_BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")

REQUIRED = ("s3.endpoint", "s3.region", "s3.bucket", "s3.access_key", "s3.secret_key")
OPTIONAL = ("s3.root.path", "use_path_style", "s3.session_token", "s3.connection.maximum",
            "s3.connection.request.timeout", "s3.connection.timeout", "s3_validity_check", "provider")


class ResourceError(Exception):
    """A resource's properties are wrong, or its store refused what we asked (bad bucket, keys)."""

    def __init__(self, resource: str, detail: str) -> None:
        super().__init__(f"resource '{resource}': {detail}")
        self.resource = resource
        self.detail = detail


class RemoteUnavailable(ResourceError):
    """The store did not answer (down, slow, unreachable); trying again later may work."""


class UploadMismatch(ResourceError):
    """The stored object is not the bytes we sent (size or checksum differ)."""


@dataclass(frozen=True)
class S3Location:
    endpoint: str  # host:port
    secure: bool
    region: str
    bucket: str
    root_path: str
    access_key: str
    secret_key: str = field(repr=False)
    session_token: str | None = field(default=None, repr=False)

    @classmethod
    def from_properties(cls, resource: str, properties: dict[str, str]) -> S3Location:
        """Checks a resource's properties (secrets already opened) and builds its location."""
        kind = properties.get("type", "").lower()
        if kind != "s3":
            raise ResourceError(resource, f"type '{properties.get('type', '')}' is not supported; use \"type\"=\"s3\"")
        missing = [k for k in REQUIRED if not properties.get(k)]
        if missing:
            raise ResourceError(resource, f"missing required propert{'y' if len(missing) == 1 else 'ies'} "
                                          + ", ".join(missing))
        unknown = sorted(k for k in properties if k != "type" and k not in REQUIRED and k not in OPTIONAL)
        if unknown:
            raise ResourceError(resource, f"unknown propert{'y' if len(unknown) == 1 else 'ies'} "
                                          + ", ".join(unknown))
        endpoint = properties["s3.endpoint"].strip().rstrip("/")
        secure = endpoint.lower().startswith("https://")
        for scheme in ("https://", "http://"):
            if endpoint.lower().startswith(scheme):
                endpoint = endpoint[len(scheme):]
        if not endpoint or "/" in endpoint:
            raise ResourceError(resource, f"s3.endpoint '{properties['s3.endpoint']}' is not host[:port]")
        path_style = properties.get("use_path_style", "true").lower()
        if path_style not in ("true", "false"):
            raise ResourceError(resource, f"use_path_style '{properties['use_path_style']}' is not true or false")
        if not _BUCKET_NAME.match(properties["s3.bucket"]):
            raise ResourceError(resource, f"s3.bucket '{properties['s3.bucket']}' is not a valid bucket name "
                                          "(3-63 characters: lowercase letters, digits, '.', '-')")
        root = properties.get("s3.root.path", "").strip("/")
        if ".." in root.split("/"):
            raise ResourceError(resource, "s3.root.path may not contain '..'")
        return cls(endpoint=endpoint, secure=secure, region=properties["s3.region"],
                   bucket=properties["s3.bucket"], root_path=root, access_key=properties["s3.access_key"],
                   secret_key=properties["s3.secret_key"], session_token=properties.get("s3.session_token"))


@dataclass(frozen=True)
class RemoteObject:
    path: str  # relative to the resource's root path
    size: int
    last_modified: datetime | None


def file_digests(path: Path, part_size: int = PART_SIZE) -> tuple[str, str]:
    """(sha256, expected ETag) of a file in one read: the ETag S3 gives the object uploaded from it
    in parts of `part_size` (MD5 of the bytes, or of the parts' MD5s with "-<parts>")."""
    sha = hashlib.sha256()
    digests = []
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(part_size), b""):
            sha.update(chunk)
            digests.append(hashlib.md5(chunk, usedforsecurity=False).digest())
    if len(digests) <= 1:
        etag = (digests[0] if digests else hashlib.md5(b"", usedforsecurity=False).digest()).hex()
    else:
        etag = hashlib.md5(b"".join(digests), usedforsecurity=False).hexdigest() + f"-{len(digests)}"
    return sha.hexdigest(), etag


def expected_etag(path: Path, part_size: int = PART_SIZE) -> str:
    return file_digests(path, part_size)[1]


def _certificate_error(exc: BaseException) -> str | None:
    """The verification message, when `exc` (or what it wraps) is a refused TLS certificate."""
    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            return None
        if isinstance(seen, ssl.SSLCertVerificationError):
            return str(seen.verify_message or seen)
        seen = getattr(seen, "reason", None) or seen.__cause__ or seen.__context__ or \
            next((a for a in getattr(seen, "args", ()) if isinstance(a, BaseException)), None)
    return None


class ObjectStore:
    def __init__(self, name: str, location: S3Location, *, connect_timeout_s: float = 3.0,
                 read_timeout_s: float = 20.0, ca_file: Path | None = None) -> None:
        self.name = name
        self.location = location
        tls = {"ca_certs": str(ca_file), "cert_reqs": "CERT_REQUIRED"} if ca_file else {}
        http = urllib3.PoolManager(**tls,  # type: ignore[arg-type]
            timeout=urllib3.Timeout(connect=connect_timeout_s, read=read_timeout_s), maxsize=16,
            # One quick retry for a dropped connection; the callers own the longer backoff.
            retries=urllib3.Retry(total=1, backoff_factor=0.2, status_forcelist=(500, 502, 503, 504)))
        self.client = Minio(location.endpoint, access_key=location.access_key, secret_key=location.secret_key,
                            session_token=location.session_token, secure=location.secure, region=location.region,
                            http_client=http)

    def key(self, path: str) -> str:
        return f"{self.location.root_path}/{path}" if self.location.root_path else path

    def _fail(self, action: str, exc: Exception) -> ResourceError:
        if isinstance(exc, S3Error):
            return ResourceError(self.name, f"{action} refused by the store: {exc.code}: {exc.message}")
        reason = getattr(exc, "reason", None) or exc
        verify = _certificate_error(exc)
        if verify is not None:  # it answered, but its certificate is not one this process trusts
            return ResourceError(self.name, f"{action} failed: the TLS certificate of {self.location.endpoint} was "
                                            f"not accepted ({verify}); give its CA bundle as s3_ca_file")
        return RemoteUnavailable(self.name, f"{action} failed: the store at {self.location.endpoint} did not answer "
                                            f"({type(reason).__name__})")

    def probe(self) -> None:
        """Checks the bucket exists and a small object can be written, read back and deleted."""
        try:
            if not self.client.bucket_exists(self.location.bucket):
                raise ResourceError(self.name, f"bucket '{self.location.bucket}' does not exist")
            key = self.key(f"_strata_probe/{uuid.uuid4().hex}")
            body = uuid.uuid4().bytes
            self.client.put_object(self.location.bucket, key, io.BytesIO(body), len(body))
            response = self.client.get_object(self.location.bucket, key)
            try:
                read = response.read()
            finally:
                response.close()
                response.release_conn()
            self.client.remove_object(self.location.bucket, key)
        except ResourceError:
            raise
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._fail("the probe", exc) from None
        if read != body:
            raise ResourceError(self.name, "a probe object read back differs from what was written")

    def ensure_bucket(self) -> None:
        """Creates the bucket when it is missing (a bucket Strata keeps for itself)."""
        try:
            if not self.client.bucket_exists(self.location.bucket):
                self.client.make_bucket(self.location.bucket, location=self.location.region)
        except S3Error as exc:
            if exc.code not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                raise self._fail(f"creation of bucket {self.location.bucket}", exc) from None
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._fail(f"creation of bucket {self.location.bucket}", exc) from None

    def upload(self, local: Path, path: str, checksum: str, etag: str | None = None) -> None:
        """Uploads a rowset file, then checks the stored object's size and ETag against the file's
        (`etag`, when the caller already computed it with `file_digests`)."""
        size = local.stat().st_size
        expected = etag or expected_etag(local)
        try:
            self.client.fput_object(self.location.bucket, self.key(path), str(local), part_size=PART_SIZE,
                                    metadata={CHECKSUM_META: checksum})
            stored = self.client.stat_object(self.location.bucket, self.key(path))
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._fail(f"upload of {path}", exc) from None
        got = (stored.etag or "").strip('"')
        if stored.size != size or got != expected:
            self.remove(path)
            raise UploadMismatch(self.name, f"{path}: stored {stored.size} bytes (etag {got}), sent {size} bytes "
                                            f"(etag {expected})")

    def download(self, path: str, dest: Path) -> None:
        tmp = dest.with_name(f".{dest.name}.{uuid.uuid4().hex[:8]}.part")
        try:
            self.client.fget_object(self.location.bucket, self.key(path), str(dest), tmp_file_path=str(tmp))
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            tmp.unlink(missing_ok=True)
            raise self._fail(f"read of {path}", exc) from None

    @contextlib.contextmanager
    def reading(self, path: str) -> Iterator[BinaryIO]:
        """An object's bytes as a stream, for a reader that consumes them as they arrive instead of
        from a local copy; a failure while reading is a `ResourceError` like any other."""
        try:
            response = self.client.get_object(self.location.bucket, self.key(path))
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._fail(f"read of {path}", exc) from None
        try:
            yield response  # type: ignore[misc]  # urllib3's response is a readable binary stream
        except (urllib3.exceptions.HTTPError, ConnectionError, TimeoutError) as exc:
            raise self._fail(f"read of {path}", exc) from None
        finally:
            response.close()
            response.release_conn()

    def remove(self, path: str) -> None:
        try:
            self.client.remove_object(self.location.bucket, self.key(path))
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._fail(f"removal of {path}", exc) from None

    def exists(self, path: str) -> bool:
        try:
            self.client.stat_object(self.location.bucket, self.key(path))
            return True
        except S3Error as exc:
            if exc.code in ("NoSuchKey", "NoSuchObject"):
                return False
            raise self._fail(f"stat of {path}", exc) from None
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._fail(f"stat of {path}", exc) from None

    def objects(self, under: str = "") -> Iterator[RemoteObject]:
        """Every object below the root path (optionally below `under` in it)."""
        prefix = self.key(under) if under else (self.location.root_path + "/" if self.location.root_path else "")
        strip = len(self.location.root_path) + 1 if self.location.root_path else 0
        try:
            for obj in self.client.list_objects(self.location.bucket, prefix=prefix, recursive=True):
                if obj.object_name is not None:
                    yield RemoteObject(obj.object_name[strip:], obj.size or 0, obj.last_modified)
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._fail("listing", exc) from None

    def read_bytes(self, path: str, limit: int) -> bytes:
        """An object's bytes; more than `limit` is refused (the caller's memory bound) before reading."""
        try:
            size = self.client.stat_object(self.location.bucket, self.key(path)).size or 0
            if size > limit:
                raise ResourceError(self.name, f"{path} holds {size} bytes, more than the {limit} allowed")
            response = self.client.get_object(self.location.bucket, self.key(path))
            try:
                return response.read()
            finally:
                response.close()
                response.release_conn()
        except ResourceError:
            raise
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._fail(f"read of {path}", exc) from None

    def put_bytes(self, path: str, body: bytes) -> None:
        """Writes a small object in one PUT and checks the stored size."""
        try:
            self.client.put_object(self.location.bucket, self.key(path), io.BytesIO(body), len(body))
            stored = self.client.stat_object(self.location.bucket, self.key(path))
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._fail(f"write of {path}", exc) from None
        if stored.size != len(body):
            raise UploadMismatch(self.name, f"{path}: stored {stored.size} bytes, sent {len(body)} bytes")
