"""A local multi-broker cluster's configuration, without starting anything: the broker's
server.properties per node id / quorum / replication, the topic specs from the settings, where
each node keeps its files, and the scale-out cluster's process plan."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from bench.scale_out import NAMES, ScaleOutCluster
from infra import kafka_node
from infra.layout import Layout
from infra.toolchain import StrataError
from infra.topics import SEVEN_DAYS_MS, topic_specs
from schemas.config import ConfigError, Settings, load_settings
from schemas.topics import COMMANDS_TOPIC, DLQ_TOPIC, EVENTS_TOPIC, LEADER_TOPIC, WORKER_SLOTS, WORKERS_TOPIC

VOTERS = "1@127.0.0.1:45001,2@127.0.0.1:45011,3@127.0.0.1:45021"


def _props(s: Settings) -> dict[str, str]:
    text = kafka_node.server_properties(s, Layout(s))
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


def test_single_node_defaults_are_unchanged(tmp_path: Path) -> None:
    s = Settings(home=tmp_path, kafka_port=45000, kafka_controller_port=45001)
    props = _props(s)
    assert props["node.id"] == "1"
    assert props["controller.quorum.voters"] == "1@127.0.0.1:45001"
    for key in ("default.replication.factor", "min.insync.replicas", "offsets.topic.replication.factor",
                "transaction.state.log.replication.factor", "transaction.state.log.min.isr",
                "offsets.topic.num.partitions", "transaction.state.log.num.partitions"):
        assert props[key] == "1", key
    assert props["log.dirs"] == str(tmp_path / "kafka" / "data")
    assert props["broker.session.timeout.ms"] == "3000"


def test_node_of_a_three_node_cluster(tmp_path: Path) -> None:
    s = Settings(home=tmp_path, kafka_node_id=2, kafka_voters=VOTERS, kafka_port=45010,
                 kafka_controller_port=45011, kafka_replication_factor=3, kafka_min_insync_replicas=2,
                 kafka_sasl_listener_port=45012)
    props = _props(s)
    assert props["node.id"] == "2"
    assert props["controller.quorum.voters"] == VOTERS
    assert props["listeners"] == ("PLAINTEXT://127.0.0.1:45010,SASL_PLAINTEXT://127.0.0.1:45012,"
                                  "CONTROLLER://127.0.0.1:45011")
    assert props["advertised.listeners"] == "PLAINTEXT://127.0.0.1:45010,SASL_PLAINTEXT://127.0.0.1:45012"
    assert props["inter.broker.listener.name"] == "SASL_PLAINTEXT"  # replication is authenticated too
    assert props["default.replication.factor"] == "3"
    assert props["offsets.topic.replication.factor"] == "3"
    assert props["transaction.state.log.replication.factor"] == "3"
    assert props["min.insync.replicas"] == "2"
    assert props["transaction.state.log.min.isr"] == "2"
    assert props["log.dirs"] == str(tmp_path / "kafka-2" / "data")
    assert props["broker.session.timeout.ms"] == "3000"


def test_voters_must_name_the_node_and_parse(tmp_path: Path) -> None:
    with pytest.raises(StrataError, match="does not name this node"):
        kafka_node.server_properties(*_both(Settings(home=tmp_path, kafka_node_id=4, kafka_voters=VOTERS)))
    with pytest.raises(StrataError, match="is not <node id>@<host>:<port>"):
        kafka_node.server_properties(*_both(Settings(home=tmp_path, kafka_voters="1@127.0.0.1")))
    with pytest.raises(StrataError, match="one node twice"):
        kafka_node.voter_ids("1@h:1,1@h:2")
    assert kafka_node.voter_ids(VOTERS) == [1, 2, 3]


def test_min_insync_above_replication_is_refused(tmp_path: Path) -> None:
    s = Settings(home=tmp_path, kafka_replication_factor=1, kafka_min_insync_replicas=2)
    with pytest.raises(StrataError, match="acks=all could never succeed"):
        kafka_node.server_properties(s, Layout(s))


def test_settings_validate_node_id_and_replication() -> None:
    for key in ("kafka_node_id", "kafka_replication_factor", "kafka_min_insync_replicas"):
        with pytest.raises(ConfigError, match=f"STRATA_{key.upper()}"):
            load_settings(**{key: 0})
    s = Settings()
    assert (s.kafka_node_id, s.kafka_voters, s.kafka_replication_factor, s.kafka_min_insync_replicas) == (
        1, None, 1, 1)


def _both(s: Settings) -> tuple[Settings, Layout]:
    return s, Layout(s)


def test_layout_per_node_id(tmp_path: Path) -> None:
    one = Layout(Settings(home=tmp_path))
    three = Layout(Settings(home=tmp_path, kafka_node_id=3))
    assert one.kafka_home == tmp_path / "kafka"
    assert three.kafka_home == tmp_path / "kafka-3"
    assert three.kafka_data == tmp_path / "kafka-3" / "data"
    assert three.kafka_logs == tmp_path / "kafka-3" / "logs"
    assert three.kafka_config == tmp_path / "kafka-3" / "server.properties"
    # One cluster id for the whole home, so that every node formats with it.
    assert one.kafka_cluster_id == three.kafka_cluster_id == tmp_path / "kafka" / "cluster.id"
    assert one.kafka_dist == three.kafka_dist


def test_nodes_racing_for_the_cluster_id_agree(tmp_path: Path) -> None:
    lays = [Layout(Settings(home=tmp_path, kafka_node_id=n)) for n in range(1, 9)]
    got: list[str] = []
    threads = [threading.Thread(target=lambda lay=lay: got.append(kafka_node.shared_cluster_id(lay))) for lay in lays]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and len(set(got)) == 1
    assert (tmp_path / "kafka" / "cluster.id").read_text().strip() == got[0]
    assert sorted(p.name for p in (tmp_path / "kafka").iterdir()) == ["cluster.id"]  # no temporary left


def test_topic_specs_follow_the_settings() -> None:
    single = {spec.name: spec for spec in topic_specs(Settings(topic_partitions=4))}
    assert list(single) == [COMMANDS_TOPIC, EVENTS_TOPIC, DLQ_TOPIC, WORKERS_TOPIC, LEADER_TOPIC]
    assert all(spec.config["min.insync.replicas"] == "1" for spec in single.values())
    assert single[EVENTS_TOPIC].config["retention.ms"] == "-1"
    assert single[WORKERS_TOPIC].config["retention.ms"] == SEVEN_DAYS_MS
    assert single[COMMANDS_TOPIC].config["retention.ms"] == SEVEN_DAYS_MS
    s = Settings(topic_partitions=4)
    assert [spec.want_partitions(s) for spec in single.values()] == [4, 4, 4, WORKER_SLOTS, 1]
    assert WORKER_SLOTS == 12
    replicated = topic_specs(Settings(kafka_replication_factor=3, kafka_min_insync_replicas=2))
    assert {spec.config["min.insync.replicas"] for spec in replicated} == {"2"}


class _Partition:
    def __init__(self, pid: int, replicas: int) -> None:
        self.id, self.replicas, self.leader = pid, list(range(1, replicas + 1)), 1
        self.isrs: list[int] = []


class _Topic:
    def __init__(self, partitions: int, replicas: int) -> None:
        self.error = None
        self.partitions = {i: _Partition(i, replicas) for i in range(partitions)}


class _FakeAdmin:
    """Just enough of AdminClient for _problems: metadata, and configs as the specs want them."""

    def __init__(self, topics: dict[str, _Topic], isr: str) -> None:
        self.topics, self.isr = topics, isr

    def list_topics(self, timeout: float = 0) -> object:
        return type("Md", (), {"topics": self.topics})()

    def describe_configs(self, resources: list, request_timeout: float = 0) -> dict:
        from concurrent.futures import Future

        out = {}
        for res in resources:
            retention = "-1" if res.name == EVENTS_TOPIC else SEVEN_DAYS_MS
            fut: Future = Future()
            fut.set_result({k: type("E", (), {"value": v})() for k, v in
                            {"retention.ms": retention, "min.insync.replicas": self.isr}.items()})
            out[res] = fut
        return out


def test_check_uses_replication_and_worker_slots_from_the_settings() -> None:
    from infra.topics import check_topics

    s = Settings(topic_partitions=2, kafka_replication_factor=3, kafka_min_insync_replicas=2)
    good = {COMMANDS_TOPIC: _Topic(2, 3), EVENTS_TOPIC: _Topic(2, 3), DLQ_TOPIC: _Topic(2, 3),
            WORKERS_TOPIC: _Topic(WORKER_SLOTS, 3), LEADER_TOPIC: _Topic(1, 3)}
    assert check_topics(s, _FakeAdmin(good, "2")) == []  # type: ignore[arg-type]
    bad = {**good, EVENTS_TOPIC: _Topic(2, 1), WORKERS_TOPIC: _Topic(2, 3)}
    del bad[DLQ_TOPIC]
    assert check_topics(s, _FakeAdmin(bad, "1")) == [  # type: ignore[arg-type]
        f"{EVENTS_TOPIC}: replication factor [1], want 3",
        f"{DLQ_TOPIC}: missing",
        f"{WORKERS_TOPIC}: 2 partitions, want {WORKER_SLOTS}",
        f"{COMMANDS_TOPIC}: min.insync.replicas=1, want 2",
        f"{EVENTS_TOPIC}: min.insync.replicas=1, want 2",
        f"{WORKERS_TOPIC}: min.insync.replicas=1, want 2",
        f"{LEADER_TOPIC}: min.insync.replicas=1, want 2",
    ]


def test_scale_out_plan(tmp_path: Path) -> None:
    """Ports from base_port, one quorum and bootstrap list for all, each process its own ports."""
    c = ScaleOutCluster(tmp_path, base_port=45000)
    assert tuple(c.processes) == NAMES
    assert c.bootstrap == "127.0.0.1:45000,127.0.0.1:45010,127.0.0.1:45020"
    assert c.voters == "1@127.0.0.1:45001,2@127.0.0.1:45011,3@127.0.0.1:45021"
    ports = [p for proc in c.processes.values() for p in proc.ports.values()]
    assert len(ports) == len(set(ports)) and all(45000 <= p <= 45062 for p in ports)
    assert c.strata_listeners == "127.0.0.1:45002,127.0.0.1:45012,127.0.0.1:45022"
    k2 = c.settings_for("kafka-2")
    assert (k2.kafka_node_id, k2.kafka_port, k2.kafka_controller_port, k2.kafka_voters) == (
        2, 45010, 45011, c.voters)
    assert k2.kafka_sasl_listener_port == 45012
    assert Layout(k2).kafka_home == tmp_path.resolve() / "kafka-2"
    for name in NAMES:
        s = c.settings_for(name)
        assert s.home == tmp_path.resolve()
        assert s.kafka_bootstrap == c.bootstrap  # outside clients: the plain listeners
        assert s.kafka_strata_listeners == c.strata_listeners
        assert (s.kafka_replication_factor, s.kafka_min_insync_replicas) == (3, 2)
        assert s.minio_port == 45030 and s.simulated_clock
    sql_b = c.settings_for("sql-b")
    assert (sql_b.sql_port, sql_b.http_port, sql_b.arrow_flight_sql_port) == (45060, 45061, 45062)
    assert c.settings_for("worker-b").worker_port == 45041
    assert c.processes["worker-b"].env["STRATA_WORKER_INSTANCE"] == "b"
    assert "STRATA_WORKER_INSTANCE" not in c.processes["sql-a"].env
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "kafka-strata.password").write_text("pw\n")
    conf = c.settings.kafka_client()  # Strata's processes: the Strata listeners, as the Strata principal
    assert (conf["bootstrap.servers"], conf["sasl.mechanism"], conf["sasl.password"]) == (
        c.strata_listeners, "SCRAM-SHA-512", "pw")
    assert c.unhealthy() == list(NAMES)  # nothing started
    with pytest.raises(KeyError, match="no process 'kafka-4'"):
        c.kill("kafka-4")


def test_the_broker_authenticates_strata_and_authorizes_with_acls(tmp_path: Path) -> None:
    s = Settings(home=tmp_path, kafka_port=45000, kafka_controller_port=45001, kafka_sasl_listener_port=45002)
    props = _props(s)
    password = (tmp_path / "secrets" / "kafka-strata.password").read_text().strip()
    assert len(password) >= 40 and (tmp_path / "secrets" / "kafka-strata.password").stat().st_mode & 0o777 == 0o600
    assert props["listeners"] == ("PLAINTEXT://127.0.0.1:45000,SASL_PLAINTEXT://127.0.0.1:45002,"
                                  "CONTROLLER://127.0.0.1:45001")
    assert props["advertised.listeners"] == "PLAINTEXT://127.0.0.1:45000,SASL_PLAINTEXT://127.0.0.1:45002"
    # The controller listener is authenticated: otherwise ANONYMOUS (anyone on the plain listener)
    # would have to be a super user for the brokers to reach the controllers.
    assert props["listener.security.protocol.map"] == (
        "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT")
    assert props["sasl.mechanism.controller.protocol"] == "PLAIN"
    assert props["listener.name.controller.sasl.enabled.mechanisms"] == "PLAIN"
    assert f'user_strata="{password}"' in props["listener.name.controller.plain.sasl.jaas.config"]
    assert props["inter.broker.listener.name"] == "SASL_PLAINTEXT"
    assert props["sasl.mechanism.inter.broker.protocol"] == "SCRAM-SHA-512"
    assert props["listener.name.sasl_plaintext.sasl.enabled.mechanisms"] == "SCRAM-SHA-512"
    assert f'username="strata" password="{password}"' in props[
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config"]
    assert props["authorizer.class.name"] == "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    assert props["super.users"] == "User:strata"
    assert props["allow.everyone.if.no.acl.found"] == "true"
    # Every node of a home gets the same password; a client of the home's stack uses it.
    assert _props(s.model_copy(update={"kafka_node_id": 2, "kafka_voters": VOTERS}))["super.users"] == "User:strata"
    assert (tmp_path / "secrets" / "kafka-strata.password").read_text().strip() == password
    conf = s.kafka_client()
    assert (conf["bootstrap.servers"], conf["sasl.mechanism"], conf["sasl.password"]) == (
        "127.0.0.1:45002", "SCRAM-SHA-512", password)
    (tmp_path / "secrets" / "kafka-strata.password").write_text('a"b\n')
    with pytest.raises(StrataError, match="no usable password"):
        kafka_node.server_properties(s, Layout(s))


def test_nodes_racing_for_the_password_agree(tmp_path: Path) -> None:
    got: list[str] = []
    threads = [threading.Thread(target=lambda n=n: got.append(kafka_node.ensure_kafka_password(
        Settings(home=tmp_path, kafka_node_id=n)))) for n in range(1, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and len(set(got)) == 1
    assert sorted(p.name for p in (tmp_path / "secrets").iterdir()) == ["kafka-strata.password"]


def test_a_topic_not_yet_known_to_every_broker_is_waited_for() -> None:
    from concurrent.futures import Future

    from confluent_kafka import KafkaError, KafkaException

    from infra.topics import ensure_and_check

    s = Settings(topic_partitions=2, kafka_replication_factor=3, kafka_min_insync_replicas=2)
    topics = {COMMANDS_TOPIC: _Topic(2, 3), EVENTS_TOPIC: _Topic(2, 3), DLQ_TOPIC: _Topic(2, 3),
              WORKERS_TOPIC: _Topic(WORKER_SLOTS, 3), LEADER_TOPIC: _Topic(1, 3)}

    class _Propagating(_FakeAdmin):
        calls = 0

        def describe_configs(self, resources: list, request_timeout: float = 0) -> dict:
            self.calls += 1
            if self.calls == 2:  # the first check after ensure: one broker does not know a topic yet
                fut: Future = Future()
                fut.set_exception(KafkaException(KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART)))
                return {resources[0]: fut}
            return super().describe_configs(resources, request_timeout)

    admin = _Propagating(topics, "2")
    assert ensure_and_check(s, timeout=10, admin=admin) == ([], [])  # type: ignore[arg-type]
    assert admin.calls == 3
