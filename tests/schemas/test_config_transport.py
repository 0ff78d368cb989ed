"""Pointing Strata at a secured cluster: the Kafka bootstrap list and security settings reach every
client's configuration, the SASL password is never printed (S3's CA: tests/storage)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import SecretStr

from projections.proposer import Proposer
from schemas.config import load_settings

SECURED = {"kafka_brokers": "b1.example:9093,b2.example:9093",
           "kafka_client_properties": {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                                       "sasl.username": "strata", "ssl.ca.location": "/etc/ssl/kafka-ca.pem"},
           "kafka_sasl_password": "hunter2-sasl"}


def test_every_client_gets_the_cluster_and_its_security() -> None:
    config = load_settings(**SECURED)
    assert config.kafka_bootstrap == "b1.example:9093,b2.example:9093"
    conf = config.kafka_client(**{"group.id": "g", "sasl.username": "override"})
    assert conf == {"bootstrap.servers": "b1.example:9093,b2.example:9093", "security.protocol": "SASL_SSL",
                    "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "override",
                    "ssl.ca.location": "/etc/ssl/kafka-ca.pem", "sasl.password": "hunter2-sasl", "group.id": "g"}
    assert "hunter2-sasl" not in repr(config) and "hunter2-sasl" not in str(config.model_dump())


def test_the_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_KAFKA_BROKERS", "k1:9093")
    monkeypatch.setenv("STRATA_KAFKA_CLIENT_PROPERTIES", '{"security.protocol": "SSL"}')
    monkeypatch.setenv("STRATA_S3_CA_FILE", "/etc/ssl/s3-ca.pem")
    config = load_settings()
    assert config.kafka_client() == {"bootstrap.servers": "k1:9093", "security.protocol": "SSL"}
    assert config.s3_ca_file == Path("/etc/ssl/s3-ca.pem")


def test_a_local_stack_needs_none_of_it(tmp_path: Path) -> None:
    """A local stack's clients log in on its Strata listener with the password infra/up made; before
    that (a home whose broker predates the listener) they use the plain listener as they did."""
    config = load_settings(home=tmp_path, kafka_port=19092, kafka_sasl_listener_port=19094)
    assert config.kafka_client() == {"bootstrap.servers": "127.0.0.1:19092"}
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "kafka-strata.password").write_text("made-by-infra-up\n")
    assert config.kafka_client(**{"group.id": "g"}) == {
        "bootstrap.servers": "127.0.0.1:19094", "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "strata", "sasl.password": "made-by-infra-up",
        "group.id": "g"}
    assert config.kafka_bootstrap == "127.0.0.1:19092"  # what outside clients of user topics use
    assert "made-by-infra-up" not in str(config.redacted())


def test_a_sasl_cluster_without_a_configured_password_uses_the_homes(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "kafka-strata.password").write_text("from-the-file\n")
    config = load_settings(home=tmp_path, kafka_brokers="k1:9094,k2:9094", kafka_client_properties={
        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "strata"})
    assert config.kafka_client()["sasl.password"] == "from-the-file"
    assert config.kafka_client()["bootstrap.servers"] == "k1:9094,k2:9094"
    configured = config.model_copy(update={"kafka_sasl_password": SecretStr("configured")})
    assert configured.kafka_client()["sasl.password"] == "configured"
    tls = config.model_copy(update={"kafka_client_properties": {"security.protocol": "SSL"}})
    assert "sasl.password" not in tls.kafka_client()


@pytest.mark.skipif("STRATA_KAFKA_PORT" not in os.environ, reason="needs the stack's Kafka (infra/test)")
def test_client_properties_are_used_against_the_real_broker() -> None:
    """librdkafka refuses unknown settings, so a proposer built with them proves they are passed on."""
    good = load_settings(kafka_client_properties={"security.protocol": "PLAINTEXT", "client.id": "strata-tls-t"})
    Proposer(good, origin="t")._producer.flush(1)
    bad = load_settings(kafka_client_properties={"not.a.librdkafka.setting": "x"})
    with pytest.raises(Exception, match="not.a.librdkafka.setting"):
        Proposer(bad, origin="t")
