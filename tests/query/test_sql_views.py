"""Views through the SQL port, as Doris and dbt-doris use them: CREATE [OR REPLACE] / ALTER / DROP
VIEW, SHOW CREATE VIEW (and SHOW CREATE TABLE of a view), SHOW [FULL] TABLES, DESC and
information_schema; one namespace with tables; definer rights (a grant on the view is enough to read
it); the sandbox over stored definitions; time travel inside a definition.

Expected rows translated from Doris' regression suites are marked with the suite they come from."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import TypeAlias

import pymysql
import pytest

from query.reads import view_body
from query.sandbox import SandboxViolation
from tests.query.sqlkit import columns, fails, rows, run, sorted_rows

Conn: TypeAlias = pymysql.connections.Connection
TABLE = "DUPLICATE KEY(k1) DISTRIBUTED BY HASH(k1) BUCKETS 1"

# regression-test/suites/ddl_p0/create_view_nereids/test_create_view_nereids.groovy: `mal_test_view`.
MAL_ROWS = ("(2,1,3),(1,1,2),(3,5,6),(6,null,6),(4,5,6),(2,1,4),(2,3,5),(1,1,4),(3,5,6),(3,5,null),(6,7,1),"
            "(2,1,7),(2,4,2),(2,3,9),(1,3,6),(3,5,8),(3,2,8)")
MAL_SORTED = [(1, 1, 2), (1, 1, 4), (1, 3, 6), (2, 1, 3), (2, 1, 4), (2, 1, 7), (2, 3, 5), (2, 3, 9), (2, 4, 2),
              (3, 2, 8), (3, 5, None), (3, 5, 6), (3, 5, 6), (3, 5, 8), (4, 5, 6), (6, None, 6), (6, 7, 1)]


def _mal(conn: Conn) -> None:
    run(conn, "CREATE TABLE mal_test_view (pk INT, a INT, b INT) DUPLICATE KEY(pk) DISTRIBUTED BY HASH(pk) BUCKETS 3")
    run(conn, f"INSERT INTO mal_test_view VALUES {MAL_ROWS}")


def _nulls_first(found: Sequence[tuple[object, ...]]) -> list[tuple[object, ...]]:
    return sorted(found, key=lambda r: tuple((v is not None, v) for v in r))


def test_create_or_replace_view(conn: Conn, db: str) -> None:
    # regression-test/suites/ddl_p0/test_create_or_replace_view.groovy (rows: data/ddl_p0/…/.out)
    for table in ("test_create_or_replace_view_tbl1", "test_create_or_replace_view_tbl2"):
        run(conn, f"CREATE TABLE IF NOT EXISTS {table} (k1 int, k2 int, v int) {TABLE}")
    run(conn, "INSERT INTO test_create_or_replace_view_tbl1 VALUES(1,1,1)")
    run(conn, "INSERT INTO test_create_or_replace_view_tbl2 VALUES(2,2,2)")
    run(conn, "drop view if exists view_test_create_or_replace_view")
    run(conn, "CREATE VIEW IF NOT EXISTS view_test_create_or_replace_view AS SELECT * FROM "
              "test_create_or_replace_view_tbl1;")
    assert [r[:2] for r in rows(conn, "desc view_test_create_or_replace_view")] == [
        ("k1", "int"), ("k2", "int"), ("v", "int")]
    assert rows(conn, "select * from view_test_create_or_replace_view") == [(1, 1, 1)]
    run(conn, "CREATE OR REPLACE VIEW view_test_create_or_replace_view AS SELECT * FROM "
              "test_create_or_replace_view_tbl2;")
    assert rows(conn, "select * from view_test_create_or_replace_view") == [(2, 2, 2)]
    fails(conn, "CREATE OR REPLACE VIEW IF NOT EXISTS view_test_create_or_replace_view AS SELECT * FROM "
                "test_create_or_replace_view_tbl1", 1235,
          "[OR REPLACE] and [IF NOT EXISTS] cannot used at the same time")
    # IF NOT EXISTS leaves an existing view as it is.
    run(conn, "CREATE VIEW IF NOT EXISTS view_test_create_or_replace_view AS SELECT 1")
    assert rows(conn, "select * from view_test_create_or_replace_view") == [(2, 2, 2)]
    run(conn, "drop view if exists view_test_create_or_replace_view")
    assert rows(conn, "SHOW TABLES LIKE 'view_%'") == []


def test_column_lists_unions_aggregates_and_views_of_views(conn: Conn, db: str) -> None:
    # regression-test/suites/ddl_p0/create_view_nereids/test_create_view_nereids.groovy and
    # data/ddl_p0/create_view_nereids/test_create_view_nereids.out (qt_test_with_as … qt_test_create_view_from_view)
    _mal(conn)
    run(conn, "CREATE VIEW if not exists test_view_with_as AS (with t1 as (select * from mal_test_view), "
              "t2 as (select * from mal_test_view), t3 as (select * from mal_test_view) SELECT * FROM t1);")
    assert rows(conn, "select * from test_view_with_as order by pk, a, b") == MAL_SORTED
    run(conn, "CREATE VIEW test_view_union(c1,c2,c3) AS (select * from mal_test_view Union all "
              "SELECT * FROM mal_test_view);")
    assert rows(conn, "select c1,c2,c3 from test_view_union order by c1,c2,c3") == \
        _nulls_first([r for r in MAL_SORTED for _ in (1, 2)])
    run(conn, "CREATE VIEW test_view_count_star(c1) AS (select count(*) from mal_test_view having count(*) > 0);")
    assert rows(conn, "select c1 from test_view_count_star order by c1") == [(17,)]
    run(conn, "CREATE VIEW test_view_expression(c1,c2,c3) AS (select a+1,abs(a)+2+1 as c2, cast(b as varchar(10)) "
              "as c1 from mal_test_view);")
    expected = [(None, None, "6"), (2, 4, "2"), (2, 4, "3"), (2, 4, "4"), (2, 4, "4"), (2, 4, "7"), (3, 5, "8"),
                (4, 6, "5"), (4, 6, "6"), (4, 6, "9"), (5, 7, "2"), (6, 8, None), (6, 8, "6"), (6, 8, "6"),
                (6, 8, "6"), (6, 8, "8"), (8, 10, "1")]
    assert sorted_rows(conn, "select * from test_view_expression") == _nulls_first(expected)
    run(conn, "CREATE VIEW test_view_alias(c1,c2,c3) AS (select c8 as c9, c2 as c3, c1 as c4 from (select a+1 c8,"
              "abs(a)+2+1 as c2, cast(b as varchar(10)) as c1 from mal_test_view) t);")
    assert sorted_rows(conn, "select * from test_view_alias") == _nulls_first(expected)
    run(conn, "create view test_view_from_view(c1,c2,c3) as select * from test_view_with_as")
    assert rows(conn, "select * from test_view_from_view order by c1,c2,c3") == MAL_SORTED
    run(conn, "create view test_view_star_except as select * except(pk) from mal_test_view;")
    assert rows(conn, "select * from test_view_star_except order by a, b;") == [
        (None, 6), (1, 2), (1, 3), (1, 4), (1, 4), (1, 7), (2, 8), (3, 5), (3, 6), (3, 9), (4, 2), (5, None),
        (5, 6), (5, 6), (5, 6), (5, 8), (7, 1)]
    run(conn, "create view test_backquote_in_view_define(`abc`, c2) as select a,b from mal_test_view;")
    assert columns(conn, "select * from test_backquote_in_view_define") == ["abc", "c2"]
    # A column list of the wrong length, and duplicate names, are refused (Doris' and MySQL's codes).
    fails(conn, "CREATE VIEW bad (x) AS SELECT pk, a FROM mal_test_view", 1353, "different column counts")
    fails(conn, "CREATE VIEW bad AS SELECT pk, a AS pk FROM mal_test_view", 1060, "Duplicate column name 'pk'")
    fails(conn, "CREATE VIEW bad AS SELECT * FROM no_such_table", 1146, "no_such_table")


def test_partitions_inside_a_definition(conn: Conn, db: str) -> None:
    # regression-test/suites/ddl_p0/test_create_view.groovy: `my_view` joins two partitions.
    for table, (p1, p2) in (("t1", ("2023-07-10", "2023-07-11")), ("t2", ("2023-07-05", "2023-07-05"))):
        run(conn, f"CREATE TABLE `{table}` (k1 int, k2 date, v1 int) ENGINE=OLAP UNIQUE KEY(`k1`,`k2`) "
                  f"PARTITION BY RANGE(k2) (PARTITION p1 VALUES [('2023-07-01'), ('{p1}')), "
                  f"PARTITION p2 VALUES [('{p2}'), ('2023-07-20'))) DISTRIBUTED BY HASH(`k1`) BUCKETS 3")
    run(conn, "INSERT INTO t1 VALUES (1, '2023-07-02', 1), (2, '2023-07-12', 2)")
    run(conn, "INSERT INTO t2 VALUES (1, '2023-07-06', 10), (2, '2023-07-02', 20)")
    run(conn, "CREATE VIEW IF NOT EXISTS my_view AS SELECT t1.* FROM t1 PARTITION(p1) JOIN t2 PARTITION(p2) "
              "ON t1.k1 = t2.k1;")
    assert [tuple(str(v) for v in r) for r in rows(conn, "SELECT * FROM my_view")] == [("1", "2023-07-02", "1")]
    assert f"FROM `internal`.`{db}`.`t1` PARTITION(p1) JOIN `internal`.`{db}`.`t2` PARTITION(p2)" in \
        rows(conn, "SHOW CREATE VIEW my_view")[0][1]
    # A view outlives the tables it reads (as in Doris); reading it then names the missing table.
    run(conn, "DROP TABLE t2")
    fails(conn, "SELECT * FROM my_view", 1146, f"Table '{db}.t2' doesn't exist")


def test_view_p0(conn: Conn, db: str) -> None:
    # regression-test/suites/view_p0/view_p0.groovy (rows: data/view_p0/view_p0.out)
    run(conn, "create table test_view_table (id int) distributed by hash(id) properties('replication_num'='1');")
    run(conn, "insert into test_view_table values(1);")
    run(conn, "create view test_varchar_view (id) as  SELECT GROUP_CONCAT(cast( id as varchar)) from "
              "test_view_table;")
    assert rows(conn, "select * from test_varchar_view;") == [("1",)]
    run(conn, "CREATE VIEW IF NOT EXISTS `test_view_abc`(`a`) AS WITH T1 AS (SELECT 1 AS 'a'), T2 AS (SELECT 2 AS "
              "'a') SELECT T1.a FROM T1 UNION ALL SELECT T2.a FROM T2;")
    assert rows(conn, "select * from test_view_abc order by a") == [(1,), (2,)]
    run(conn, "CREATE TABLE test_view_table2 (c_date varchar(50)) ENGINE=OLAP UNIQUE KEY(`c_date`) "
              "distributed by hash(c_date) properties('replication_num'='1');")
    run(conn, "CREATE VIEW `test_view_table2_view` AS SELECT date_format(c_date,'%Y-%m-%d') AS `CREATE_DATE` "
              "FROM test_view_table2 GROUP BY date_format(c_date, '%Y-%m-%d');")
    assert rows(conn, "select * from test_view_table2_view;") == []
    run(conn, "ALTER VIEW test_view_table2_view as select c_date from test_view_table2")
    assert rows(conn, "DESC test_view_table2_view") == [("c_date", "varchar(50)", "Yes", "false", None, "")]
    run(conn, "ALTER VIEW test_view_table2_view(C_DatE) as select c_date from test_view_table2")
    assert rows(conn, "DESC test_view_table2_view") == [("C_DatE", "varchar(50)", "Yes", "false", None, "")]
    run(conn, "DROP VIEW IF EXISTS test_view_table2_view")
    run(conn, "CREATE VIEW `test_view_table2_view` (c_dATE) AS SELECT date_format(c_date,'%Y-%m-%d') AS "
              "`CREATE_DATE` FROM test_view_table2 GROUP BY date_format(c_date, '%Y-%m-%d');")
    assert [r[0] for r in rows(conn, "DESC test_view_table2_view")] == ["c_dATE"]


def test_show_create_view_qualifies_the_tables(conn: Conn, db: str) -> None:
    # Doris stores a view's query with its table names qualified as `internal`.`db`.`t` and answers
    # SHOW CREATE VIEW with View, Create View, character_set_client, collation_connection
    # (data/ddl_p0/create_view_nereids/test_create_view_nereids.out, test_count_star_sql).
    _mal(conn)
    run(conn, "CREATE VIEW test_view_count_star(c1 COMMENT 'how many') COMMENT 'counted' AS "
              "(select count(*) from mal_test_view having count(*) > 0);")
    assert columns(conn, "SHOW CREATE VIEW test_view_count_star") == [
        "View", "Create View", "character_set_client", "collation_connection"]
    [(name, text, charset, collation)] = rows(conn, "SHOW CREATE VIEW test_view_count_star")
    assert (name, charset, collation) == ("test_view_count_star", "utf8mb4", "utf8mb4_0900_bin")
    assert text == (f"CREATE VIEW `test_view_count_star` (`c1` COMMENT 'how many') COMMENT 'counted' AS "
                    f"(select count(*) from `internal`.`{db}`.`mal_test_view` having count(*) > 0);")
    # SHOW CREATE TABLE of a view answers as SHOW CREATE VIEW (MySQL and Doris do).
    assert rows(conn, "SHOW CREATE TABLE test_view_count_star") == [(name, text, charset, collation)]
    # The text runs again as it is, from any database: the view reads the same table.
    run(conn, "DROP VIEW test_view_count_star")
    run(conn, "USE information_schema")
    run(conn, f"USE {db}")
    run(conn, text)
    assert rows(conn, f"SELECT c1 FROM {db}.test_view_count_star") == [(17,)]
    run(conn, "CREATE DATABASE IF NOT EXISTS elsewhere_" + db[2:])
    run(conn, f"USE elsewhere_{db[2:]}")
    try:
        assert rows(conn, f"SELECT * FROM {db}.test_view_count_star") == [(17,)]
    finally:
        run(conn, f"DROP DATABASE elsewhere_{db[2:]} FORCE")
        run(conn, f"USE {db}")
    fails(conn, "SHOW CREATE VIEW mal_test_view", 1347, f"'{db}.mal_test_view' is not VIEW")


def test_tables_and_views_share_one_namespace(conn: Conn, db: str) -> None:
    run(conn, f"CREATE TABLE t (k1 INT, v INT) {TABLE}")
    run(conn, "CREATE VIEW v AS SELECT k1 FROM t")
    # Doris' ERR_WRONG_OBJECT (1347) names the right statement; IF EXISTS does not excuse it.
    fails(conn, "DROP TABLE v", 1347, f"'{db}.v' is not TABLE. Use 'DROP VIEW {db}.v'.")
    fails(conn, "DROP TABLE IF EXISTS v", 1347, "is not TABLE")
    fails(conn, "DROP VIEW t", 1347, f"'{db}.t' is not VIEW. Use 'DROP TABLE {db}.t'.")
    fails(conn, "DROP VIEW IF EXISTS t", 1347, "is not VIEW")
    fails(conn, "DROP VIEW nope", 1146, f"Table '{db}.nope' doesn't exist")
    run(conn, "DROP VIEW IF EXISTS nope")
    fails(conn, f"CREATE TABLE v (k1 INT) {TABLE}", 1050, "Table 'v' already exists")
    fails(conn, "CREATE TABLE v AS SELECT 1 AS k1", 1050, "already exists")
    fails(conn, "CREATE VIEW t AS SELECT 1", 1050, "Table 't' already exists")
    fails(conn, "CREATE VIEW v AS SELECT 1", 1050, "Table 'v' already exists")
    fails(conn, "ALTER TABLE t RENAME v", 1050, "already exists")
    # A view holds no rows of its own: writes and table DDL name it as what it is.
    for statement in ("INSERT INTO v VALUES (1)", "TRUNCATE TABLE v", "DELETE FROM v WHERE k1 = 1",
                      "ALTER TABLE v ADD COLUMN x INT", "SHOW PARTITIONS FROM v"):
        fails(conn, statement, 1347, f"'{db}.v' is not TABLE")
    fails(conn, "ALTER VIEW t AS SELECT 1", 1347, "is not VIEW")
    run(conn, "DROP VIEW v")
    run(conn, f"CREATE TABLE v (k1 INT) {TABLE}")  # the name is free again


def test_alter_view_and_what_a_view_reads(conn: Conn, db: str) -> None:
    run(conn, f"CREATE TABLE t (k1 INT, v INT) {TABLE}")
    run(conn, "INSERT INTO t VALUES (1, 10), (2, 20)")
    run(conn, "CREATE VIEW v AS SELECT * FROM t WHERE k1 > 1")
    assert rows(conn, "SELECT * FROM v") == [(2, 20)]
    run(conn, "ALTER VIEW v (key_col, doubled) AS SELECT k1, v * 2 FROM t")
    assert rows(conn, "SELECT * FROM v ORDER BY key_col") == [(1, 20), (2, 40)]
    assert [r[0] for r in rows(conn, "DESC v")] == ["key_col", "doubled"]
    # A view's columns are those its query gave when it was defined: `*` does not grow with its
    # table (Doris expands it at CREATE), and a column its query no longer gives is a clear error.
    run(conn, "CREATE VIEW star AS SELECT * FROM t")
    run(conn, "ALTER TABLE t ADD COLUMN extra INT DEFAULT '7' AFTER k1")
    assert columns(conn, "SELECT * FROM star") == ["k1", "v"]
    assert rows(conn, "SELECT * FROM star ORDER BY k1") == [(1, 10), (2, 20)]
    run(conn, "ALTER TABLE t DROP COLUMN v")
    fails(conn, "SELECT * FROM star", 1054, "'v'", "ALTER VIEW")
    # Views work wherever a query reads: joins with tables, INSERT … SELECT, CREATE TABLE AS.
    run(conn, "CREATE VIEW ks AS SELECT k1 FROM t")
    assert rows(conn, "SELECT t.k1, t.extra FROM t JOIN ks ON t.k1 = ks.k1 ORDER BY 1") == [(1, 7), (2, 7)]
    run(conn, f"CREATE TABLE copy (k1 INT) {TABLE}")
    run(conn, "INSERT INTO copy SELECT k1 FROM ks")
    run(conn, "CREATE TABLE ctas PROPERTIES ('replication_num' = '1') AS SELECT * FROM ks")
    assert rows(conn, "SELECT count(*) FROM copy") == [(2,)] and rows(conn, "SELECT count(*) FROM ctas") == [(2,)]
    # A view that would read itself, directly or through another, is refused when (re)defined.
    run(conn, "CREATE VIEW outer_v AS SELECT * FROM ks")
    fails(conn, "ALTER VIEW ks AS SELECT * FROM outer_v", 1462, "reads itself")
    fails(conn, "CREATE OR REPLACE VIEW ks AS SELECT * FROM ks", 1462, "reads itself")
    assert rows(conn, "SELECT count(*) FROM outer_v") == [(2,)]


def test_listing_views(conn: Conn, db: str) -> None:
    run(conn, f"CREATE TABLE t (k1 INT, name VARCHAR(20)) {TABLE}")
    run(conn, "CREATE VIEW v (k COMMENT 'the key', n) COMMENT 'a view' AS SELECT k1, name FROM t")
    assert rows(conn, "SHOW TABLES") == [("t",), ("v",)]
    assert rows(conn, "SHOW FULL TABLES") == [("t", "BASE TABLE"), ("v", "VIEW")]
    assert rows(conn, "SHOW FULL TABLES WHERE Table_type = 'VIEW'") == [("v", "VIEW")]
    assert rows(conn, f"SELECT TABLE_NAME, TABLE_TYPE, ENGINE, TABLE_COMMENT FROM information_schema.tables "
                      f"WHERE TABLE_SCHEMA = '{db}' ORDER BY TABLE_NAME") == [
        ("t", "BASE TABLE", "Doris", ""), ("v", "VIEW", None, "a view")]
    assert rows(conn, f"SELECT TABLE_NAME, VIEW_DEFINITION, CHECK_OPTION, IS_UPDATABLE, SECURITY_TYPE, "
                      f"CHARACTER_SET_CLIENT, COLLATION_CONNECTION FROM information_schema.views "
                      f"WHERE TABLE_SCHEMA = '{db}'") == [
        ("v", f"SELECT k1, name FROM `internal`.`{db}`.`t`", "NONE", "NO", "DEFINER", "utf8mb4", "utf8mb4_0900_bin")]
    assert rows(conn, f"SELECT COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, COLUMN_TYPE, COLUMN_COMMENT "
                      f"FROM information_schema.columns WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 'v' "
                      f"ORDER BY ORDINAL_POSITION") == [
        ("k", 1, "int", "int", "the key"), ("n", 2, "varchar", "varchar(20)", "")]
    assert [r[:2] for r in rows(conn, "DESC v")] == [("k", "int"), ("n", "varchar(20)")]
    # A column a single-table query passes through keeps its declared type; a computed one has its result type.
    run(conn, "CREATE VIEW computed AS SELECT upper(name) AS name, name AS plain FROM t")
    assert [r[:2] for r in rows(conn, "DESC computed")] == [("name", "text"), ("plain", "varchar(20)")]
    assert [(r[0], r[-1]) for r in rows(conn, "SHOW FULL COLUMNS FROM v")] == [("k", "the key"), ("n", "")]
    assert [(r[0], r[-1]) for r in rows(conn, "SHOW TABLE STATUS")] == [("computed", "VIEW"), ("t", ""), ("v", "VIEW")]
    assert rows(conn, "SHOW INDEX FROM v") == []  # as MySQL answers for a view
    run(conn, "DROP VIEW v")
    run(conn, "DROP VIEW computed")
    assert rows(conn, "SHOW FULL TABLES") == [("t", "BASE TABLE")]
    assert rows(conn, f"SELECT count(*) FROM information_schema.views WHERE TABLE_SCHEMA = '{db}'") == [(0,)]


def test_dbt_doris_renames_a_view_through_show_create_view(conn: Conn, db: str) -> None:
    """dbt-doris' `doris__rename_relation` for a view: SHOW CREATE VIEW, the text after the first 'AS',
    CREATE VIEW under the new name, DROP VIEW of the old one; its catalog reads information_schema."""
    run(conn, f"CREATE TABLE src (k1 INT, name VARCHAR(10)) {TABLE}")
    run(conn, "INSERT INTO src VALUES (1, 'a'), (2, 'b')")
    run(conn, f"create view `{db}`.`m__dbt_tmp` as select k1, name from `{db}`.`src` where k1 > 1")
    with conn.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute(f"show create view `{db}`.`m__dbt_tmp`")
        text = cur.fetchall()[0]["Create View"]
    run(conn, f"drop view if exists `{db}`.`m`")
    run(conn, f"create view `{db}`.`m` as {text.replace('m__dbt_tmp', 'm').split('AS', 1)[1]}")
    run(conn, f"drop view if exists `{db}`.`m__dbt_tmp`")
    assert rows(conn, "SELECT * FROM m") == [(2, "b")]
    assert rows(conn, f"SELECT table_name, case when table_type = 'BASE TABLE' then 'table' when table_type = "
                      f"'VIEW' then 'view' else table_type end FROM information_schema.tables "
                      f"WHERE table_schema = '{db}' ORDER BY 1") == [("m", "view"), ("src", "table")]


def _instant() -> str:
    time.sleep(0.005)
    moment = datetime.now(tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    time.sleep(0.005)
    return moment


def test_time_travel_inside_a_definition_not_on_a_view(conn: Conn, db: str) -> None:
    run(conn, f"CREATE TABLE h (k1 INT, v INT) {TABLE} PROPERTIES ('enable_time_travel' = 'true')")
    run(conn, "INSERT INTO h VALUES (1, 1)")
    t = _instant()
    run(conn, "INSERT INTO h VALUES (2, 2)")
    run(conn, f"CREATE VIEW then_v AS SELECT * FROM h FOR TIME AS OF '{t}'")
    run(conn, "CREATE VIEW now_v AS SELECT * FROM h")
    run(conn, "INSERT INTO h VALUES (3, 3)")
    assert rows(conn, "SELECT * FROM then_v ORDER BY k1") == [(1, 1)]
    assert rows(conn, "SELECT count(*) FROM now_v") == [(3,)]
    run(conn, "ADMIN COMPACT TABLE h WHERE TYPE = 'BASE'")
    assert rows(conn, "SELECT * FROM then_v ORDER BY k1") == [(1, 1)]
    # A view has no history of its own: reading one AS OF an instant is refused, not guessed.
    fails(conn, f"SELECT * FROM now_v FOR TIME AS OF '{t}'", 1235, "is a view", "FOR TIME AS OF")
    fails(conn, "SELECT * FROM now_v FOR VERSION AS OF 1", 1235, "is a view")
    fails(conn, "SELECT * FROM now_v@incr('startVersion'='0')", 1235, "is a view")


def _login(user: str, password: str, database: str) -> Conn:
    return pymysql.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user=user, password=password,
                           database=database, autocommit=True, connect_timeout=20)


@pytest.fixture
def reader(conn: Conn, db: str) -> Iterator[tuple[Conn, str]]:
    """A user granted SELECT_PRIV on the view `v` only, beside the table `secret` it reads."""
    run(conn, f"CREATE TABLE secret (k1 INT, word VARCHAR(20)) {TABLE}")
    run(conn, "INSERT INTO secret VALUES (1, 'public'), (2, 'private')")
    run(conn, "CREATE VIEW v AS SELECT k1, word FROM secret WHERE word = 'public'")
    name, password = f"r_{uuid.uuid4().hex[:8]}", f"pw-{uuid.uuid4().hex}"
    run(conn, f"CREATE USER '{name}'@'%' IDENTIFIED BY '{password}'")
    run(conn, f"GRANT SELECT_PRIV ON {db}.v TO '{name}'@'%'")
    session = _login(name, password, db)
    yield session, name
    session.close()
    run(conn, f"DROP USER IF EXISTS '{name}'")


def test_a_grant_on_the_view_is_enough_to_read_it(conn: Conn, db: str, reader: tuple[Conn, str]) -> None:
    # Doris checks only the view's privilege when a view is read (the definer's rights); reading the
    # table itself still needs a grant on the table.
    me, name = reader
    assert rows(me, "SELECT * FROM v") == [(1, "public")]
    assert rows(me, f"SELECT count(*) FROM {db}.v") == [(1,)]
    fails(me, "SELECT * FROM secret", 1142, "SELECT_PRIV", f"{db}.secret")
    fails(me, "WITH x AS (SELECT * FROM secret) SELECT * FROM x", 1142, f"{db}.secret")
    assert rows(me, "SHOW TABLES") == [("v",)]
    # Its definition shows only to whoever may read everything it reads (Doris guards it with SHOW_VIEW_PRIV).
    fails(me, "SHOW CREATE VIEW v", 1142, f"{db}.secret")
    fails(me, "SHOW CREATE TABLE v", 1142, f"{db}.secret")
    assert rows(me, f"SELECT TABLE_NAME, VIEW_DEFINITION FROM information_schema.views WHERE TABLE_SCHEMA = '{db}'") \
        == [("v", "")]
    # Creating, altering, dropping a view need CREATE / ALTER / DROP, and SELECT on what the query reads.
    fails(me, "CREATE VIEW mine AS SELECT * FROM v", 1142, "CREATE_PRIV")
    run(conn, f"GRANT CREATE_PRIV, ALTER_PRIV, DROP_PRIV ON {db}.* TO '{name}'@'%'")
    fails(me, "CREATE VIEW leak AS SELECT * FROM secret", 1142, "SELECT_PRIV", f"{db}.secret")
    run(me, "CREATE VIEW mine AS SELECT word FROM v")  # a view of a view it may read
    run(conn, f"GRANT SELECT_PRIV ON {db}.mine TO '{name}'@'%'")
    assert rows(me, "SELECT * FROM mine") == [("public",)]
    fails(me, "ALTER VIEW mine AS SELECT word FROM secret", 1142, f"{db}.secret")
    run(me, "DROP VIEW mine")
    run(conn, f"REVOKE SELECT_PRIV ON {db}.v FROM '{name}'@'%'")
    fails(me, "SELECT * FROM v", 1142, f"{db}.v")


def test_the_sandbox_covers_view_definitions(conn: Conn, db: str) -> None:
    for sql in ("CREATE VIEW f AS SELECT * FROM read_csv('/etc/passwd')",
                "CREATE VIEW f AS SELECT * FROM (SELECT * FROM read_text('/etc/passwd')) x",
                "CREATE VIEW f AS SELECT current_setting('home_directory') AS h",
                "CREATE VIEW f AS SELECT * FROM duckdb_settings()"):
        fails(conn, sql, 1227, "is not allowed")
    assert rows(conn, "SHOW TABLES") == []


def test_a_stored_definition_is_checked_again_when_read() -> None:
    """A definition that names a file function (one written by an older server, or a forged command)
    is refused when a query expands it, before anything runs."""
    assert view_body("SELECT k FROM `internal`.`d`.`t`") is not None
    for definition in ("SELECT * FROM read_csv('/etc/passwd')",
                       "SELECT * FROM `internal`.`d`.`t` WHERE k IN (SELECT 1 FROM read_parquet('x'))",
                       "WITH x AS (SELECT getenv('HOME') AS h) SELECT * FROM x"):
        with pytest.raises(SandboxViolation):
            view_body(definition)


def test_dropping_the_database_drops_its_views(conn: Conn) -> None:
    name = f"t_{uuid.uuid4().hex[:10]}"
    run(conn, f"CREATE DATABASE {name}")
    run(conn, f"CREATE TABLE {name}.t (k1 INT) {TABLE}")
    run(conn, f"CREATE VIEW {name}.v AS SELECT * FROM {name}.t")
    run(conn, f"DROP DATABASE {name} FORCE")
    run(conn, f"CREATE DATABASE {name}")
    try:
        assert rows(conn, f"SHOW TABLES FROM {name}") == []
        run(conn, f"CREATE VIEW {name}.v AS SELECT 1 AS one")
        assert rows(conn, f"SELECT * FROM {name}.v") == [(1,)]
    finally:
        run(conn, f"DROP DATABASE {name} FORCE")
