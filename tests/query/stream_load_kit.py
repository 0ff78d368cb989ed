"""Driving Stream Load as Doris users do: curl (`--location-trusted -u user: -T file`) against the
SQL server's HTTP port; the answer is Doris' JSON reply."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymysql

from schemas.config import REPO_ROOT, load_settings


def http_base() -> str:
    return f"http://127.0.0.1:{load_settings().http_port}"


def curl_load(path: Path, db: str, table: str, headers: dict[str, str] | None = None, *,
              user: str = "root", password: str = "", base: str | None = None) -> dict[str, Any]:
    """`curl --location-trusted -u user:password -T path -H k:v … …/api/db/table/_stream_load`."""
    args = ["curl", "-sS", "--location-trusted", "-u", f"{user}:{password}", "-T", str(path)]
    for key, value in (headers or {}).items():
        args += ["-H", f"{key}:{value}"]
    args.append(f"{base or http_base()}/api/{db}/{table}/_stream_load")
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=True)
    reply: dict[str, Any] = json.loads(done.stdout)
    return reply


def curl_2pc(db: str, operation: str, *, txn_id: int | None = None, label: str | None = None,
             user: str = "root", password: str = "") -> dict[str, Any]:
    """`curl -X PUT -H txn_id:… (or label:…) -H txn_operation:commit|abort …/api/db/_stream_load_2pc`."""
    named = f"txn_id:{txn_id}" if txn_id is not None else f"label:{label}"
    args = ["curl", "-sS", "--location-trusted", "-u", f"{user}:{password}", "-X", "PUT", "-H", named,
            "-H", f"txn_operation:{operation}", f"{http_base()}/api/{db}/_stream_load_2pc"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=True)
    reply: dict[str, Any] = json.loads(done.stdout)
    return reply


def fetch(url: str) -> str:
    done = subprocess.run(["curl", "-sS", "--fail", url], capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_sql_server(sql_port: int, http_port: int, *,
                     settings: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Another SQL server of the test stack on its own ports (and STRATA_* `settings`), once its
    /health answers (the caller kills it)."""
    env = {**os.environ, **(settings or {}), "STRATA_SQL_PORT": str(sql_port), "STRATA_HTTP_PORT": str(http_port),
           "STRATA_ARROW_FLIGHT_SQL_PORT": "0"}  # the stack's server has the Flight port
    proc = subprocess.Popen([sys.executable, "-m", "query.server"], cwd=REPO_ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/health", timeout=1) as resp:
                if resp.status == 200:
                    return proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("the second SQL server did not start")


@dataclass(frozen=True)
class OtherServer:
    sql_port: int
    http_port: int
    pid: int

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def connect(self, database: str) -> pymysql.connections.Connection:
        return pymysql.connect(host="127.0.0.1", port=self.sql_port, user="root", database=database,
                               autocommit=True, connect_timeout=10, read_timeout=300)


@contextlib.contextmanager
def other_server(settings: dict[str, str]) -> Iterator[OtherServer]:
    """Another SQL server of the test stack with its own STRATA_* `settings` (a lowered limit, a small
    chunk), killed when the block ends."""
    sql_port, http_port = free_port(), free_port()
    proc = start_sql_server(sql_port, http_port, settings=settings)
    try:
        yield OtherServer(sql_port, http_port, proc.pid)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=20)


def status_kb(pid: int, field: str) -> int:
    """A field of /proc/<pid>/status in kB (VmHWM: the process's peak RSS)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")
