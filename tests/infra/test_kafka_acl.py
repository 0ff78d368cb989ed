"""The stack's broker keeps Strata's log to Strata's principal: an anonymous client on the plain
listener can neither write nor read strata.events / strata.commands, nor take Strata's groups or
transactional ids, nor create ACLs, credentials or strata.* topics; it still creates, writes and
reads user topics and strata.ingest.* topics. The Strata principal (SCRAM on the Strata listener)
does all of it. ACLs found on the broker that are not Strata's are removed by the next start."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)
from pydantic import SecretStr

from infra.kafka_acl import acl_problems, acl_specs, ensure_acls
from infra.toolchain import StrataError
from infra.topics import admin_client
from schemas.config import Settings
from schemas.topics import COMMANDS_TOPIC, EVENTS_TOPIC, LEADER_TOPIC, WORKERS_TOPIC

pytestmark = pytest.mark.integration

_quiet = logging.getLogger("test-kafka-acl")
_quiet.addHandler(logging.NullHandler())
_quiet.propagate = False


def _anonymous(stack: Settings, **extra: Any) -> dict[str, Any]:
    """An outside client's settings: the plain listener, no credentials."""
    return {"bootstrap.servers": f"{stack.kafka_host}:{stack.kafka_port}", "logger": _quiet, **extra}


def _produce(conf: dict[str, Any], topic: str, value: bytes = b"forged") -> KafkaError | None:
    """The delivery result of one record (None: written)."""
    results: list[KafkaError | None] = []
    producer = Producer({**conf, "message.timeout.ms": 10000})
    producer.produce(topic, value, on_delivery=lambda err, _msg: results.append(err))
    producer.flush(20)
    assert results, f"no delivery report for {topic}"
    return results[0]


def _read(conf: dict[str, Any], topic: str, expected: int = 2, timeout: float = 8.0) -> list[bytes]:
    """The records of partition 0 that arrive within `timeout` (returns once `expected` did)."""
    consumer = Consumer({**conf, "group.id": f"acl-test-{uuid.uuid4().hex}", "enable.auto.commit": False})
    got: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        while len(got) < expected and time.monotonic() < deadline:
            got += [m.value() or b"" for m in consumer.consume(100, timeout=0.5) if m.error() is None]
        return got
    finally:
        consumer.close()


def _topic_error(conf: dict[str, Any], topic: str) -> KafkaError | None:
    consumer = Consumer({**conf, "group.id": f"acl-test-{uuid.uuid4().hex}"})
    try:
        return consumer.list_topics(topic, timeout=10).topics[topic].error
    finally:
        consumer.close()


