"""Strata's own clients through the broker's Strata listener, configured as for a real cluster: the
stack's broker authenticates SASL_PLAINTEXT with SCRAM-SHA-512 on `kafka_sasl_listener_port`, and
settings that name it explicitly — `kafka_brokers`, `kafka_client_properties`, `kafka_sasl_password`,
what a production config holds — reach the admin client, the follower and the proposer: a command goes
round the sequencer and back through SASL. A wrong password is refused by the broker."""

from __future__ import annotations

import logging
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

from projections.replay import checksum, replay
from projections.replica import Replica
from schemas import commands as cmd
from schemas import events as ev
from schemas.config import Settings, load_settings
from schemas.topics import EVENTS_TOPIC

pytestmark = pytest.mark.integration


def _secured(password: str | None = None) -> Settings:
    local = load_settings()
    stack_password = local.local_kafka_password()
    if stack_password is None:
        pytest.fail(f"no {local.kafka_password_file}: the stack was not started by this checkout's infra/up")
    return load_settings(
        kafka_brokers=f"{local.kafka_host}:{local.kafka_sasl_listener_port}",
        kafka_client_properties={"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
                                 "sasl.username": local.kafka_sasl_listener_user},
        kafka_sasl_password=password if password is not None else stack_password)


def test_a_local_stacks_clients_use_the_strata_listener_by_default() -> None:
    local = load_settings()
    conf = local.kafka_client()
    assert conf["bootstrap.servers"] == f"{local.kafka_host}:{local.kafka_sasl_listener_port}"
    assert (conf["security.protocol"], conf["sasl.mechanism"], conf["sasl.username"]) == (
        "SASL_PLAINTEXT", "SCRAM-SHA-512", "strata")
    assert conf["sasl.password"] == local.local_kafka_password()
    assert local.kafka_password_file.stat().st_mode & 0o077 == 0  # the owner's only
    assert local.kafka_bootstrap == f"{local.kafka_host}:{local.kafka_port}"  # outside clients: the plain one


def test_strata_clients_work_through_a_sasl_listener(tmp_path: Path) -> None:
    secured = _secured()
    topics = AdminClient(secured.kafka_client()).list_topics(timeout=20).topics
    assert EVENTS_TOPIC in topics

    replica = Replica.open(secured, tmp_path / "sasl-replica", f"sasl-test-{uuid.uuid4().hex[:6]}",
                           catch_up_timeout=120)
    try:
        name = f"sasl_{uuid.uuid4().hex[:8]}"
        answer = replica.proposer.propose(cmd.CreateDatabase(name=name), timeout=60)
        assert isinstance(answer.payload, ev.DatabaseCreated) and answer.payload.name == name
        assert replica.projection.database_by_name(name) is not None
    finally:
        replica.close()

    # The same log read with the explicit settings and with a local stack's defaults folds alike.
    explicit, default = tmp_path / "via-explicit", tmp_path / "via-default"
    replay(secured, explicit)
    replay(load_settings(), default)
    explicit_sum, explicit_offsets = checksum(explicit)
    default_sum, default_offsets = checksum(default)
    if explicit_offsets == default_offsets:  # an agent may write between the two replays
        assert explicit_sum == default_sum


def test_a_wrong_sasl_password_is_refused() -> None:
    wrong = _secured(password="not-the-password")
    reported: list[KafkaError] = []
    quiet = logging.getLogger("test-sasl-refused")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    admin = AdminClient(wrong.kafka_client(**{"error_cb": reported.append, "logger": quiet}))
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=5)
    deadline = time.monotonic() + 10
    while not reported and time.monotonic() < deadline:
        admin.poll(0.5)  # error_cb is served by poll
    assert any(e.code() == KafkaError._AUTHENTICATION for e in reported), reported


def test_a_worker_configured_for_sasl_joins_leads_and_answers_through_it(tmp_path: Path) -> None:
    """A second worker process whose every client (faust's included) speaks SASL: it joins the
    workers' group and takes its half of the slots; when the stack's worker is killed it takes the
    lease, and its sequencer answers the stack's writes through SASL; it leaves cleanly once the
    stack's worker is back."""
    import json
    import os
    import signal
    import subprocess

    from infra.layout import Layout
    from infra.supervisor import running_pid
    from schemas.config import REPO_ROOT
    from tests.query.sqlkit import connect, rows, run
    from tests.streams.workerkit import free_port, health, slots, start_worker, until

    secured, local = _secured(), load_settings()
    env = {"STRATA_KAFKA_BROKERS": secured.kafka_brokers or "",
           "STRATA_KAFKA_CLIENT_PROPERTIES": json.dumps(secured.kafka_client_properties),
           "STRATA_KAFKA_SASL_PASSWORD": secured.kafka_sasl_password.get_secret_value()}
    port = free_port()
    worker, log = start_worker("sasl", port, local.run_dir / "worker-sasl.log", **env)
    try:
        assert until(lambda: len(slots(port)) == 6, 90), health(port)
        pid = running_pid(Layout(local).pid_file("worker"))
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        assert until(lambda: len(slots(port)) == 12 and bool((health(port) or {}).get("leader")), 60), health(port)
        name = f"sasl_{uuid.uuid4().hex[:8]}"
        run(connect(), f"CREATE DATABASE {name}")  # decided by the SASL worker's sequencer
        assert (name,) in rows(connect(), "SHOW DATABASES")
        subprocess.run([str(REPO_ROOT / "infra" / "up"), "--detach"], check=True, capture_output=True, timeout=180)
        assert until(lambda: len(slots(local.worker_port)) == 6, 60), health(local.worker_port)
        worker.send_signal(signal.SIGTERM)
        worker.wait(60)
        assert until(lambda: slots(local.worker_port) == set(range(12)), 60), health(local.worker_port)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(30)
        log.close()
        subprocess.run([str(REPO_ROOT / "infra" / "up"), "--detach"], capture_output=True, timeout=180)
    text = (local.run_dir / "worker-sasl.log").read_text(errors="replace")
    assert secured.kafka_sasl_password.get_secret_value() not in text  # never logged
