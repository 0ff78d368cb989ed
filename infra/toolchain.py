"""Pre-flight checks: the tools a step needs exist, and the ports a component binds are free.

Each failure is a :class:`StrataError` whose message is one line meant for a human, e.g.
``strata: port 9092 (kafka) is already in use by pid 123 — stop it or set STRATA_KAFKA_PORT``.
"""

from __future__ import annotations

import errno
import os
import shutil
import socket
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

from schemas.config import Settings

# Where a tool may live when it is not on PATH (Go's tarball installs here).
_EXTRA_DIRS = {"go": [Path("/usr/local/go/bin")]}
_HINTS = {
    "java": "install a JDK 17+ (apt-get install openjdk-17-jdk-headless)",
    "mvn": "install Maven 3.8+ (apt-get install maven)",
    "go": "install Go 1.24+ (https://go.dev/dl) — MinIO is built from source with `go install`",
}


class StrataError(RuntimeError):
    """A failure with a one-line explanation; entry points print it and exit 1."""

    def __str__(self) -> str:
        msg = super().__str__()
        return msg if msg.startswith("strata: ") else f"strata: {msg}"


def find_tool(name: str) -> str:
    """The absolute path of executable `name`, or a StrataError saying how to get it."""
    found = shutil.which(name)
    if found:
        return found
    for d in _EXTRA_DIRS.get(name, []):
        cand = d / name
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    hint = _HINTS.get(name, "install it")
    raise StrataError(f"{name} not found on PATH — {hint}")


Binding = tuple[str, str, int]  # (config key, host, port)


def java_major(java: str | None = None) -> int:
    """The major version of the JVM on PATH (17 for "17.0.15"); StrataError when below 11."""
    import re
    import subprocess

    java = java or find_tool("java")
    out = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not m:
        raise StrataError(f"cannot tell the Java version from `{java} -version`: {out.strip()[:120]}")
    major = int(m.group(1))
    if major == 1 and m.group(2):  # "1.8.0_…"
        major = int(m.group(2))
    if major < 11:
        raise StrataError(f"Java {major} is too old for Kafka — install a JDK 17+ "
                          "(apt-get install openjdk-17-jdk-headless)")
    return major


def component_ports(s: Settings) -> dict[str, list[Binding]]:
    """For each component, the (config key, host, port) triples it listens on."""
    return {
        "kafka": [("kafka_port", s.kafka_host, s.kafka_port),
                  ("kafka_controller_port", s.kafka_host, s.kafka_controller_port),
                  ("kafka_sasl_listener_port", s.kafka_host, s.kafka_sasl_listener_port)],
        "minio": [("minio_port", s.minio_host, s.minio_port),
                  ("minio_console_port", s.minio_host, s.minio_console_port)],
        "worker": [("worker_port", "127.0.0.1", s.worker_port)],
        "sql": [("sql_port", s.sql_host, s.sql_port), ("http_port", s.sql_host, s.http_port),
                *([("arrow_flight_sql_port", s.sql_host, s.arrow_flight_sql_port)] if s.arrow_flight_sql_port else [])],
    }


def _listening_inodes(port: int) -> set[str]:
    """Socket inodes of TCP sockets listening on `port` (any address), from /proc/net/tcp{,6}."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                next(fh, None)
                for line in fh:
                    parts = line.split()
                    if len(parts) < 10:
                        continue
                    local, state, inode = parts[1], parts[3], parts[9]
                    if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                        inodes.add(inode)
        except OSError:
            continue
    return inodes


def port_owner(port: int) -> int | None:
    """The pid of a process listening on `port`, when /proc lets us see it."""
    inodes = _listening_inodes(port)
    if not inodes:
        return None
    targets = {f"socket:[{i}]" for i in inodes}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            for fd in os.scandir(f"/proc/{entry.name}/fd"):
                try:
                    if os.readlink(fd.path) in targets:
                        return int(entry.name)
                except OSError:
                    continue
        except OSError:
            continue
    return None


def port_in_use(host: str, port: int) -> bool:
    """True when binding host:port fails because something already holds it."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        # Servers (Java, Go) set SO_REUSEADDR, so TIME_WAIT leftovers must not count as "in use".
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return True
            raise
    return bool(_listening_inodes(port))


def check_ports_free(component: str, bindings: Iterable[Binding]) -> None:
    """Raises StrataError naming the port, its owner and the STRATA_ key to change."""
    for key, host, port in bindings:
        if port_in_use(host, port):
            pid = port_owner(port)
            by = f" by pid {pid}" if pid is not None else ""
            raise StrataError(
                f"port {port} ({component}) is already in use{by} — stop it or set STRATA_{key.upper()}"
            )


def check_component_ports(s: Settings, names: Iterable[str]) -> None:
    table: Mapping[str, list[Binding]] = component_ports(s)
    for name in names:
        check_ports_free(name, table.get(name, []))


CHROMIUM_PACKAGE = "chromium"


def _apt_install(packages: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *packages], env=env,
                          capture_output=True, text=True)


def ensure_chromium() -> str | None:
    """Installs Debian's `chromium` (headless browser of the console's end-to-end test) when missing.

    Idempotent: nothing happens when `chromium` is on PATH. `apt-get update` runs only when the
    first install fails (stale or empty package lists on a fresh machine). Never fatal: the stack
    runs without a browser; returns why it could not be installed (None: present or installed)."""
    if shutil.which("chromium"):
        return None
    if shutil.which("apt-get") is None:
        return "chromium not found and apt-get is unavailable — install Chromium (package `chromium`) yourself"
    if os.geteuid() != 0:
        return "chromium not found — run `sudo apt-get install -y chromium` (infra/up installs it only as root)"
    done = _apt_install([CHROMIUM_PACKAGE])
    if done.returncode != 0:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update"], env=env, capture_output=True, text=True)
        done = _apt_install([CHROMIUM_PACKAGE])
    if done.returncode != 0 or not shutil.which("chromium"):
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
        return f"apt-get install -y chromium failed: {tail[0][:200]}"
    return None
