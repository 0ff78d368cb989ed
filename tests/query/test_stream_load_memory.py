"""A Stream Load body loaded a chunk at a time: every row arrives (count and checksums) in one commit
(one rowset per partition × bucket, whatever the number of chunks), a failed load leaves nothing;
and a body several times larger than the memory the SQL server may use for it loads (chunked HTTP,
spooled to disk) while the server's peak RSS (VmHWM) grows by less than the budget.

Nightly: a body a few times the budget takes minutes to load on a busy CI machine.
A dedicated SQL server runs the load, so its VmHWM measures this load alone (after a warm-up load).
The budget is RSS, not an RLIMIT_AS: a Python server with DuckDB, Arrow and RocksDB reserves
gigabytes of address space it never touches, so an address-space limit says nothing about memory."""

from __future__ import annotations

import base64
import http.client
import json
import os
import signal
from collections.abc import Iterator

import pymysql
import pytest

from tests.query.sqlkit import rows, run
from tests.query.stream_load_kit import free_port, start_sql_server, status_kb

ROWS = 520_000
PAD = 1000  # bytes of text per row: the body is ~500 MB, 3 × the budget
# How much the server's peak RSS may grow while loading it: an 8 MB chunk (STRATA_STREAM_LOAD_CHUNK_BYTES)
# took ~120 MB at its peak, whatever the body's size (57 MB and 231 MB bodies alike); loaded whole,
# the body would take about ten times its size.
BUDGET = 160 << 20
BATCH_ROWS = 2000


def _body(count: int) -> Iterator[bytes]:
    """Rows `k \\t n \\t pad`, generated as they are sent (the test holds no file)."""
    for start in range(0, count, BATCH_ROWS):
        yield b"".join(b"%d\t%d\t%012d%s\n" % (k, k * 7 % 10007, k, b"x" * (PAD - 12))
                       for k in range(start, min(start + BATCH_ROWS, count)))


def _stream_load(http_port: int, db: str, table: str, body: Iterator[bytes]) -> dict[str, object]:
    conn = http.client.HTTPConnection("127.0.0.1", http_port, timeout=600)
    try:
        conn.request("PUT", f"/api/{db}/{table}/_stream_load", body=body, encode_chunked=True,
                     headers={"Authorization": "Basic " + base64.b64encode(b"root:").decode(),
                              "Transfer-Encoding": "chunked"})
        reply: dict[str, object] = json.loads(conn.getresponse().read())
        return reply
    finally:
        conn.close()


def _checksums(conn: pymysql.connections.Connection, table: str, count: int, pad: int) -> None:
    """Rows 0..count-1 arrived once each, each with its own text."""
    total = count * (count - 1) // 2
    assert rows(conn, "SELECT count(*), sum(k), sum(n), sum(CAST(substr(pad, 1, 12) AS BIGINT)), "
                      f"min(length(pad)), max(length(pad)) FROM {table} WHERE k >= 0") == \
        [(count, total, sum(k * 7 % 10007 for k in range(count)), total, pad, pad)]


def test_a_body_in_many_chunks_is_one_commit(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE t (k BIGINT, n INT, pad VARCHAR(1000)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
              "PROPERTIES ('enable_time_travel' = 'true')")
    run(conn, "INSERT INTO t VALUES (-1, 0, 'before')")
    http_port = free_port()
    proc = start_sql_server(free_port(), http_port, settings={"STRATA_STREAM_LOAD_CHUNK_BYTES": str(64 << 10)})
    try:
        count = 3000  # ~3 MB: about fifty 64 kB chunks
        reply = _stream_load(http_port, db, "t", _body(count))
        assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == count, reply
        bad = _stream_load(http_port, db, "t", iter([b"".join(_body(2000)), b"x\ty\n"]))
        assert bad["Status"] == "Fail" and "too many filtered rows" in str(bad["Message"]), bad
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=20)
    _checksums(conn, "t", count, PAD)
    assert rows(conn, "SELECT count(*) FROM t FOR VERSION AS OF 1") == [(1,)]  # one commit each
    assert rows(conn, "SELECT count(*) FROM t FOR VERSION AS OF 2") == [(count + 1,)]
    assert rows(conn, "SELECT count(*) FROM t") == [(count + 1,)]  # the failed load left nothing
    run(conn, "ADMIN COMPACT TABLE t WHERE TYPE = 'BASE'")
    _checksums(conn, "t", count, PAD)
    assert rows(conn, "SELECT count(*) FROM t FOR VERSION AS OF 1") == [(1,)]


@pytest.mark.nightly  # minutes on a busy 2-core machine: the body is ~500 MB
def test_a_body_larger_than_the_memory_budget_loads_in_chunks(conn: pymysql.connections.Connection,
                                                               db: str) -> None:
    run(conn, "CREATE TABLE t (k BIGINT, n INT, pad VARCHAR(1000)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2")
    http_port = free_port()
    proc = start_sql_server(free_port(), http_port)
    try:
        warm = _stream_load(http_port, db, "t", iter([b"-1\t0\twarm\n"]))  # first-use costs are not the load's
        assert warm["Status"] == "Success", warm
        before_kb = status_kb(proc.pid, "VmHWM")
        reply = _stream_load(http_port, db, "t", _body(ROWS))
        growth = (status_kb(proc.pid, "VmHWM") - before_kb) << 10
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=20)
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == ROWS, reply
    size = int(str(reply["LoadBytes"]))
    print(f"body {size >> 20} MB, peak RSS growth {growth >> 20} MB, load {reply['LoadTimeMs']} ms")
    assert size >= 3 * BUDGET, size
    assert growth < BUDGET, f"peak RSS grew by {growth >> 20} MB loading {size >> 20} MB"
    _checksums(conn, "t", ROWS, PAD)
