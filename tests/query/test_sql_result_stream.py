"""A SELECT's rows streamed to a text-protocol client (query.streamed_rows, query.wire.text_batches):
results of many batches arrive whole and in order with the right count, a client reading slowly
does not hold up another's queries, an error met after rows were sent ends the result with an ERR
and the connection lives on, a client leaving mid-result costs the server nothing lasting, and a
table's files stay readable for the stream (time travel of a streamed read included)."""

from __future__ import annotations

import time

import pymysql
import pymysql.cursors
import pytest
from pymysql.constants import CLIENT

from tests.query.sqlkit import Conn, connect, rows, run, scalar

pytestmark = pytest.mark.usefixtures("server")

N = 50_000  # about three of the stream's batches (query.streamed_rows.BATCH_ROWS)


@pytest.fixture
def big(conn: Conn, db: str) -> str:
    run(conn, "CREATE TABLE seed (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO seed VALUES " + ", ".join(f"({i})" for i in range(250)))
    run(conn, "CREATE TABLE big (k BIGINT, name VARCHAR(40), amount DECIMAL(10,2), at DATETIME(3), "
              "day DATE, flag BOOLEAN) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
              "PROPERTIES ('enable_time_travel' = 'true')")
    run(conn, f"INSERT INTO big SELECT a.k * 250 + b.k, if((a.k * 250 + b.k) % 5 = 0, NULL, "
              f"concat('n', a.k * 250 + b.k)), (a.k * 250 + b.k) / 4, "
              f"date_add('2026-01-01 00:00:00.125', INTERVAL b.k SECOND), date_add('2026-01-01', INTERVAL a.k DAY), "
              f"(a.k * 250 + b.k) % 2 = 0 FROM seed a, seed b WHERE a.k * 250 + b.k < {N}")
    return db


def whole(db: str, sql: str) -> list[tuple[object, ...]]:
    """`sql`'s rows as the server sends them unstreamed: the last statement of a script is read whole."""
    client = pymysql.connect(host="127.0.0.1", port=connect().port, user="root", database=db, autocommit=True,
                             client_flag=CLIENT.MULTI_STATEMENTS, read_timeout=60)
    try:
        with client.cursor() as cur:
            cur.execute(f"SELECT 1; {sql}")
            found = cur.fetchall()
            while cur.nextset():
                found = cur.fetchall()
            return [tuple(r) for r in found]
    finally:
        client.close()


def test_a_result_of_many_batches_comes_whole_in_order(conn: Conn, big: str) -> None:
    sql = "SELECT k, name, amount, at, day, flag FROM big ORDER BY k DESC"
    with conn.cursor() as cur:
        count = cur.execute(sql)
        got = [tuple(r) for r in cur.fetchall()]
    assert count == N and len(got) == N
    assert [r[0] for r in got] == list(range(N - 1, -1, -1))
    assert got[-1][1] is None and str(got[-1][2]) == "0.00" and got[-1][5] == 1
    assert got[0][1] == f"n{N - 1}" and str(got[0][2]) == f"{(N - 1) / 4:.2f}"
    assert got == whole(big, sql)


def test_a_slow_reader_does_not_hold_up_another_client(big: str) -> None:
    slow = pymysql.connect(host="127.0.0.1", port=connect().port, user="root", database=big, autocommit=True,
                           cursorclass=pymysql.cursors.SSCursor, read_timeout=60)
    try:
        cur = slow.cursor()
        cur.execute("SELECT k, name FROM big ORDER BY k")
        assert cur.fetchone() == (0, None)
        other = connect(big)
        started = time.monotonic()
        for _ in range(5):
            assert scalar(other, "SELECT count(*) FROM seed") == 250
        assert time.monotonic() - started < 10
        other.close()
        assert len(cur.fetchall()) == N - 1
    finally:
        slow.close()


def test_a_client_leaving_mid_result_leaves_the_server_serving(big: str) -> None:
    for _ in range(3):
        leaving = pymysql.connect(host="127.0.0.1", port=connect().port, user="root", database=big,
                                  cursorclass=pymysql.cursors.SSCursor)
        cur = leaving.cursor()
        cur.execute("SELECT * FROM big")
        cur.fetchone()
        leaving._sock.close()  # gone without reading the rest or a COM_QUIT
    after = connect(big)
    assert scalar(after, "SELECT count(*) FROM big") == N
    assert len(rows(after, "SELECT k FROM big")) == N
    after.close()


def test_an_error_after_rows_were_sent_ends_the_result(conn: Conn, big: str) -> None:
    """DuckDB fails on a late row: whether before or after the first rows left, the client gets the
    error, not a short result, and the connection answers the next statement."""
    with pytest.raises(pymysql.MySQLError) as caught:
        rows(conn, f"SELECT k, CAST(if(k = {N - 7}, 'x', '1') AS INT) FROM big ORDER BY k")
    assert "x" in str(caught.value.args[1])
    assert rows(conn, "SELECT 1") == [(1,)]


def test_a_time_travel_read_streams_what_it_read_before(conn: Conn, big: str) -> None:
    before = scalar(conn, "SELECT now(3)")
    time.sleep(0.05)
    run(conn, "DELETE FROM big WHERE k >= 10")
    assert len(rows(conn, f"SELECT k FROM big FOR TIME AS OF '{before}'")) == N
    assert len(rows(conn, "SELECT k FROM big")) == 10
    run(conn, "ADMIN COMPACT TABLE big WHERE TYPE = 'BASE'")
    assert len(rows(conn, f"SELECT k FROM big FOR TIME AS OF '{before}'")) == N
