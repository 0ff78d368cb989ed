"""The S3 object store against the stack's real MinIO: property checks, verified uploads
(single PUT and multipart ETags), downloads, listings, removals, and failures named by resource."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from minio import Minio

from schemas.config import Settings, load_settings
from storage.object_store import ObjectStore, RemoteUnavailable, ResourceError, S3Location, expected_etag


def _properties(config: Settings, bucket: str, **extra: str) -> dict[str, str]:
    return {"type": "s3", "s3.endpoint": f"http://{config.minio_endpoint}", "s3.region": "us-east-1",
            "s3.bucket": bucket, "s3.root.path": "/root/strata/", "s3.access_key": config.minio_root_user,
            "s3.secret_key": config.minio_root_password.get_secret_value(), **extra}


def test_properties_are_checked_and_name_the_resource() -> None:
    good = {"type": "s3", "s3.endpoint": "127.0.0.1:9000", "s3.region": "r", "s3.bucket": "bkt",
            "s3.access_key": "a", "s3.secret_key": "topsecret"}
    location = S3Location.from_properties("res", good)
    assert (location.endpoint, location.secure, location.root_path) == ("127.0.0.1:9000", False, "")
    assert "topsecret" not in repr(location)
    cases = [({**good, "type": "hdfs"}, "type 'hdfs' is not supported"),
             ({k: v for k, v in good.items() if k != "s3.bucket"}, "missing required property s3.bucket"),
             ({**good, "s3.colour": "red"}, "unknown property s3.colour"),
             ({**good, "s3.endpoint": "http://h:1/path"}, "is not host[:port]"),
             ({**good, "use_path_style": "maybe"}, "use_path_style"),
             ({**good, "s3.root.path": "a/../b"}, "'..'"),
             ({**good, "s3.bucket": "Bad_Bucket"}, "not a valid bucket name")]
    for properties, fragment in cases:
        with pytest.raises(ResourceError) as caught:
            S3Location.from_properties("res", properties)
        assert "resource 'res'" in str(caught.value) and fragment in str(caught.value)


def test_expected_etag_of_single_and_multipart_uploads(tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.write_bytes(b"abc")
    assert expected_etag(small) == "900150983cd24fb0d6963f7d28e17f72"
    big = tmp_path / "big"
    big.write_bytes(os.urandom(11 << 20))
    assert expected_etag(big, part_size=5 << 20).endswith("-3")


@pytest.fixture
def store() -> Iterator[ObjectStore]:
    config = load_settings()
    if "STRATA_MINIO_PORT" not in os.environ:
        pytest.fail("STRATA_MINIO_PORT is not set; run the tests through infra/test")
    bucket = f"os-{uuid.uuid4().hex[:10]}"
    Minio(config.minio_endpoint, config.minio_root_user, config.minio_root_password.get_secret_value(),
          secure=False).make_bucket(bucket)
    yield ObjectStore("res", S3Location.from_properties("res", _properties(config, bucket)))


@pytest.mark.integration
def test_upload_verify_download_list_remove(store: ObjectStore, tmp_path: Path) -> None:
    store.probe()
    local = tmp_path / "f.parquet"
    local.write_bytes(os.urandom(100_000))
    store.upload(local, "t1/p1/b0/abc.parquet", "sha")
    assert store.exists("t1/p1/b0/abc.parquet")
    listed = list(store.objects())
    assert [(o.path, o.size) for o in listed] == [("t1/p1/b0/abc.parquet", 100_000)]
    stored = store.client.stat_object(store.location.bucket, "root/strata/t1/p1/b0/abc.parquet")
    assert stored.metadata is not None and stored.metadata.get("x-amz-meta-strata-sha256") == "sha"
    back = tmp_path / "back"
    store.download("t1/p1/b0/abc.parquet", back)
    assert back.read_bytes() == local.read_bytes()
    with store.reading("t1/p1/b0/abc.parquet") as stream:  # streamed: read in pieces as it arrives
        pieces = list(iter(lambda: stream.read(30_000), b""))
    assert len(pieces) == 4 and b"".join(pieces) == local.read_bytes()
    store.remove("t1/p1/b0/abc.parquet")
    assert not store.exists("t1/p1/b0/abc.parquet") and list(store.objects()) == []
    with pytest.raises(ResourceError, match="resource 'res': read of t1/p1/b0/abc.parquet refused.*NoSuchKey"):
        with store.reading("t1/p1/b0/abc.parquet"):
            pass


@pytest.mark.integration
def test_failures_are_named_by_the_resource(store: ObjectStore, tmp_path: Path) -> None:
    config = load_settings()
    missing = ObjectStore("nobucket", S3Location.from_properties("nobucket", _properties(config, "no-such-bkt")))
    with pytest.raises(ResourceError, match="resource 'nobucket': bucket 'no-such-bkt' does not exist"):
        missing.probe()
    wrong = ObjectStore("badkey", S3Location.from_properties(
        "badkey", _properties(config, store.location.bucket, **{"s3.secret_key": "wrong-secret"})))
    with pytest.raises(ResourceError, match="resource 'badkey'.*refused") as caught:
        wrong.probe()
    assert "wrong-secret" not in str(caught.value)
    down = ObjectStore("down", S3Location.from_properties(
        "down", {**_properties(config, "any-bucket"), "s3.endpoint": "127.0.0.1:1"}), connect_timeout_s=0.5)
    with pytest.raises(RemoteUnavailable, match="resource 'down'.*did not answer"):
        down.probe()
    with pytest.raises(RemoteUnavailable):
        down.download("t1/p1/b0/x.parquet", tmp_path / "x")
    assert not any(tmp_path.iterdir())  # no partial file left behind
