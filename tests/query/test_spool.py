"""The spool folder's owners: a file is removed once the process that made it no longer runs (a
server killed mid-load), never while it runs (another SQL server sharing the home)."""

from __future__ import annotations

import base64
import http.client
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pymysql

from query import spool
from schemas.config import load_settings
from tests.query.sqlkit import run
from tests.query.stream_load_kit import free_port, start_sql_server


def _started(pid: int) -> int:
    ticks = spool._start_ticks(pid)
    assert ticks is not None
    return ticks


def test_a_file_is_named_after_this_process(tmp_path: Path) -> None:
    path = spool.spool_file(tmp_path, ".body")
    assert path.parent == spool.spool_dir(tmp_path)
    assert path.name.startswith(f"{os.getpid()}-{_started(os.getpid())}-") and path.name.endswith(".body")
    assert spool.spool_file(tmp_path, ".body") != path


def test_files_of_a_process_that_ended_go_and_the_others_stay(tmp_path: Path) -> None:
    folder = spool.spool_dir(tmp_path)
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended_start = _started(ended.pid)  # a zombie until waited for: /proc still tells its start
    ended.wait()
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        orphan = folder / f"{ended.pid}-{ended_start}-{'a' * 32}.body"
        # The pid of a running process, but another start: the pid was reused after its owner died.
        reused = folder / f"{running.pid}-{_started(running.pid) + 1}-{'b' * 32}.object"
        alive = folder / f"{running.pid}-{_started(running.pid)}-{'c' * 32}.out"
        own = spool.spool_file(tmp_path, ".parquet")
        fresh_unowned, old_unowned = folder / "0123.body", folder / "4567.body"
        for path in (orphan, reused, alive, own, fresh_unowned, old_unowned):
            path.write_bytes(b"x")
        two_days_ago = time.time() - 2 * 86400
        os.utime(old_unowned, (two_days_ago, two_days_ago))

        assert spool.prune_orphans(tmp_path) == 3
        assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in (alive, own, fresh_unowned))
    finally:
        running.kill()
        running.wait()


def test_a_server_killed_mid_load_leaves_no_spool_file_behind(conn: pymysql.connections.Connection, db: str) -> None:
    """kill -9 while a body is being spooled; the next SQL server to start removes the file."""
    run(conn, "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    folder = spool.spool_dir(load_settings().home)
    http_port = free_port()
    server = start_sql_server(free_port(), http_port)
    spooled: list[Path] = []
    sent = threading.Event()

    def body() -> Iterator[bytes]:
        yield b"1\t1\n" * 100_000
        sent.set()
        time.sleep(30)  # the rest never comes: the server dies first
        yield b""

    def load() -> None:
        client = http.client.HTTPConnection("127.0.0.1", http_port, timeout=60)
        try:
            client.request("PUT", f"/api/{db}/t/_stream_load", body=body(), encode_chunked=True,
                           headers={"Authorization": "Basic " + base64.b64encode(b"root:").decode(),
                                    "Transfer-Encoding": "chunked"})
            client.getresponse()
        except OSError:
            pass  # the server was killed under it
        finally:
            client.close()

    loader = threading.Thread(target=load, daemon=True)
    loader.start()
    try:
        assert sent.wait(30)
        deadline = time.monotonic() + 30
        while not spooled and time.monotonic() < deadline:
            spooled = list(folder.glob(f"{server.pid}-*.body"))
            time.sleep(0.1)
        assert spooled, "the body was never spooled"
    finally:
        os.kill(server.pid, signal.SIGKILL)
        server.wait(timeout=20)
    assert spooled[0].exists()  # nothing removed it: its owner died mid-load
    successor = start_sql_server(free_port(), free_port())
    try:
        assert not spooled[0].exists()
    finally:
        os.kill(successor.pid, signal.SIGKILL)
        successor.wait(timeout=20)
    loader.join(timeout=40)
