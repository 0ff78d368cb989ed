"""One health probe per component; each returns None when healthy, else a short reason."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
from collections.abc import Callable

from schemas.config import Settings

Probe = Callable[[Settings], "str | None"]


def http_ok(url: str, timeout: float = 2.0) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 (local URL)
            return None if resp.status == 200 else f"GET {url} → {resp.status}"
    except urllib.error.HTTPError as exc:
        return f"GET {url} → {exc.code}"
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"GET {url}: {reason}"


def tcp_ok(host: str, port: int, timeout: float = 1.0) -> str | None:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as exc:
        return f"connect {host}:{port}: {exc.strerror or exc}"


def kafka_ok(s: Settings) -> str | None:
    """Healthy when the broker answers a metadata request.

    The local broker is asked on its plain listener, anonymously: a broker that answers is up even
    before its Strata principal can log in (a storage formatted without the credential gets it
    right after, from infra/kafka_acl.py). A configured cluster is asked as Strata asks it.
    """
    down = tcp_ok(s.kafka_host, s.kafka_port)
    if down:
        return down
    from infra.topics import admin_client  # confluent_kafka is heavy; import on demand

    local = s.kafka_brokers is None
    address = f"{s.kafka_host}:{s.kafka_port}" if local else s.kafka_bootstrap
    try:
        md = admin_client(s, anonymous=local).list_topics(timeout=3)
    except Exception as exc:  # KafkaException, or a timeout while the broker starts
        return f"metadata request to {address}: {exc}"
    if not md.brokers:
        return f"metadata from {address} lists no broker"
    return None


def minio_ok(s: Settings) -> str | None:
    return http_ok(f"http://{s.minio_endpoint}/minio/health/live")


def worker_ok(s: Settings) -> str | None:
    return http_ok(f"http://127.0.0.1:{s.worker_port}/health")


def sql_ok(s: Settings) -> str | None:
    return http_ok(f"http://{s.sql_host}:{s.http_port}/health") or tcp_ok(s.sql_host, s.sql_port)


PROBES: dict[str, Probe] = {"kafka": kafka_ok, "minio": minio_ok, "worker": worker_ok, "sql": sql_ok}


def probe(name: str, s: Settings) -> str | None:
    fn = PROBES.get(name)
    return fn(s) if fn else None
