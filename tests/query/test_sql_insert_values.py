"""A bulk INSERT of literals (the fast path, query.parser.literal_insert) writes exactly the rows the
parser path writes for the same VALUES, type by type, and fails the same way."""

from __future__ import annotations

import pymysql

from query.parser.literal_insert import parse_literal_insert
from tests.query.sqlkit import fails, rows, run

COLUMNS = ("k INT, i INT, b BIGINT, d DECIMAL(10,1), f DOUBLE, s VARCHAR(20), dt DATETIME(3), dd DATE, "
           "flag BOOLEAN, li LARGEINT")
VALUES = ("(1, 7, 9007199254740993, 1.25, -0.5e1, 'it''s', '2024-01-01 10:00:00.123456', '2024-02-29', TRUE, 5), "
          "(2, NULL, -1, 10, 1.5, \"say \"\"hi\"\"\", '2024-01-01', '2024-03-01', false, NULL), "
          "(3, 2.5, 0, .05, 3, '(1, 2)', NULL, NULL, NULL, -9223372036854775808)")


def test_fast_and_parser_paths_write_the_same_rows(conn: pymysql.connections.Connection, db: str) -> None:
    for name in ("fast", "parsed"):
        run(conn, f"CREATE TABLE {name} ({COLUMNS}) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2")
    assert parse_literal_insert(f"INSERT INTO fast VALUES {VALUES}") is not None  # it takes the fast path
    run(conn, f"INSERT INTO fast VALUES {VALUES}")
    run(conn, f"INSERT INTO parsed VALUES {VALUES} /* a comment sends it through the parser */")
    fast, parsed = rows(conn, "SELECT * FROM fast ORDER BY k"), rows(conn, "SELECT * FROM parsed ORDER BY k")
    assert fast == parsed and len(fast) == 3


def test_errors_match(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE t (k INT, d DATE) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    for tail in ("", " /* parser */"):
        fails(conn, f"INSERT INTO t VALUES (1, '2024-01-01', 3){tail}", 1136, "Column count")
        fails(conn, f"INSERT INTO t (k) VALUES (1), (2, 3){tail}", 1136, "Column count")
        fails(conn, f"INSERT INTO nope VALUES (1){tail}", 1146, "nope")
    assert rows(conn, "SELECT count(*) FROM t") == [(0,)]
    # A value that does not convert fails the statement on both paths alike.
    with conn.cursor() as cur:
        codes: list[int | None] = []
        for tail in ("", " /* parser */"):
            try:
                cur.execute(f"INSERT INTO t VALUES (1, 'not a date'){tail}")
                codes.append(None)
            except pymysql.MySQLError as exc:
                codes.append(exc.args[0])
    assert codes[0] == codes[1]


def test_auto_increment_and_group_commit_take_fast_rows(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE a (id BIGINT NOT NULL AUTO_INCREMENT, v VARCHAR(5)) UNIQUE KEY(id) "
              "DISTRIBUTED BY HASH(id) BUCKETS 1")
    run(conn, "INSERT INTO a (v) VALUES ('x'), ('y')")
    assert [v for _, v in rows(conn, "SELECT id, v FROM a ORDER BY id")] == ["x", "y"]
    run(conn, "SET group_commit = sync_mode")
    try:
        run(conn, "INSERT INTO a (v) VALUES ('z')")
    finally:
        run(conn, "SET group_commit = off_mode")
    assert rows(conn, "SELECT count(*) FROM a") == [(3,)]
