"""SHOW statements GUI tools and drivers send on connect, answered with MySQL's/Doris' columns, and
the one LIKE/WHERE filter (query.show_filter) over each."""

from __future__ import annotations

import os

import pymysql
import sqlalchemy

from tests.query.sqlkit import columns, fails, rows, run

TAIL = "DISTRIBUTED BY HASH(k) BUCKETS 1"


def test_show_columns_like_connector_j(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT NOT NULL COMMENT 'the key', v VARCHAR(10) DEFAULT 'x', s BIGINT SUM) "
              f"AGGREGATE KEY(k, v) {TAIL}")
    # Connector/J's DatabaseMetaData.getColumns (useInformationSchema=false).
    sql = f"SHOW FULL COLUMNS FROM `t` FROM `{db}` LIKE '%'"
    assert columns(conn, sql) == ["Field", "Type", "Collation", "Null", "Key", "Default", "Extra", "Privileges",
                                  "Comment"]
    assert rows(conn, sql) == [
        ("k", "int", None, "NO", "YES", None, "", "select,insert,update,references", "the key"),
        ("v", "varchar(10)", "utf8mb4_0900_bin", "YES", "YES", "x", "", "select,insert,update,references", ""),
        ("s", "bigint", None, "YES", "NO", None, "SUM", "select,insert,update,references", "")]
    assert rows(conn, "SHOW COLUMNS FROM t LIKE '_'") == [("k", "int", "NO", "YES", None, ""),
                                                           ("v", "varchar(10)", "YES", "YES", "x", ""),
                                                           ("s", "bigint", "YES", "NO", None, "SUM")]
    assert rows(conn, f"SHOW FIELDS IN t IN {db} WHERE `Key` = 'NO'") == [("s", "bigint", "YES", "NO", None, "SUM")]
    assert rows(conn, "SHOW COLUMNS FROM t WHERE Type LIKE 'varchar%' OR Field = 'k'") == [
        ("k", "int", "NO", "YES", None, ""), ("v", "varchar(10)", "YES", "YES", "x", "")]
    fails(conn, "SHOW COLUMNS FROM nope", 1146, "nope")
    fails(conn, "SHOW COLUMNS FROM t WHERE no_such = 1", 1054, "no_such")


