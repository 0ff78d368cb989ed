"""Checks that need no running stack: pre-flight messages, config validation, generated files."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys

import pytest

from infra import kafka_node
from infra.layout import PROCFILE, REPO_ROOT, Layout
from infra.procfile import read_procfile
from infra.testenv import test_env as make_test_env
from infra.toolchain import StrataError, check_ports_free, find_tool, port_in_use
from schemas.config import ConfigError, load_settings


def _listener() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def test_port_in_use_names_port_component_pid_and_key() -> None:
    with _listener() as sock:
        port = sock.getsockname()[1]
        assert port_in_use("127.0.0.1", port)
        with pytest.raises(StrataError) as err:
            check_ports_free("kafka", [("kafka_port", "127.0.0.1", port)])
    msg = str(err.value)
    assert msg == (f"strata: port {port} (kafka) is already in use by pid {os.getpid()} "
                   f"— stop it or set STRATA_KAFKA_PORT")
    assert "\n" not in msg


def test_free_port_passes() -> None:
    with _listener() as sock:
        port = sock.getsockname()[1]
    assert not port_in_use("127.0.0.1", port)
    check_ports_free("minio", [("minio_port", "127.0.0.1", port)])


def test_supervisor_reports_taken_port_in_one_line() -> None:
    """Through the real entry point: exit 1, one clear line, no stack trace."""
    with _listener() as sock:
        port = sock.getsockname()[1]
        env = dict(os.environ, STRATA_KAFKA_PORT=str(port), STRATA_HOME=str(REPO_ROOT / "var" / "t-port"))
        env.pop("STRATA_CONFIG", None)
        proc = subprocess.run([sys.executable, "-m", "infra.kafka_node", "run"], cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert f"strata: port {port} (kafka) is already in use by pid {os.getpid()}" in proc.stderr
    assert "STRATA_KAFKA_PORT" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_missing_tool_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(StrataError, match=r"^strata: mvn not found on PATH — install Maven"):
        find_tool("mvn")


def test_config_error_names_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_SQL_PORT", "abc")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert "STRATA_SQL_PORT" in str(err.value)


def test_config_error_at_the_entry_point_is_one_line() -> None:
    env = dict(os.environ, STRATA_SQL_PORT="abc")
    proc = subprocess.run([sys.executable, "-m", "infra.supervisor", "check-config"], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "STRATA_SQL_PORT" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_out_of_range_port_names_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_KAFKA_PORT", "70000")
    with pytest.raises(ConfigError, match="STRATA_KAFKA_PORT"):
        load_settings()


def test_procfile_is_exactly_the_four_components() -> None:
    assert PROCFILE.read_text().splitlines() == [
        "kafka: infra/bin/kafka",
        "minio: infra/bin/minio",
        "worker: .venv/bin/python -m streams.worker",
        "sql: .venv/bin/python -m query.start",
    ]
    comps = read_procfile()
    assert [c.python_module for c in comps] == [None, None, "streams.worker", "query.start"]


def test_test_env_shifts_every_port_by_10000() -> None:
    env = make_test_env({})
    assert env["STRATA_HOME"] == str(REPO_ROOT / "var" / "test")
    assert {k: int(v) for k, v in env.items() if k.endswith("_PORT")} == {
        "STRATA_KAFKA_PORT": 19092, "STRATA_KAFKA_CONTROLLER_PORT": 19093,
        "STRATA_MINIO_PORT": 19000, "STRATA_MINIO_CONSOLE_PORT": 19001,
        "STRATA_SQL_PORT": 19030, "STRATA_HTTP_PORT": 18030, "STRATA_WORKER_PORT": 16066,
        "STRATA_KAFKA_SASL_LISTENER_PORT": 19094, "STRATA_ARROW_FLIGHT_SQL_PORT": 19090,
    }
    assert make_test_env({"STRATA_KAFKA_PORT": "29092"})["STRATA_KAFKA_PORT"] == "29092"
    assert env["STRATA_COOLDOWN_LOCAL_GRACE_S"] == "2"  # tiering delays are shortened for tests


def test_server_properties_follow_config(tmp_path) -> None:
    s = load_settings(home=tmp_path, kafka_port=29092, kafka_controller_port=29093, kafka_sasl_listener_port=29094)
    props = dict(line.split("=", 1) for line in kafka_node.server_properties(s, Layout(s)).splitlines()
                 if line and not line.startswith("#"))
    assert props["process.roles"] == "broker,controller"
    assert props["node.id"] == "1"
    assert props["listeners"] == ("PLAINTEXT://127.0.0.1:29092,SASL_PLAINTEXT://127.0.0.1:29094,"
                                  "CONTROLLER://127.0.0.1:29093")
    assert props["controller.quorum.voters"] == "1@127.0.0.1:29093"
    assert props["log.dirs"] == str(tmp_path / "kafka" / "data")
    assert props["auto.create.topics.enable"] == "false"
    for key in ("offsets.topic.replication.factor", "transaction.state.log.replication.factor",
                "transaction.state.log.min.isr"):
        assert props[key] == "1"
    assert props["group.initial.rebalance.delay.ms"] == "0"


def test_cluster_id_looks_like_a_kafka_uuid() -> None:
    for _ in range(50):
        cid = kafka_node.new_cluster_id()
        assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_-]{21}", cid)


def test_up_refuses_a_broker_started_before_its_strata_listener(tmp_path) -> None:
    """Its clients would now log in with SCRAM on a listener that broker lacks: `up` says to restart."""
    from infra.supervisor import up_detach

    s = load_settings(home=tmp_path)
    lay = Layout(s)
    lay.run_dir.mkdir(parents=True)
    old_broker = subprocess.Popen(["sleep", "60"])
    try:
        lay.pid_file("kafka").write_text(f"{old_broker.pid}\n")
        with pytest.raises(StrataError, match="started before it had a Strata listener.*infra/down, then infra/up"):
            up_detach(s, lay, timeout=5)
        assert not s.kafka_password_file.exists()  # nothing written that its clients would use
    finally:
        old_broker.kill()
        old_broker.wait()
