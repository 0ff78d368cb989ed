"""MinIO of the running stack: put, get and delete an object through the minio client."""

from __future__ import annotations

import io

import pytest
from minio import Minio
from minio.error import S3Error

from schemas.config import Settings

pytestmark = pytest.mark.integration


def test_put_get_delete(stack: Settings, unique: str) -> None:
    client = Minio(stack.minio_endpoint, access_key=stack.minio_root_user,
                   secret_key=stack.minio_root_password.get_secret_value(), secure=False)
    bucket = f"strata-infra-test-{unique}"
    client.make_bucket(bucket)
    try:
        body = f"hello {unique}".encode()
        client.put_object(bucket, "probe/obj.txt", io.BytesIO(body), length=len(body))
        resp = client.get_object(bucket, "probe/obj.txt")
        try:
            assert resp.read() == body
        finally:
            resp.close()
            resp.release_conn()
        client.remove_object(bucket, "probe/obj.txt")
        with pytest.raises(S3Error) as err:
            client.stat_object(bucket, "probe/obj.txt")
        assert err.value.code == "NoSuchKey"
    finally:
        for obj in client.list_objects(bucket, recursive=True):
            client.remove_object(bucket, obj.object_name)
        client.remove_bucket(bucket)