def test_show_index_and_table_status(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE a (k INT, v INT) COMMENT 'first' {TAIL}")
    run(conn, f"CREATE TABLE b (k INT) {TAIL}")
    run(conn, "INSERT INTO a VALUES (1, 1), (2, 2), (3, 3)")
    for form in ("INDEX", "INDEXES", "KEYS"):
        assert columns(conn, f"SHOW {form} FROM a FROM {db}") == [
            "Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name", "Collation", "Cardinality",
            "Sub_part", "Packed", "Null", "Index_type", "Comment", "Properties"]
        assert rows(conn, f"SHOW {form} FROM a") == []  # a Duplicate Key table's sort key is no index
    run(conn, f"CREATE TABLE u (k INT, j INT, v INT) UNIQUE KEY(k, j) {TAIL}")
    # A Unique Key table's key addresses one row: MySQL tools see it as the PRIMARY index.
    assert [r[:5] + r[9:11] for r in rows(conn, "SHOW KEYS FROM u")] == [
        ("u", 0, "PRIMARY", 1, "k", "YES", "BTREE"), ("u", 0, "PRIMARY", 2, "j", "YES", "BTREE")]
    assert rows(conn, "SHOW INDEX FROM u WHERE Seq_in_index = 2")[0][4] == "j"
    fails(conn, "SHOW INDEX FROM nope", 1146, "nope")
    fails(conn, "SHOW INDEX FROM a WHERE no_such_column = 1", 1054, "no_such_column")
    status = f"SHOW TABLE STATUS FROM {db}"
    assert columns(conn, status) == ["Name", "Engine", "Version", "Row_format", "Rows", "Avg_row_length",
                                     "Data_length", "Max_data_length", "Index_length", "Data_free", "Auto_increment",
                                     "Create_time", "Update_time", "Check_time", "Collation", "Checksum",
                                     "Create_options", "Comment"]
    found = {r[0]: r for r in rows(conn, status)}
    assert set(found) == {"a", "b", "u"}
    assert found["a"][1] == "Doris" and found["a"][4] == 3 and found["a"][6] > 0 and found["a"][17] == "first"
    assert found["b"][4] == 0 and found["a"][11] is not None and found["a"][11].microsecond == 0  # a DATETIME
    assert [r[0] for r in rows(conn, "SHOW TABLE STATUS LIKE 'b'")] == ["b"]
    assert [r[0] for r in rows(conn, "SHOW TABLE STATUS WHERE `Rows` > 0")] == ["a"]


def test_show_tables_databases_and_create_database(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE one (k INT) {TAIL}")
    run(conn, f"CREATE TABLE two (k INT) {TAIL}")
    assert rows(conn, f"SHOW FULL TABLES FROM {db} WHERE Table_type = 'BASE TABLE'") == [("one", "BASE TABLE"),
                                                                                      ("two", "BASE TABLE")]
    assert rows(conn, "SHOW FULL TABLES WHERE Table_type = 'VIEW'") == []
    assert rows(conn, f"SHOW TABLES WHERE Tables_in_{db} LIKE 't%'") == [("two",)]
    assert rows(conn, f"SHOW DATABASES WHERE `Database` = '{db}'") == [(db,)]
    assert rows(conn, f"SHOW CREATE DATABASE {db}") == [(db, f"CREATE DATABASE `{db}`")]
    assert columns(conn, f"SHOW CREATE SCHEMA {db}") == ["Database", "Create Database"]
    fails(conn, "SHOW CREATE DATABASE no_such_db", 1049, "no_such_db")
    fails(conn, "SHOW TABLES WHERE (SELECT 1) = 1", 1235, "subqueries")


def test_show_server_info(conn: pymysql.connections.Connection) -> None:
    run(conn, "SET query_timeout = 77")
    assert rows(conn, "SHOW VARIABLES WHERE Variable_name IN ('autocommit', 'query_timeout')") == [
        ("autocommit", "ON"), ("query_timeout", "77")]
    assert rows(conn, "SHOW SESSION VARIABLES LIKE 'query\\_timeout'") == [("query_timeout", "77")]
    assert rows(conn, "SHOW GLOBAL VARIABLES LIKE 'query_timeout'") == [("query_timeout", "900")]
    assert rows(conn, "SHOW VARIABLES WHERE Variable_name = 'no_such_variable'") == []
    assert rows(conn, "SHOW ENGINES") == [("Doris", "DEFAULT", "Strata's Doris-compatible OLAP storage "
                                           "(event-sourced Parquet rowsets)", "NO", "NO", "NO")]
    assert rows(conn, "SHOW CHARACTER SET") == [("utf8mb4", "UTF-8 Unicode", "utf8mb4_0900_bin", 4)]
    assert rows(conn, "SHOW CHARSET WHERE Maxlen > 4") == []
    assert columns(conn, "SHOW COLLATION") == ["Collation", "Charset", "Id", "Default", "Compiled", "Sortlen"]
    assert rows(conn, "SHOW COLLATION LIKE 'utf8mb4%'") == [("utf8mb4_0900_bin", "utf8mb4", 309, "Yes", "Yes", 1)]
    assert rows(conn, "SHOW COLLATION WHERE Charset = 'latin1'") == []
    for diagnostics in ("SHOW WARNINGS", "SHOW ERRORS"):
        assert columns(conn, diagnostics) == ["Level", "Code", "Message"] and rows(conn, diagnostics) == []
    status: dict[str, str] = dict(rows(conn, "SHOW STATUS"))
    assert int(status["Threads_connected"]) >= 1 and int(status["Uptime"]) >= 0
    assert [r[0] for r in rows(conn, "SHOW GLOBAL STATUS LIKE 'Threads%'")] == ["Threads_connected", "Threads_running"]
    fails(conn, "SHOW VARIABLES WHERE read_text('/etc/passwd') IS NOT NULL", 1227, "read_text")


def test_show_filters_what_a_user_may_see(conn: pymysql.connections.Connection, db: str,
                                          reader: tuple[pymysql.connections.Connection, str, str]) -> None:
    me, name, password = reader
    assert [r[0] for r in rows(me, "SHOW TABLE STATUS")] == ["open"]
    assert rows(me, "SHOW FULL TABLES WHERE Table_type = 'BASE TABLE'") == [("open", "BASE TABLE")]
    assert [r[0] for r in rows(me, "SHOW COLUMNS FROM open")] == ["k"]
    assert [r[7] for r in rows(me, "SHOW FULL COLUMNS FROM open")] == ["select"]
    fails(me, "SHOW COLUMNS FROM closed", 1142, "SELECT_PRIV")
    fails(me, "SHOW INDEX FROM closed", 1142, "SELECT_PRIV")
    assert rows(me, f"SHOW CREATE DATABASE {db}") == [(db, f"CREATE DATABASE `{db}`")]
    other = f"{db}_other"
    run(conn, f"CREATE DATABASE {other}")
    try:
        locked = pymysql.connect(host=conn.host, port=conn.port, user=name, password=password, autocommit=True)
        try:
            fails(locked, f"SHOW CREATE DATABASE {other}", 1044, other)
        finally:
            locked.close()
    finally:
        run(conn, f"DROP DATABASE {other} FORCE")


def test_pydoris_reflects_through_show(db: str) -> None:
    """pydoris (Superset's Doris dialect) reflects columns from SHOW COLUMNS and indexes from SHOW INDEX."""
    engine = sqlalchemy.create_engine(f"doris://root:@127.0.0.1:{os.environ['STRATA_SQL_PORT']}/{db}")
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql("CREATE TABLE r (id INT NOT NULL, amount DECIMAL(10, 2), at DATETIME(3), "
                                       "name VARCHAR(64), note STRING, flag BOOLEAN) DUPLICATE KEY(id) "
                                       "DISTRIBUTED BY HASH(id) BUCKETS 1")
        inspector = sqlalchemy.inspect(engine)
        found = [(c["name"], c["type"].compile(dialect=engine.dialect), c["nullable"])
                 for c in inspector.get_columns("r")]
        indexes = inspector.get_indexes("r")
    finally:
        engine.dispose()
    assert found == [("id", "INTEGER", False), ("amount", "DECIMAL(10, 2)", True), ("at", "DATETIME", True),
                     ("name", "VARCHAR(64)", True), ("note", "TEXT", True), ("flag", "BOOL", True)]
    assert indexes == []


def test_information_schema_tables_have_columns(conn: pymysql.connections.Connection, db: str,
                                                user: tuple[str, str]) -> None:
    """GUI tools browse information_schema like any database: DESC and SHOW COLUMNS answer for its tables."""
    assert rows(conn, "SHOW COLUMNS FROM information_schema.schemata LIKE 'SCHEMA_NAME'") == [
        ("SCHEMA_NAME", "text", "YES", "NO", None, "")]
    assert ("TABLE_ROWS", "bigint", "Yes", "false", None, "") in rows(conn, "DESC information_schema.tables")
    assert ("CREATE_TIME", "datetime", "Yes", "false", None, "") in rows(conn, "DESC information_schema.tables")
    assert rows(conn, "SHOW INDEX FROM information_schema.columns") == []
    fails(conn, "SHOW COLUMNS FROM information_schema.no_such", 1146, "no_such")
    name, password = user
    me = pymysql.connect(host=conn.host, port=conn.port, user=name, password=password, database="information_schema",
                         autocommit=True)
    try:
        assert [r[0] for r in rows(me, "SHOW COLUMNS FROM views")][:3] == ["TABLE_CATALOG", "TABLE_SCHEMA",
                                                                          "TABLE_NAME"]
    finally:
        me.close()


def test_show_routines_and_plugins(conn: pymysql.connections.Connection) -> None:
    """Connector/J's getProcedures / getFunctions (without information_schema) ask these: none exist."""
    for kind in ("PROCEDURE", "FUNCTION"):
        sql = f"SHOW {kind} STATUS LIKE '%'"
        assert columns(conn, sql) == ["Db", "Name", "Type", "Definer", "Modified", "Created", "Security_type",
                                      "Comment", "character_set_client", "collation_connection", "Database Collation"]
        assert rows(conn, sql) == [] and rows(conn, f"SHOW {kind} STATUS WHERE Db = 'x'") == []
    assert columns(conn, "SHOW PLUGINS") == ["Name", "Status", "Type", "Library", "License"]
    assert rows(conn, "SHOW PLUGINS") == []
