"""ALTER TABLE a REPLACE WITH TABLE b through the SQL port: swap and drop, what dbt-doris sends, and
time travel across a replace (a name read at an instant reads the table that had the name then).

`test_doris_replace_suite` follows Doris' regression suite
regression-test/suites/schema_change_p0/test_alter_table_replace.groovy (expected rows from
regression-test/data/schema_change_p0/test_alter_table_replace.out), without its HLL/BITMAP columns
and temporary partitions, which Strata does not have."""

from __future__ import annotations

from datetime import date

import pymysql

from tests.query.sqlkit import fails, rows, run
from tests.query.test_sql_time_travel import TT, instant

NO_SUCH_TABLE = 1146
NOT_SUPPORTED = 1235


def _agg_table(conn: pymysql.connections.Connection, name: str, properties: str = "") -> None:
    run(conn, f"CREATE TABLE {name} (user_id LARGEINT NOT NULL, `date` DATE NOT NULL, city VARCHAR(20), "
              "age SMALLINT, sex TINYINT, cost BIGINT SUM DEFAULT \"0\", max_dwell_time INT MAX DEFAULT \"0\", "
              "min_dwell_time INT MIN DEFAULT \"99999\") AGGREGATE KEY(user_id, `date`, city, age, sex) "
              "PARTITION BY RANGE(`date`) (PARTITION p201701 VALUES LESS THAN (\"2017-02-01\"), "
              "PARTITION p201702 VALUES LESS THAN (\"2017-03-01\"), PARTITION p201703 VALUES LESS THAN "
              f"(\"2017-04-01\")) DISTRIBUTED BY HASH(user_id) BUCKETS 1 {properties}")


def _ids(conn: pymysql.connections.Connection, table: str) -> list[int]:
    return [int(r[0]) for r in rows(conn, f"SELECT user_id FROM {table} ORDER BY user_id")]


def test_doris_replace_suite(conn: pymysql.connections.Connection, db: str) -> None:
    a, b = "test_alter_table_replace_a", "test_alter_table_replace_b"
    _agg_table(conn, a)
    _agg_table(conn, b)
    run(conn, f"INSERT INTO {a} VALUES (1, '2017-01-01', 'Beijing', 10, 1, 1, 30, 20), "
              "(2, '2017-02-01', 'Beijing', 10, 1, 1, 31, 19), (3, '2017-03-01', 'Beijing', 10, 1, 1, 31, 21)")
    run(conn, f"INSERT INTO {b} VALUES (4, '2017-01-01', 'Beijing', 10, 1, 1, 30, 20), "
              "(5, '2017-02-01', 'Beijing', 10, 1, 1, 31, 19), (6, '2017-03-01', 'Beijing', 10, 1, 1, 31, 21)")
    assert _ids(conn, a) == [1, 2, 3] and _ids(conn, b) == [4, 5, 6]
    run(conn, f"ALTER TABLE {a} REPLACE WITH TABLE {b} PROPERTIES('swap' = 'true')")
    assert _ids(conn, a) == [4, 5, 6] and _ids(conn, b) == [1, 2, 3]
    assert rows(conn, f"SELECT * FROM {a} WHERE user_id = 4") == [(4, date(2017, 1, 1), "Beijing", 10, 1, 1, 30, 20)]
    run(conn, f"ALTER TABLE {a} REPLACE WITH TABLE {b} PROPERTIES('swap' = 'false')")
    assert _ids(conn, a) == [1, 2, 3]
    fails(conn, f"SELECT * FROM {b} ORDER BY user_id", NO_SUCH_TABLE, b)
    assert sorted(r[0] for r in rows(conn, "SHOW TABLES")) == [a]


