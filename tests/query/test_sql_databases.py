"""CREATE/DROP DATABASE, SHOW DATABASES, USE, through pymysql."""

from __future__ import annotations

import uuid

import pymysql
import pytest

from tests.query.sqlkit import connect, fails, rows, run, scalar


def _name() -> str:
    return f"d_{uuid.uuid4().hex[:10]}"


def test_create_show_use_drop(conn: pymysql.connections.Connection, other: pymysql.connections.Connection) -> None:
    name = _name()
    assert run(conn, f"CREATE DATABASE {name}") == 1
    # Visible to another connection at once (read your writes across connections).
    assert (name,) in rows(other, "SHOW DATABASES")
    assert rows(other, f"SHOW DATABASES LIKE '{name}'") == [(name,)]
    assert rows(other, f"SHOW DATABASES LIKE '{name[:-3]}%'") == [(name,)]
    assert ("information_schema",) in rows(conn, "SHOW DATABASES")
    run(conn, f"USE {name}")
    assert scalar(conn, "SELECT DATABASE()") == name
    run(conn, "CREATE TABLE t (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, f"DROP DATABASE {name}")
    assert rows(other, f"SHOW DATABASES LIKE '{name}'") == []
    fails(other, f"USE {name}", 1049, name)
    fails(conn, "SHOW TABLES", 1046, "no database selected")


def test_if_not_exists_and_if_exists(conn: pymysql.connections.Connection) -> None:
    name = _name()
    run(conn, f"CREATE DATABASE IF NOT EXISTS {name}")
    assert run(conn, f"CREATE DATABASE IF NOT EXISTS {name}") == 0
    fails(conn, f"CREATE DATABASE {name}", 1007, name, "exists")
    run(conn, f"DROP DATABASE IF EXISTS {name}")
    run(conn, f"DROP DATABASE IF EXISTS {name}")
    fails(conn, f"DROP DATABASE {name}", 1008, name, "doesn't exist")
    fails(conn, "CREATE DATABASE information_schema", 1007, "information_schema")


def test_use_unknown_and_connect_to_unknown(conn: pymysql.connections.Connection) -> None:
    fails(conn, "USE no_such_database_x", 1049, "no_such_database_x")
    # Checked in the handshake, before its OK, as MySQL and Doris do: the login itself is refused.
    with pytest.raises(pymysql.MySQLError) as refused:
        connect("no_such_database_y")
    assert refused.value.args[0] == 1049 and "no_such_database_y" in refused.value.args[1]


def test_connect_with_database(db: str) -> None:
    with connect(db) as conn:
        run(conn, "CREATE TABLE t (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1")
        assert rows(conn, "SHOW TABLES") == [("t",)]
        assert scalar(conn, "SELECT DATABASE()") == db



def test_drop_database_drops_its_tables(conn: pymysql.connections.Connection) -> None:
    name = _name()
    run(conn, f"CREATE DATABASE {name}")
    run(conn, f"CREATE TABLE {name}.t (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, f"INSERT INTO {name}.t VALUES (1)")
    run(conn, f"DROP DATABASE {name}")
    run(conn, f"CREATE DATABASE {name}")
    assert rows(conn, f"SHOW TABLES FROM {name}") == []
    fails(conn, f"SELECT * FROM {name}.t", 1146, "t")
    run(conn, f"DROP DATABASE {name} FORCE")


def test_parse_error_keeps_connection(conn: pymysql.connections.Connection) -> None:
    fails(conn, "CREATE DATABSE oops", 1064)
    fails(conn, "SELEC 1", 1064)