def _settled(read: Callable[[], list[str]], want: list[str] | None = None, timeout: float = 10.0) -> list[str]:
    """read() once it returns `want` (any non-empty answer when None), or its last answer after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        got = read()
        if (got == want if want is not None else bool(got)) or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


def _code(exc: KafkaException) -> int:
    return int(exc.args[0].code())


@pytest.fixture
def topics(stack: Settings) -> Iterator[list[str]]:
    """Names of topics a test creates; deleted afterwards as Strata."""
    made: list[str] = []
    yield made
    if made:
        admin = admin_client(stack)  # kept: a handle destroyed under its futures fails them
        for fut in admin.delete_topics(made, request_timeout=20).values():
            try:
                fut.result(timeout=20)
            except KafkaException:
                pass


def test_the_broker_holds_exactly_stratas_acls(stack: Settings) -> None:
    assert acl_problems(stack, admin_client(stack)) == []
    assert len(acl_specs(stack)) == 8


@pytest.mark.parametrize("topic", [EVENTS_TOPIC, COMMANDS_TOPIC, WORKERS_TOPIC, LEADER_TOPIC])
def test_an_anonymous_client_cannot_write_stratas_log(stack: Settings, topic: str) -> None:
    for conf in (_anonymous(stack), _anonymous(stack, **{"enable.idempotence": True})):
        error = _produce(conf, topic)
        assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, error


def test_an_anonymous_client_cannot_read_or_see_the_events(stack: Settings, topics: list[str], unique: str) -> None:
    denied = _topic_error(_anonymous(stack), EVENTS_TOPIC)
    assert denied is not None and denied.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert _topic_error(stack.kafka_client(logger=_quiet), EVENTS_TOPIC) is None
    # A strata.* topic with a record in it: Strata reads the record, an outsider nothing.
    name = f"strata.acltest.{unique}"
    admin = admin_client(stack)
    for fut in admin.create_topics([NewTopic(name, 1, -1)], request_timeout=20).values():
        fut.result(timeout=20)
    topics.append(name)
    assert _produce(stack.kafka_client(logger=_quiet), name, b"by strata") is None
    assert _read(stack.kafka_client(logger=_quiet), name, expected=1) == [b"by strata"]
    assert _read(_anonymous(stack), name, timeout=4) == []
    forged = _produce(_anonymous(stack), name)
    assert forged is not None and forged.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_an_anonymous_client_cannot_take_stratas_groups_or_transactions(stack: Settings) -> None:
    consumer = Consumer(_anonymous(stack, **{"group.id": "strata-workers"}))
    try:
        consumer.subscribe([WORKERS_TOPIC])
        errors: list[KafkaError] = []
        for _ in range(20):
            message = consumer.poll(0.5)
            error = message.error() if message is not None else None
            if error is not None:
                errors.append(error)
                break
    finally:
        consumer.close()
    assert any(e.code() == KafkaError.GROUP_AUTHORIZATION_FAILED for e in errors), errors
    # The groups Strata reads a routine load's source with (its job's settings, often anonymous) stay open.
    source = Consumer(_anonymous(stack, **{"group.id": "strata-routine-load-999999"}))
    try:
        source.subscribe([f"acl-no-such-topic-{uuid.uuid4().hex}"])
        seen = [m.error() for _ in range(6) if (m := source.poll(0.5)) is not None]
    finally:
        source.close()
    assert not any(e is not None and e.code() == KafkaError.GROUP_AUTHORIZATION_FAILED for e in seen), seen
    producer = Producer(_anonymous(stack, **{"transactional.id": "strata-local"}))
    with pytest.raises(KafkaException) as refused:
        producer.init_transactions(15)
    assert _code(refused.value) == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_an_anonymous_client_cannot_administer_the_cluster(stack: Settings, topics: list[str], unique: str) -> None:
    admin = AdminClient(_anonymous(stack))
    backdoor = AclBinding(ResourceType.TOPIC, EVENTS_TOPIC, ResourcePatternType.LITERAL, "User:ANONYMOUS", "*",
                          AclOperation.ALL, AclPermissionType.ALLOW)
    with pytest.raises(KafkaException) as refused:
        for fut in admin.create_acls([backdoor], request_timeout=15).values():
            fut.result(timeout=15)
    assert _code(refused.value) == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    upsert = UserScramCredentialUpsertion("strata", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), b"mine")
    with pytest.raises(KafkaException) as refused:
        for fut in admin.alter_user_scram_credentials([upsert], request_timeout=15).values():
            fut.result(timeout=15)
    assert _code(refused.value) == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    name = f"strata.forged.{unique}"
    topics.append(name)  # in case the broker let it through
    with pytest.raises(KafkaException) as refused:
        for fut in admin.create_topics([NewTopic(name, 1, -1)], request_timeout=15).values():
            fut.result(timeout=15)
    assert _code(refused.value) == KafkaError.TOPIC_AUTHORIZATION_FAILED


@pytest.mark.parametrize("prefix", ["strata.ingest.acl", "acl-user-topic."])
def test_an_anonymous_client_still_uses_user_and_ingest_topics(stack: Settings, topics: list[str], unique: str,
                                                               prefix: str) -> None:
    name = f"{prefix}{unique}"
    admin = AdminClient(_anonymous(stack))
    for fut in admin.create_topics([NewTopic(name, 1, -1)], request_timeout=20).values():
        fut.result(timeout=20)
    topics.append(name)
    assert _produce(_anonymous(stack), name, b"one") is None
    assert _produce(_anonymous(stack, **{"enable.idempotence": True, "acks": "all"}), name, b"two") is None
    assert _read(_anonymous(stack), name) == [b"one", b"two"]
    assert _read(stack.kafka_client(logger=_quiet), name) == [b"one", b"two"]  # and Strata reads it


def test_an_acl_that_is_not_stratas_is_removed(stack: Settings) -> None:
    admin = admin_client(stack)
    backdoor = AclBinding(ResourceType.TOPIC, "strat", ResourcePatternType.PREFIXED, "User:ANONYMOUS", "*",
                          AclOperation.WRITE, AclPermissionType.ALLOW)
    try:
        for fut in admin.create_acls([backdoor], request_timeout=15).values():
            fut.result(timeout=15)
        foreign = "ALLOW User:ANONYMOUS WRITE on TOPIC 'strat' (prefixed)"
        # The broker answers from its copy of the metadata log, a moment behind the controller.
        assert _settled(lambda: acl_problems(stack, admin)) == [f"ACL not Strata's: {foreign}"]
        assert ensure_acls(stack, admin) == [f"ACL deleted: {foreign}"]
    finally:
        ensure_acls(stack, admin)
    assert _settled(lambda: acl_problems(stack, admin), want=[]) == []
    error = _produce(_anonymous(stack), COMMANDS_TOPIC)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


@contextlib.contextmanager
def _scratch_broker(stack: Settings, home: Path, *, scram: bool = True, open_by_default: bool = True
                    ) -> Iterator[Settings]:
    """A broker of its own (free ports, `home`), configured as the stack's; formatted without the
    Strata principal's credential unless `scram`; `open_by_default` False: a real cluster's
    allow.everyone.if.no.acl.found=false. Yields its settings, kills it afterwards."""
    from infra import kafka_node
    from infra.health import kafka_ok
    from infra.layout import Layout
    from tests.streams.workerkit import free_port

    s = stack.model_copy(update={"home": home, "kafka_port": free_port(), "kafka_controller_port": free_port(),
                                 "kafka_sasl_listener_port": free_port(), "kafka_heap": "256m"})
    lay = Layout(s)
    lay.opt_dir.mkdir(parents=True)
    (lay.opt_dir / lay.kafka_dist.name).symlink_to(Layout(stack).kafka_dist)  # the stack's jars
    if scram:
        kafka_node.prepare(s, lay, quiet=True)
    else:
        for d in (lay.kafka_home, lay.kafka_data, lay.kafka_logs):
            d.mkdir(parents=True, exist_ok=True)
        lay.kafka_config.write_text(kafka_node.server_properties(s, lay))
        java = [c for c in kafka_node.java_base(s, lay) if not c.startswith(("-Xmx", "-Xms"))] + ["-Xmx128m"]
        subprocess.run([*java, "kafka.tools.StorageTool", "format", "-t", kafka_node.new_cluster_id(), "-c",
                        str(lay.kafka_config)], check=True, capture_output=True, timeout=120)
    if not open_by_default:
        lay.kafka_config.write_text(lay.kafka_config.read_text().replace(
            "allow.everyone.if.no.acl.found=true", "allow.everyone.if.no.acl.found=false"))
    with open(home / "broker.log", "wb") as out:
        broker = subprocess.Popen([*kafka_node.java_base(s, lay), "kafka.Kafka", str(lay.kafka_config)],
                                  stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while kafka_ok(s) is not None and time.monotonic() < deadline:
            time.sleep(0.5)
        assert kafka_ok(s) is None, (home / "broker.log").read_text()[-2000:]
        yield s
    finally:
        os.killpg(broker.pid, signal.SIGKILL)
        broker.wait(30)


def test_a_storage_formatted_before_the_strata_listener_gets_its_credential(stack: Settings, tmp_path: Path) -> None:
    """A broker whose storage was formatted without the Strata principal's credential (a stack made
    before the Strata listener) starts with today's config; infra/up's security step adds the
    credential through the still-open plain listener, then the ACLs close it. A password file that
    does not match a locked-down broker is refused with what to do."""
    from infra.kafka_acl import _login_error, secure

    with _scratch_broker(stack, tmp_path, scram=False) as s:
        refused = _login_error(s, 3)
        assert refused is not None and refused.code() == KafkaError._AUTHENTICATION
        actions = secure(s)
        assert actions[0] == "SCRAM credential added for User:strata (storage formatted before the Strata listener)"
        assert len(actions) == 1 + len(acl_specs(s))
        assert _login_error(s, 5) is None and secure(s) == []
        error = _produce(_anonymous(s), "strata.forged")
        assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, error
        s.kafka_password_file.write_text("not-the-password\n")
        with pytest.raises(StrataError, match="does not belong to this storage"):
            secure(s)


def test_the_real_cluster_grants_are_enough_for_stratas_clients(stack: Settings, tmp_path: Path) -> None:
    """On a broker that denies whatever no ACL allows (a real cluster's default), a principal that is
    no super user but holds real_cluster_grants — the README's kafka-acls commands — does what
    Strata's processes do: creates and configures its topics, writes and reads them idempotently and
    in transactions with its groups' offsets (the sequencer), and is refused anything else."""
    from infra.kafka_acl import real_cluster_grants
    from infra.topics import check_topics, ensure_topics

    with _scratch_broker(stack, tmp_path, open_by_default=False) as s:
        root = admin_client(s)
        upsert = UserScramCredentialUpsertion("app", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192),
                                              b"app-password")
        for fut in root.alter_user_scram_credentials([upsert], request_timeout=20).values():
            fut.result(timeout=20)
        app = s.model_copy(update={
            "kafka_sasl_listener_user": "app", "kafka_brokers": f"{s.kafka_host}:{s.kafka_sasl_listener_port}",
            "kafka_client_properties": {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
                                        "sasl.username": "app"},
            "kafka_sasl_password": SecretStr("app-password")})
        for fut in root.create_acls(real_cluster_grants(app), request_timeout=20).values():
            fut.result(timeout=20)
        conf = app.kafka_client(logger=_quiet)
        assert conf["sasl.password"] == "app-password"  # not the home's: the configured one
        deadline = time.monotonic() + 30
        while True:  # the grants reach the broker's metadata a moment after the controller's
            try:
                ensure_topics(app, admin_client(app))
                break
            except KafkaException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        assert check_topics(app, admin_client(app)) == []
        assert _produce({**conf, "enable.idempotence": True, "acks": "all"}, COMMANDS_TOPIC, b"cmd") is None
        # The sequencer's pattern: a transactional producer commits a record with its group's offsets.
        consumer = Consumer({**conf, "group.id": "strata-app-test", "enable.auto.commit": False,
                             "isolation.level": "read_committed"})
        consumer.assign([TopicPartition(COMMANDS_TOPIC, 0, 0)])
        got = [m for m in consumer.consume(10, timeout=10) if m.error() is None]
        assert [m.value() for m in got] == [b"cmd"]
        producer = Producer({**conf, "transactional.id": "strata-app-test"})
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce(EVENTS_TOPIC, b"event")
        producer.send_offsets_to_transaction([TopicPartition(COMMANDS_TOPIC, 0, 1)],
                                             consumer.consumer_group_metadata(), 30)
        producer.commit_transaction(30)
        consumer.close()
        assert _read({**conf, "isolation.level": "read_committed"}, EVENTS_TOPIC, expected=1) == [b"event"]
        denied = _produce(conf, "not-stratas")
        assert denied is not None and denied.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
