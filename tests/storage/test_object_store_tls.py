"""S3 over TLS with a private CA: every object store client trusts the configured bundle (and a real
MinIO serving TLS is reached with it, refused without it, with an error that says why)."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def _certificates(directory: Path) -> Path:
    """A private CA and a server certificate for 127.0.0.1 signed by it, laid out as MinIO's
    --certs-dir wants them; returns the CA bundle."""
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "strata test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
          .not_valid_after(now + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    directory.mkdir(parents=True)
    (directory / "public.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (directory / "private.key").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    bundle = directory.parent / "ca.pem"
    bundle.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    return bundle


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.integration
def test_a_resource_over_https_works_with_the_ca_and_is_refused_without(tmp_path: Path) -> None:
    """A real MinIO serving TLS with a certificate of a private CA (the stack's binary, a scratch port)."""
    import subprocess
    import time

    from infra.layout import Layout
    from schemas.config import load_settings
    from storage.object_store import ResourceError

    s = load_settings()
    minio_bin = Layout(s).minio_bin
    if not minio_bin.is_file():
        pytest.skip("MinIO is not installed in this stack's home")
    ca = _certificates(tmp_path / "certs")
    port = _free_port()
    server = subprocess.Popen([str(minio_bin), "server", str(tmp_path / "data"), "--address", f"127.0.0.1:{port}",
                               "--console-address", f"127.0.0.1:{_free_port()}",
                               "--certs-dir", str(tmp_path / "certs")],
                              env={"MINIO_ROOT_USER": "tlsadmin", "MINIO_ROOT_PASSWORD": "tls-secret-key",
                                   "MINIO_UPDATE": "off", "MINIO_BROWSER": "off", "HOME": str(tmp_path)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        location = S3Location.from_properties("tls", {
            "type": "s3", "s3.endpoint": f"https://127.0.0.1:{port}", "s3.region": "us-east-1",
            "s3.bucket": "strata-tls", "s3.access_key": "tlsadmin", "s3.secret_key": "tls-secret-key"})
        trusted = ObjectStore("tls", location, ca_file=ca, connect_timeout_s=1, read_timeout_s=5)
        deadline = time.monotonic() + 60
        while True:
            try:
                trusted.client.make_bucket("strata-tls")
                break
            except Exception:  # noqa: BLE001 - not listening yet
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.3)
        trusted.probe()
        local = tmp_path / "rowset.parquet"
        local.write_bytes(b"PAR1" + b"x" * 1000 + b"PAR1")
        trusted.upload(local, "t1/p1/b0/r.parquet", checksum="")
        trusted.download("t1/p1/b0/r.parquet", tmp_path / "back.parquet")
        assert (tmp_path / "back.parquet").read_bytes() == local.read_bytes()

        untrusted = ObjectStore("tls", location, connect_timeout_s=1, read_timeout_s=5)  # the system CAs only
        with pytest.raises(ResourceError) as refused:
            untrusted.probe()
        assert "TLS certificate" in str(refused.value) and "s3_ca_file" in str(refused.value), refused.value
    finally:
        server.kill()
        server.wait(30)
