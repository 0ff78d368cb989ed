"""query.server: the SQL server allocates Arrow memory from the system allocator (storage.arrow_memory),
and says so, with what the pool holds, in its Prometheus metrics."""

from __future__ import annotations

import urllib.request

import pymysql

from schemas.config import Settings
from tests.query.sqlkit import rows


def test_the_sql_server_reports_its_arrow_pool(config: Settings, conn: pymysql.connections.Connection) -> None:
    assert rows(conn, "SELECT count(*) FROM (SELECT 1 AS x UNION ALL SELECT 2) s") == [(2,)]
    text = urllib.request.urlopen(f"http://127.0.0.1:{config.http_port}/metrics", timeout=10).read().decode()
    pools = [line for line in text.splitlines() if line.startswith("strata_sql_arrow_memory_pool{")]
    assert pools == ['strata_sql_arrow_memory_pool{backend="system"} 1.0']
    held = [line for line in text.splitlines() if line.startswith("strata_sql_arrow_allocated_bytes ")]
    assert len(held) == 1 and float(held[0].split()[1]) >= 0