def test_swap_is_the_default_and_writes_follow_the_names(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE x (k INT, v VARCHAR(10)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2")
    run(conn, "CREATE TABLE y (k INT, w INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO x VALUES (1, 'x1')")
    run(conn, "INSERT INTO y VALUES (2, 20)")
    run(conn, "ALTER TABLE x REPLACE WITH TABLE y")
    assert rows(conn, "SELECT * FROM x") == [(2, 20)]
    assert rows(conn, "SELECT * FROM y") == [(1, "x1")]
    run(conn, "INSERT INTO x VALUES (3, 30)")  # x is the Duplicate Key table now
    run(conn, "INSERT INTO y VALUES (1, 'y1')")
    assert rows(conn, "SELECT * FROM x ORDER BY k") == [(2, 20), (3, 30)]
    assert rows(conn, "SELECT * FROM y") == [(1, "y1")]
    assert "DUPLICATE KEY" in rows(conn, "SHOW CREATE TABLE x")[0][1]


def test_dbt_replace_without_swap_and_recover(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE m (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO m VALUES (1, 1)")
    run(conn, "CREATE TABLE m__dbt_tmp LIKE m")
    run(conn, "INSERT INTO m__dbt_tmp VALUES (2, 2)")
    run(conn, "ALTER TABLE m REPLACE WITH TABLE m__dbt_tmp PROPERTIES('swap'='False')")
    assert rows(conn, "SELECT * FROM m") == [(2, 2)]
    fails(conn, "SELECT * FROM m__dbt_tmp", NO_SUCH_TABLE)
    fails(conn, "RECOVER TABLE m", 1050, "already exists")  # the name is taken by the new table
    run(conn, "DROP TABLE m")
    run(conn, "RECOVER TABLE m")  # the newest dropped table of that name: the one just dropped
    assert rows(conn, "SELECT * FROM m") == [(2, 2)]


def test_errors(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE e1 (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    fails(conn, "ALTER TABLE e1 REPLACE WITH TABLE nope", NO_SUCH_TABLE, "nope")
    fails(conn, "ALTER TABLE e1 REPLACE WITH TABLE e1", 1210, "itself")
    fails(conn, "ALTER TABLE e1 REPLACE WITH TABLE e1 PROPERTIES('swap' = 'sometimes')", 1064, "swap")
    fails(conn, "ALTER TABLE e1 REPLACE PARTITION (p) WITH TEMPORARY PARTITION (tp)", NOT_SUPPORTED, "REPLACE")


def test_time_travel_follows_the_name_across_a_replace(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE a (k INT, v VARCHAR(10)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {TT}")
    run(conn, f"CREATE TABLE b (k INT, v VARCHAR(10)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {TT}")
    run(conn, "INSERT INTO a VALUES (1, 'a1')")
    run(conn, "INSERT INTO b VALUES (2, 'b1')")
    first = instant()
    run(conn, "INSERT INTO a VALUES (3, 'a2')")
    before_swap = instant()
    run(conn, "ALTER TABLE a REPLACE WITH TABLE b")  # swap: a is the old b, b the old a
    # FOR VERSION AS OF numbers the table's own commits: those made under the name b are refused.
    fails(conn, "SELECT * FROM a FOR VERSION AS OF 1", NOT_SUPPORTED, "REPLACE")
    run(conn, "INSERT INTO a VALUES (4, 'a3')")
    after_swap = instant()
    run(conn, "ALTER TABLE a REPLACE WITH TABLE b PROPERTIES ('swap' = 'false')")  # a is the first a again
    now = instant()

    def at(name: str, moment: str) -> list[str]:
        return [r[0] for r in rows(conn, f"SELECT v FROM {name} FOR TIME AS OF '{moment}' ORDER BY k")]

    expected_a = {first: ["a1"], before_swap: ["a1", "a2"], after_swap: ["b1", "a3"], now: ["a1", "a2"]}

    def check() -> None:
        for moment, want in expected_a.items():
            assert at("a", moment) == want, moment

    check()
    run(conn, "ADMIN COMPACT TABLE a WHERE TYPE = 'BASE'")
    check()
    assert rows(conn, "SELECT v FROM a ORDER BY k") == [("a1",), ("a2",)]
    # a is its first table again, and its first commit was made under the name a.
    assert rows(conn, "SELECT v FROM a FOR VERSION AS OF 1") == [("a1",)]
    fails(conn, f"RESTORE TABLE a TO TIME AS OF '{after_swap}'", NOT_SUPPORTED, "REPLACE")
    fails(conn, f"SELECT * FROM a@incr('startTimestamp'='{first}')", NOT_SUPPORTED, "REPLACE")
    run(conn, "INSERT INTO a VALUES (5, 'a4')")
    assert rows(conn, f"SELECT v, _change_type FROM a@incr('startTimestamp'='{now}')") == [("a4", "insert")]


def test_time_travel_of_a_replaced_name_whose_table_was_purged(conn: pymysql.connections.Connection,
                                                               db: str) -> None:
    run(conn, f"CREATE TABLE a (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    run(conn, f"CREATE TABLE b (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    run(conn, "INSERT INTO a VALUES (1)")
    run(conn, "INSERT INTO b VALUES (2)")
    before = instant()
    run(conn, "ALTER TABLE a REPLACE WITH TABLE b PROPERTIES ('swap' = 'false') FORCE")
    assert rows(conn, "SELECT k FROM a") == [(2,)]
    fails(conn, f"SELECT * FROM a FOR TIME AS OF '{before}'", 1210, "no longer kept")
    fails(conn, "RECOVER TABLE a", NO_SUCH_TABLE)  # FORCE: the replaced table is gone for good


def test_replace_needs_alter_on_both_tables(conn: pymysql.connections.Connection, db: str,
                                            user: tuple[str, str]) -> None:
    run(conn, "CREATE TABLE mine (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "CREATE TABLE theirs (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    name, password = user
    run(conn, f"GRANT ALTER_PRIV ON {db}.mine TO '{name}'@'%'")
    me = pymysql.connect(host=conn.host, port=conn.port, user=name, password=password, database=db,
                         autocommit=True)
    try:
        fails(me, "ALTER TABLE mine REPLACE WITH TABLE theirs", 1142, "ALTER_PRIV", f"{db}.theirs")
        run(conn, f"GRANT ALTER_PRIV ON {db}.theirs TO '{name}'@'%'")
        run(me, "ALTER TABLE mine REPLACE WITH TABLE theirs")
    finally:
        me.close()
