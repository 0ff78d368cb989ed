"""Server-side prepared statements through a real client that uses them: mysql-connector-python's
`cursor(prepared=True)` (COM_STMT_PREPARE / COM_STMT_EXECUTE with binary parameters).

mysql-mimic 3.0.5 spliced each parameter into the SQL text as `'{value}'`: the injection string
matched every row, `O'Brien` was a syntax error, and DECIMAL, DATE, TIME and DATETIME parameters
were refused. Parameters are now bound as typed literals (query.wire.params)."""

from __future__ import annotations

import datetime as dt
import io
import os
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import mysql.connector
import pymysql
import pytest
from mysql.connector.connection import MySQLConnection

from tests.query.sqlkit import run

pytestmark = pytest.mark.usefixtures("server")


@pytest.fixture
def prepared(db: str) -> Iterator[MySQLConnection]:
    """A mysql-connector-python connection (pure Python: its C extension needs a newer OpenSSL
    than this machine has) on the test's database, with a `people` table of two rows."""
    conn = mysql.connector.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user="root",
                                   database=db, use_pure=True, connection_timeout=10)
    assert isinstance(conn, MySQLConnection)
    cur = conn.cursor()
    cur.execute("CREATE TABLE people (id INT, name VARCHAR(50), amount DECIMAL(10,2), born DATE, "
                "seen DATETIME(6), note VARCHAR(50)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
    cur.close()
    insert = conn.cursor(prepared=True)
    insert.execute("INSERT INTO people VALUES (?, ?, ?, ?, ?, ?)",
                   (1, "O'Brien", Decimal("12.50"), dt.date(1990, 1, 2), dt.datetime(2026, 1, 2, 3, 4, 5, 600000),
                    b"back\\slash"))
    insert.execute("INSERT INTO people VALUES (?, ?, ?, ?, ?, ?)",
                   (2, "nobody", Decimal("7.25"), dt.date(1985, 6, 30), dt.datetime(2026, 2, 3, 4, 5, 6), None))
    insert.close()
    yield conn
    conn.close()


def select(conn: MySQLConnection, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    cur = conn.cursor(prepared=True)
    try:
        cur.execute(sql, params)
        return [tuple(row) for row in cur.fetchall()]
    finally:
        cur.close()


def test_injection_string_is_a_value(prepared: MySQLConnection) -> None:
    assert select(prepared, "SELECT id FROM people WHERE name = ?", ("nobody' OR '1'='1",)) == []
    assert select(prepared, "SELECT id FROM people WHERE name = ?", ("x' OR 1=1 -- ",)) == []
    assert select(prepared, "SELECT id FROM people WHERE name = ?", ("\\' OR 1=1 #",)) == []
    assert select(prepared, "SELECT id FROM people WHERE name = ?", ("nobody",)) == [(2,)]


def test_quotes_and_backslashes_round_trip(prepared: MySQLConnection) -> None:
    assert select(prepared, "SELECT id FROM people WHERE name = ?", ("O'Brien",)) == [(1,)]
    assert select(prepared, "SELECT name, note FROM people WHERE id = ?", (1,)) == [("O'Brien", "back\\slash")]
    for text in ["O'Brien", "it''s", "a\\'b", "\\", "'", "?", "-- x", "/* y", "naïve ☃", "line\nbreak"]:
        assert select(prepared, "SELECT ?", (text,)) == [(text,)], text


def test_typed_parameters_find_their_rows(prepared: MySQLConnection) -> None:
    assert select(prepared, "SELECT id FROM people WHERE amount = ?", (Decimal("12.50"),)) == [(1,)]
    assert select(prepared, "SELECT id FROM people WHERE amount > ?", (Decimal("7.2500001"),)) == [(1,)]
    assert select(prepared, "SELECT id FROM people WHERE born = ?", (dt.date(1985, 6, 30),)) == [(2,)]
    assert select(prepared, "SELECT id FROM people WHERE seen = ?",
                  (dt.datetime(2026, 1, 2, 3, 4, 5, 600000),)) == [(1,)]
    assert select(prepared, "SELECT id FROM people WHERE seen < ?", (dt.datetime(2026, 2, 1),)) == [(1,)]
    assert select(prepared, "SELECT id FROM people WHERE note = ?", (b"back\\slash",)) == [(1,)]
    assert select(prepared, "SELECT id FROM people WHERE id = ? AND amount < ?", (2, 100.5)) == [(2,)]
    assert select(prepared, "SELECT id FROM people WHERE id = ?", (-1,)) == []
    assert select(prepared, "SELECT id FROM people WHERE id > 1-?", (-1,)) == []  # `1--1` would be a comment


def test_stored_values_read_back_with_their_types(prepared: MySQLConnection) -> None:
    assert select(prepared, "SELECT id, name, amount, born, seen, note FROM people ORDER BY id", ()) == [
        (1, "O'Brien", Decimal("12.50"), dt.date(1990, 1, 2), dt.datetime(2026, 1, 2, 3, 4, 5, 600000), "back\\slash"),
        (2, "nobody", Decimal("7.25"), dt.date(1985, 6, 30), dt.datetime(2026, 2, 3, 4, 5, 6), None),
    ]


def test_null_parameters(prepared: MySQLConnection) -> None:
    assert select(prepared, "SELECT id FROM people WHERE note IS NULL AND ? IS NULL", (None,)) == [(2,)]
    assert select(prepared, "SELECT id FROM people WHERE note = ?", (None,)) == []
    assert select(prepared, "SELECT ?, ?, ?", (None, 3, None)) == [(None, 3, None)]


def test_time_parameters(prepared: MySQLConnection) -> None:
    [(value,)] = select(prepared, "SELECT ?", (dt.time(10, 11, 12),))
    assert str(value) == "10:11:12"
    # Beyond a day (MySQL's TIME reaches ±838 hours): still a TIME for the client.
    for delta in [dt.timedelta(hours=30, minutes=1), -dt.timedelta(hours=30, seconds=1, microseconds=5)]:
        assert select(prepared, "SELECT ? FROM people WHERE id = 1", (delta,)) == [(delta,)]


def test_placeholders_in_strings_and_comments_are_text(prepared: MySQLConnection) -> None:
    assert select(prepared, "SELECT '?', ? /* ? */", (5,)) == [("?", 5)]
    assert select(prepared, "SELECT `id` FROM people WHERE name = ? -- ?", ("nobody",)) == [(2,)]


def test_re_execution_and_many_statements(prepared: MySQLConnection) -> None:
    cur = prepared.cursor(prepared=True)
    for i, name in [(1, "O'Brien"), (2, "nobody"), (1, "O'Brien")]:
        cur.execute("SELECT name FROM people WHERE id = ?", (i,))
        assert cur.fetchall() == [(name,)]
    cur.close()


def test_wrong_parameter_count_is_an_error(prepared: MySQLConnection) -> None:
    cur = prepared.cursor(prepared=True)
    with pytest.raises(mysql.connector.Error):
        cur.execute("SELECT ? + ?", (1,))
    cur.close()
    assert select(prepared, "SELECT ?", (7,)) == [(7,)]


def test_bad_sql_is_a_parse_error(prepared: MySQLConnection) -> None:
    cur = prepared.cursor(prepared=True)
    with pytest.raises(mysql.connector.Error) as caught:
        cur.execute("SELECT ? /* unterminated", (1,))
    assert caught.value.errno == 1064 and caught.value.sqlstate == "42000"
    assert "unterminated comment" in str(caught.value)
    with pytest.raises(mysql.connector.Error) as caught:
        cur.execute("SELECT id FROM people WHERE name = ? AND", ("x",))
    assert caught.value.errno == 1064 and caught.value.sqlstate == "42000"
    cur.close()
    assert select(prepared, "SELECT ?", ("still fine",)) == [("still fine",)]


def test_long_data_accumulates_across_packets(prepared: MySQLConnection) -> None:
    # mysql-connector sends a file-like parameter with COM_STMT_SEND_LONG_DATA, 128 KB per packet.
    text = "é" * 200_000
    assert select(prepared, "SELECT char_length(?), ?", (io.BytesIO(text.encode()), 5)) == [(200_000, 5)]


def test_reset_discards_long_data(prepared: MySQLConnection) -> None:
    statement = prepared.cmd_stmt_prepare(b"SELECT ? AS v")
    assert isinstance(statement, dict)
    stmt_id = statement["statement_id"]
    prepared.cmd_stmt_send_long_data(stmt_id, 0, io.BytesIO(b"discarded"))
    prepared.cmd_stmt_reset(stmt_id)
    answer = prepared.cmd_stmt_execute(stmt_id, data=("kept",), parameters=statement["parameters"])
    assert isinstance(answer, tuple)
    prepared.unread_result = True  # what the client's prepared cursor sets after an EXECUTE with rows
    rows, _ = prepared.get_rows(binary=True, columns=answer[1])
    assert [tuple(row) for row in rows] == [("kept",)]
    prepared.cmd_stmt_close(stmt_id)


def test_prepare_announces_the_result_columns(prepared: MySQLConnection) -> None:
    """MySQL describes a SELECT's columns in the prepare answer; libmysqlclient and Connector/J
    bind their result buffers (getMetaData before execute) from it."""
    statement = prepared.cmd_stmt_prepare(b"SELECT id, amount, born, seen FROM people WHERE id = ?")
    assert isinstance(statement, dict)
    assert statement["num_columns"] == 4 and statement["num_params"] == 1
    assert [(c[0], c[1]) for c in statement["columns"]] == [("id", 3), ("amount", 246), ("born", 10), ("seen", 12)]
    other = prepared.cmd_stmt_prepare(b"INSERT INTO people (id) VALUES (?)")
    assert isinstance(other, dict)
    assert other["num_columns"] == 0 and other["statement_id"] not in (0, statement["statement_id"])
    prepared.cmd_stmt_close(statement["statement_id"])
    assert select(prepared, "SELECT name FROM people WHERE id = ?", (2,)) == [("nobody",)]
    prepared.cmd_stmt_close(other["statement_id"])


def prepared_columns(conn: MySQLConnection, sql: bytes) -> list[tuple[str, int]]:
    """(name, MySQL type) of each column the prepare answer announces; the statement is closed."""
    statement = conn.cmd_stmt_prepare(sql)
    assert isinstance(statement, dict)
    conn.cmd_stmt_close(statement["statement_id"])
    return [(c[0], c[1]) for c in statement["columns"]]


def test_prepare_after_add_column_announces_it(prepared: MySQLConnection, conn: pymysql.connections.Connection,
                                               db: str) -> None:
    """A prepare's columns are kept per connection and text (query.server `prepared_columns`); a
    schema change — made on another connection, then on this one — must still show in the next
    prepare of the same text."""
    text = b"SELECT * FROM people WHERE id = ?"
    before = prepared_columns(prepared, text)
    assert [name for name, _ in before] == ["id", "name", "amount", "born", "seen", "note"]
    assert prepared_columns(prepared, text) == before  # the kept description, unchanged
    run(conn, "ALTER TABLE people ADD COLUMN score BIGINT DEFAULT '0'")
    assert prepared_columns(prepared, text) == [*before, ("score", 8)]
    cur = prepared.cursor()
    cur.execute("ALTER TABLE people DROP COLUMN note")
    cur.close()
    assert prepared_columns(prepared, text) == [*before[:5], ("score", 8)]
    assert select(prepared, text.decode(), (2,)) == [(2, "nobody", Decimal("7.25"), dt.date(1985, 6, 30),
                                                      dt.datetime(2026, 2, 3, 4, 5, 6), 0)]


def test_same_text_in_another_database_is_described_there(prepared: MySQLConnection,
                                                          conn: pymysql.connections.Connection, db: str) -> None:
    """The kept description belongs to the database the text was prepared in: after USE, the same
    unqualified name is another table."""
    other_db = f"{db}_b"
    run(conn, f"CREATE DATABASE {other_db}")
    try:
        run(conn, f"CREATE TABLE {other_db}.people (id INT, nick VARCHAR(10)) DUPLICATE KEY(id) "
                  "DISTRIBUTED BY HASH(id) BUCKETS 1")
        text = b"SELECT * FROM people WHERE id = ?"
        assert len(prepared_columns(prepared, text)) == 6
        prepared.cmd_init_db(other_db)
        assert prepared_columns(prepared, text) == [("id", 3), ("nick", 253)]
        prepared.cmd_init_db(db)
        assert len(prepared_columns(prepared, text)) == 6
    finally:
        run(conn, f"DROP DATABASE {other_db} FORCE")
