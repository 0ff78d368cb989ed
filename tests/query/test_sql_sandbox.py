"""The executor sandbox, tried from the SQL port as an attacker would: every table function DuckDB
has, the file/network/settings scalar functions, DuckDB's own catalog views, and every statement
path that hands user SQL to DuckDB (SELECT, a second statement of a script, INSERT … SELECT,
DELETE and UPDATE predicates, CREATE TABLE AS, routine-load COLUMNS / WHERE). Nothing may read
a file, a URL, a setting, or a table the user holds no grant on; each refusal names the function."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pymysql
import pytest

from query.sandbox import ALLOWED_TABLE_FUNCTIONS
from schemas.config import load_settings
from tests.query.sqlkit import Conn, fails, rows, run

pytestmark = pytest.mark.integration
MARKER = f"strata-sandbox-marker-{uuid.uuid4().hex}"


@pytest.fixture(scope="module")
def secret_file() -> Iterator[Path]:
    """A file the SQL server process can read (same user), holding a marker that must never come back."""
    folder = load_settings().home / "sandbox-probe"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "secret.csv"
    path.write_text(f"secret\n{MARKER}\n")
    yield path
    path.unlink(missing_ok=True)


def _table_functions() -> list[str]:
    """Every table function of the DuckDB the server runs (as this venv has it), from its catalog."""
    with duckdb.connect() as con:
        found = con.execute("SELECT DISTINCT function_name FROM duckdb_functions() "
                            "WHERE function_type = 'table' ORDER BY 1").fetchall()
    return [name for (name,) in found if name.isidentifier()]


def _login(user: str, password: str, database: str) -> Conn:
    return pymysql.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user=user, password=password,
                           database=database, autocommit=True, connect_timeout=20)


@pytest.fixture
def alice(conn: Conn, db: str) -> Iterator[Conn]:
    """A user holding SELECT and LOAD on `mine` only; `secret` exists beside it."""
    name, password = f"alice_{uuid.uuid4().hex[:8]}", f"pw-{uuid.uuid4().hex}"
    for table in ("mine", "secret"):
        run(conn, f"CREATE TABLE {table} (k INT, v VARCHAR(64)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, f"INSERT INTO secret VALUES (1, '{MARKER}')")
    run(conn, "INSERT INTO mine VALUES (1, 'mine')")
    run(conn, f"CREATE USER '{name}'@'%' IDENTIFIED BY '{password}'")
    run(conn, f"GRANT SELECT_PRIV, LOAD_PRIV ON {db}.mine TO '{name}'@'%'")
    session = _login(name, password, db)
    yield session
    session.close()
    run(conn, f"DROP USER IF EXISTS '{name}'")


def _refused(conn: Conn, sql: str, *fragments: str) -> None:
    """`sql` fails with a clear error and nothing it returned or said holds the marker."""
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            got = cur.fetchall()
    except pymysql.MySQLError as exc:
        message = str(exc.args[1]) if len(exc.args) > 1 else str(exc)
        assert MARKER not in message, f"{sql!r} leaked the marker in its error"
        for fragment in fragments:
            assert fragment.lower() in message.lower(), f"{sql!r}: {fragment!r} not in {message!r}"
        assert rows(conn, "SELECT 1") == [(1,)]
        return
    raise AssertionError(f"{sql!r} was not refused; it returned {got!r}")


def test_every_duckdb_table_function_is_refused_except_generators(conn: Conn, db: str, secret_file: Path) -> None:
    names = _table_functions()
    assert len(names) > 40, names  # the catalog really was read: DuckDB 2.0 has ~100 table functions
    assert "read_text" in names and "read_csv" in names and "query" in names
    probed = 0
    for name in names:
        if name in ALLOWED_TABLE_FUNCTIONS:
            continue
        _refused(conn, f"SELECT * FROM {name}('{secret_file}')", name)
        _refused(conn, f"SELECT 1 FROM (SELECT 1) AS o, {name}('{secret_file}') AS f")
        probed += 1
    assert probed > 40
    assert rows(conn, "SELECT count(*) FROM range(5)") == [(5,)]  # generators stay usable


@pytest.mark.parametrize("sql", [
    "SELECT * FROM read_text('{secret}')",
    "SELECT content FROM read_text('/proc/self/environ')",
    "SELECT * FROM read_blob('{key}')",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_csv_auto('{secret}')",
    "SELECT * FROM read_parquet('{home}/data/ssd/**/*.parquet')",
    "SELECT * FROM parquet_scan('{home}/data/ssd/**/*.parquet')",
    "SELECT * FROM read_json('https://example.com/x.json')",
    "SELECT * FROM read_csv('http://127.0.0.1:1/x.csv')",
    "SELECT * FROM glob('{home}/**')",
    "SELECT * FROM query('SELECT 42')",
    "SELECT * FROM query_table('duckdb_settings')",
    "SELECT * FROM duckdb_settings()",
    "SELECT * FROM duckdb_secrets()",
    "SELECT current_setting('allowed_directories')",
    "SELECT 1 FROM mine WHERE current_setting('home_directory') IS NOT NULL",
    "SELECT * FROM mine, read_csv('{secret}')",
    "SELECT * FROM mine WHERE v IN (SELECT content FROM read_text('{secret}'))",
    "SELECT * FROM mine, LATERAL (SELECT * FROM read_text('{secret}')) AS x",
    "WITH s AS (SELECT * FROM read_text('{secret}')) SELECT * FROM s",
])
def test_file_network_and_settings_functions_are_refused(conn: Conn, db: str, secret_file: Path, sql: str) -> None:
    home = load_settings().home
    run(conn, "CREATE TABLE mine (k INT, v VARCHAR(64)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    # `glob(…)` is a syntax error already (sqlglot reads GLOB as the operator); the rest reach the sandbox.
    expected = "glob" if "glob(" in sql else "not allowed"
    _refused(conn, sql.format(secret=secret_file, key=home / "secrets" / "strata.key", home=home), expected)


def test_a_second_statement_of_a_script_is_checked_too(conn: Conn, db: str, secret_file: Path) -> None:
    # pymysql sends the script in one COM_QUERY when multi-statements are on (they are by default).
    _refused(conn, f"SELECT 1; SELECT content FROM read_text('{secret_file}')", "read_text")


def test_duckdb_catalog_views_and_replacement_scans_are_not_reachable(conn: Conn, db: str,
                                                                     secret_file: Path) -> None:
    for sql in ("SELECT * FROM duckdb_views", "SELECT * FROM duckdb_settings", "SELECT * FROM sqlite_master",
                f"SELECT * FROM `{secret_file}`",
                "WITH duckdb_views AS (SELECT * FROM duckdb_views) SELECT * FROM duckdb_views",
                "WITH duckdb_settings AS (SELECT * FROM duckdb_settings) SELECT * FROM duckdb_settings"):
        fails(conn, sql, 1146)  # resolved as Strata tables, which do not exist
    fails(conn, "SELECT * FROM pg_catalog.pg_settings", 1049, "pg_catalog")  # a Strata database, which does not


def test_write_paths_refuse_file_functions(conn: Conn, db: str, secret_file: Path) -> None:
    run(conn, "CREATE TABLE t (k INT, v VARCHAR(200)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO t VALUES (1, 'a')")
    text = f"read_text('{secret_file}')"
    read = f"(SELECT content FROM {text})"
    for sql in (f"INSERT INTO t SELECT 2, content FROM {text}",
                f"INSERT INTO t VALUES (3, {read})",
                f"DELETE FROM t WHERE v IN {read}",
                f"UPDATE t SET v = {read} WHERE k = 1",
                f"CREATE TABLE t2 PROPERTIES ('replication_num' = '1') AS SELECT content FROM {text}",
                f"CREATE ROUTINE LOAD {db}.job ON t COLUMNS(k, raw, v = {read}) "
                "FROM KAFKA ('kafka_broker_list' = '127.0.0.1:1', 'kafka_topic' = 'x')",
                f"CREATE ROUTINE LOAD {db}.job2 ON t COLUMNS(k, v), WHERE v IN {read} "
                "FROM KAFKA ('kafka_broker_list' = '127.0.0.1:1', 'kafka_topic' = 'x')"):
        _refused(conn, sql, "read_text")
    assert rows(conn, "SELECT k, v FROM t ORDER BY k") == [(1, "a")]


def test_a_user_reaches_only_granted_tables_through_ctes_and_subqueries(alice: Conn, db: str) -> None:
    assert rows(alice, "SELECT v FROM mine") == [("mine",)]
    for sql in ("SELECT * FROM secret, (WITH secret AS (SELECT 1 AS x) SELECT * FROM secret) s",
                "WITH secret AS (SELECT * FROM secret) SELECT * FROM secret",
                "WITH a AS (SELECT * FROM secret), secret AS (SELECT 1 AS x) SELECT * FROM a",
                "SELECT * FROM mine WHERE v IN (SELECT v FROM secret)",
                "DELETE FROM mine WHERE v IN (SELECT v FROM secret)",
                "UPDATE mine SET v = (SELECT max(v) FROM secret) WHERE k = 1",
                "INSERT INTO mine VALUES (2, (SELECT max(v) FROM secret))"):
        _refused(alice, sql, "secret")
    # A CTE really in scope is not a table and needs no grant.
    assert rows(alice, "WITH secret AS (SELECT 1 AS x) SELECT x FROM secret") == [(1,)]
    assert rows(alice, "WITH b AS (SELECT 1 AS x), a AS (SELECT x FROM b) SELECT x FROM a") == [(1,)]
    assert rows(alice, "SELECT v FROM mine") == [("mine",)]
