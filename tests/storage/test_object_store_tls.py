"""S3 over TLS with a private CA: every object store client trusts the configured bundle."""

from __future__ import annotations

from pathlib import Path

from storage.object_store import ObjectStore, S3Location


def test_object_stores_trust_the_configured_ca(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not used until a connection is made")
    location = S3Location.from_properties("r", {"type": "s3", "s3.endpoint": "https://s3.example:9000",
                                                "s3.region": "us-east-1", "s3.bucket": "strata-cold",
                                                "s3.access_key": "a", "s3.secret_key": "s"})
    assert location.secure
    store = ObjectStore("r", location, ca_file=ca)
    assert store.client._http.connection_pool_kw["ca_certs"] == str(ca)  # noqa: SLF001 - the pool is the point
    assert "ca_certs" not in ObjectStore("r", location).client._http.connection_pool_kw  # noqa: SLF001
