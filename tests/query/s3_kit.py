"""Fixtures and helpers for the tests of Doris' S3 paths (S3() table function, INTO OUTFILE, EXPORT,
Broker Load) against the stack's MinIO: a MinIO user of its own (so its secret key is a unique
string a test can look for), a fresh bucket, and objects put and read with MinIO's own client."""

from __future__ import annotations

import io
import time
import uuid
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from minio import Minio
from minio.credentials import StaticProvider
from minio.minioadmin import MinioAdmin

from schemas.config import load_settings
from tests.query.sqlkit import Conn, columns, rows

S3User = tuple[str, str]


def minio() -> Minio:
    config = load_settings()
    return Minio(config.minio_endpoint, config.minio_root_user, config.minio_root_password.get_secret_value(),
                 secure=False)


@pytest.fixture(scope="session")
def s3_user(server: None) -> S3User:
    config = load_settings()
    root = StaticProvider(config.minio_root_user, config.minio_root_password.get_secret_value())
    access, secret = f"strata{uuid.uuid4().hex[:8]}", f"sk-{uuid.uuid4().hex}"
    admin = MinioAdmin(endpoint=config.minio_endpoint, credentials=root, secure=False)
    admin.user_add(access, secret)
    admin.attach_policy(["readwrite"], user=access)
    return access, secret


@pytest.fixture
def bucket(server: None) -> str:
    name = f"s3io-{uuid.uuid4().hex[:10]}"
    minio().make_bucket(name)
    return name


def keys(user: S3User, spelling: str = "s3") -> str:
    """The connection properties, as `"k" = "v", …`, in Doris' s3.* or AWS_* spelling."""
    endpoint = f"http://{load_settings().minio_endpoint}"
    if spelling == "aws":
        props = {"AWS_ENDPOINT": endpoint, "AWS_ACCESS_KEY": user[0], "AWS_SECRET_KEY": user[1],
                 "AWS_REGION": "us-east-1"}
    else:
        props = {"s3.endpoint": endpoint, "s3.access_key": user[0], "s3.secret_key": user[1],
                 "s3.region": "us-east-1", "use_path_style": "true"}
    return ", ".join(f'"{k}" = "{v}"' for k, v in props.items())


def put(bucket: str, key: str, body: bytes) -> None:
    minio().put_object(bucket, key, io.BytesIO(body), len(body))


def put_parquet(bucket: str, key: str, table: pa.Table) -> None:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    put(bucket, key, sink.getvalue())


def get(bucket: str, key: str) -> bytes:
    response = minio().get_object(bucket, key)
    try:
        return response.read()
    finally:
        response.close()
        response.release_conn()


def listed(bucket: str, prefix: str = "") -> list[str]:
    return sorted(o.object_name or "" for o in minio().list_objects(bucket, prefix=prefix, recursive=True))


def finished_job(conn: Conn, kind: str, label: str, timeout_s: float = 60) -> dict[str, Any]:
    """The SHOW LOAD / SHOW EXPORT (`kind`) row of the job `label` once it is FINISHED or CANCELLED (or as
    it stands after `timeout_s`)."""
    names = columns(conn, f'SHOW {kind} WHERE LABEL = "{label}"')
    deadline = time.monotonic() + timeout_s
    while True:
        found = rows(conn, f'SHOW {kind} WHERE LABEL = "{label}"')
        assert len(found) == 1, found
        job = dict(zip(names, found[0], strict=True))
        if job["State"] in ("FINISHED", "CANCELLED") or time.monotonic() > deadline:
            return job
        time.sleep(0.2)
