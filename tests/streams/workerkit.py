"""Helpers for tests that run a second worker process next to the stack's: start it, read its
/health (its share of the slots, whether it leads), wait for a condition."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from infra.layout import VENV_PYTHON
from schemas.config import REPO_ROOT


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def health(port: int) -> dict[str, Any] | None:
    """A worker's /health answer (also when it says 503), None when nothing answers."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
            return dict(json.loads(answer.read()))
    except OSError as exc:
        body = getattr(exc, "read", None)
        return dict(json.loads(body())) if callable(body) else None


def slots(port: int) -> set[int]:
    """The slots a healthy worker holds (none while it is not healthy)."""
    answer = health(port) or {}
    return set(answer.get("slots", [])) if answer.get("status") == "ok" else set()


def until(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return False


def start_worker(instance: str, port: int, log: Path, **env: str) -> tuple[subprocess.Popen[bytes], IO[bytes]]:
    """`python -m streams.worker` as worker `instance` on `port`, with extra STRATA_* variables."""
    out = open(log, "ab")  # noqa: SIM115 - the caller closes it with the process
    environ = {**os.environ, "STRATA_WORKER_INSTANCE": instance, "STRATA_WORKER_PORT": str(port), **env}
    process = subprocess.Popen([str(VENV_PYTHON), "-m", "streams.worker"], cwd=REPO_ROOT, env=environ,
                               stdout=out, stderr=subprocess.STDOUT)
    return process, out
