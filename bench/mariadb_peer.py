"""A stock MariaDB server as a benchmark's peer: Debian's `mariadb-server` (mariadbd 10.11), started
in a throw-away data directory on a loopback port with its stock settings, stopped (by its pid) when
the block ends. Issue 20 measures Strata's SQL port against it serving the same rows to the same
client.

A machine without it gets it from Debian's archive on first use (`apt-get install -y mariadb-server`,
as root, as `.ci/run` installs what it needs), so the peer is there on a fresh machine; without root
or apt the bench says what to install. The package's own service is not used.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class MariadbMissing(RuntimeError):
    pass


@dataclass(frozen=True)
class Mariadb:
    host: str
    port: int
    version: str

    def connect(self, database: str | None = None) -> Any:
        import pymysql

        return pymysql.connect(host=self.host, port=self.port, user="root", password="", database=database,
                               autocommit=True, local_infile=True)


_PACKAGE = "mariadb-server"


def _which(name: str) -> str | None:
    return shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}") if os.path.exists(p)),
                                      None)


def _binary(name: str) -> str:
    found = _which(name)
    if found is None:
        _install()
        found = _which(name)
    if found is None:
        raise MariadbMissing(f"no {name} after installing {_PACKAGE}")
    return found


def _install() -> None:
    """Debian's mariadb-server from the archive (the package lists refreshed once if the first try
    fails: a fresh machine may have none); MariadbMissing, naming what to do, when that cannot be."""
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        raise MariadbMissing(f"no mariadbd: install Debian's MariaDB server (apt-get install -y {_PACKAGE})")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    print(f"bench: installing {_PACKAGE} (the peer) with apt-get …", file=sys.stderr, flush=True)
    for refresh_lists in (False, True):
        if refresh_lists:
            subprocess.run([apt, "update", "-q"], env=env, capture_output=True, check=False)
        done = subprocess.run([apt, "install", "-y", "-q", _PACKAGE], env=env, capture_output=True, text=True)
        if done.returncode == 0:
            return
    raise MariadbMissing(f"apt-get install {_PACKAGE} failed ({done.returncode}): {done.stderr.strip()[-500:]}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def mariadb_server(port: int | None = None) -> Iterator[Mariadb]:
    """A running mariadbd of its own (root without a password, loopback only) for the block."""
    mariadbd, install_db = _binary("mariadbd"), _binary("mariadb-install-db")
    port = port or _free_port()
    with tempfile.TemporaryDirectory(prefix="strata-bench-mariadb-") as tmp:
        data, sock = Path(tmp) / "data", Path(tmp) / "mariadb.sock"
        user = ["--user=root"] if os.geteuid() == 0 else []
        subprocess.run([install_db, "--no-defaults", f"--datadir={data}", "--auth-root-authentication-method=normal",
                        "--skip-test-db", *user], check=True, capture_output=True)
        server = subprocess.Popen(
            [mariadbd, "--no-defaults", f"--datadir={data}", f"--socket={sock}", f"--port={port}",
             "--bind-address=127.0.0.1", f"--pid-file={Path(tmp) / 'mariadb.pid'}", "--local-infile=1",
             f"--log-error={Path(tmp) / 'error.log'}", *user],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            peer = _wait_ready(server, port, Path(tmp) / "error.log")
            yield peer
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _wait_ready(server: subprocess.Popen[bytes], port: int, error_log: Path) -> Mariadb:
    import pymysql

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            tail = error_log.read_text(errors="replace")[-2000:] if error_log.exists() else ""
            raise MariadbMissing(f"mariadbd exited with {server.returncode}:\n{tail}")
        try:
            conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="")
        except pymysql.err.OperationalError:
            time.sleep(0.2)
            continue
        with conn.cursor() as cur:
            cur.execute("SELECT VERSION()")
            version = str(cur.fetchone()[0])
        conn.close()
        return Mariadb("127.0.0.1", port, version)
    raise MariadbMissing("mariadbd did not accept connections within 60 s")
