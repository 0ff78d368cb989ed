"""A bulk INSERT of literals (the fast path, query.parser.literal_insert) writes exactly the rows the
parser path writes for the same VALUES, type by type, and fails the same way."""

from __future__ import annotations

import pymysql

from query.parser import literal_insert
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


# Lists of one quote character (the fast path's split cut): strings holding the list's punctuation,
# empty strings, 'NULL' as text, spacing of every kind, negative and exponent numbers.
SPLIT_COLUMNS = "k INT, s VARCHAR(20), dt DATETIME, dd DATE, d DECIMAL(10,2), f DOUBLE, flag BOOLEAN"
SPLIT_VALUES = [
    "(1, 'a, b', '2024-01-01 10:00:00', '2024-02-29', 1.25, -0.5e1, TRUE), "
    "(2, '), (', '2024-01-01', '2024-03-01', -7, 3, false),\n\t(3,'it\"s',NULL,NULL,NULL,NULL,NULL)",
    "( 4 , '' , '2024-12-31 23:59:59' , '2000-01-01' , .5 , 1E3 , NULL ) ,(5,'NULL','2024-06-01 00:00:00',"
    "'2024-06-01',-0.01,-2.5E-3,true);",
    "(6, 'line\nbreak', '2024-01-01 10:00:00', '2024-01-01', 99999999.99, 0, TRUE), (7, ')', NULL, NULL, 0, 0, FALSE)",
]


def test_one_quote_lists_write_what_the_parser_writes(conn: pymysql.connections.Connection, db: str) -> None:
    for name in ("fast", "parsed"):
        run(conn, f"CREATE TABLE {name} ({SPLIT_COLUMNS}) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    for values in SPLIT_VALUES:
        assert literal_insert._split_columns(values, "'") is not None  # the split cut takes it
        run(conn, f"INSERT INTO fast VALUES {values}")
        run(conn, f"INSERT INTO parsed VALUES {values.rstrip(';')} /* through the parser */")
    fast, parsed = rows(conn, "SELECT * FROM fast ORDER BY k"), rows(conn, "SELECT * FROM parsed ORDER BY k")
    assert fast == parsed and len(fast) == 7


def test_bad_values_fail_alike_on_both_paths(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE t (k INT, s VARCHAR(3), d DECIMAL(4,2), dd DATE) DUPLICATE KEY(k) "
              "DISTRIBUTED BY HASH(k) BUCKETS 1")
    for values in ("(1, 'abcd', 1, '2024-01-01')", "(1, 'a', 123.45, '2024-01-01')", "(1, 'a', 1, '2024-13-01')",
                   "(99999999999, 'a', 1, '2024-01-01')", "(1, 'a', 'x', '2024-01-01')"):
        answers: list[tuple[int, str] | None] = []
        for tail in ("", " /* parser */"):
            with conn.cursor() as cur:
                try:
                    cur.execute(f"INSERT INTO t VALUES {values}{tail}")
                    answers.append(None)
                except pymysql.MySQLError as exc:
                    answers.append((exc.args[0], exc.args[1]))
        assert answers[0] == answers[1], values
    assert rows(conn, "SELECT count(*) FROM t") == [(0,)]
