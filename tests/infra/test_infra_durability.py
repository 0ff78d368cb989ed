"""kill -9 of the broker, then `infra/up --detach`: every topic and an acknowledged record survive."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from infra.layout import REPO_ROOT, Layout
from infra.supervisor import running_pid
from infra.topics import check_topics
from schemas.config import Settings
from schemas.topics import DLQ_TOPIC

from .test_infra_kafka import consume_at, probe_value, produce_one

pytestmark = pytest.mark.integration


def test_kill_9_broker_then_up_keeps_topics_and_records(stack: Settings, unique: str) -> None:
    lay = Layout(stack)
    # DLQ rather than events: nothing consumes it as a source of truth.
    partition, offset = produce_one(stack, DLQ_TOPIC, f"infra-durability-{unique}", probe_value(unique))

    pid = running_pid(lay.pid_file("kafka"))
    assert pid is not None, "no live broker pid in " + str(lay.pid_file("kafka"))
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while running_pid(lay.pid_file("kafka")) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running_pid(lay.pid_file("kafka")) is None

    t0 = time.monotonic()
    proc = subprocess.run([str(REPO_ROOT / "infra" / "up"), "--detach"], cwd=REPO_ROOT, env=dict(os.environ),
                          capture_output=True, text=True, timeout=150)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert time.monotonic() - t0 < 60
    new_pid = running_pid(lay.pid_file("kafka"))
    assert new_pid is not None and new_pid != pid

    assert check_topics(stack) == []
    msg = consume_at(stack, DLQ_TOPIC, partition, offset)
    assert msg is not None, "the acknowledged record did not survive kill -9"
    assert msg.key() == f"infra-durability-{unique}".encode()
