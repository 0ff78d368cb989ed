"""The partition forms Doris users write: batch range partitions (FROM … TO … INTERVAL …), LIST
partitions holding NULL and a DEFAULT partition, `PARTITION p` / `PARTITIONS (…)` selections and
the compact date spelling '20221001'. Expected partition counts and rows are Doris' own, from its
regression suites (paths cited per test)."""

from __future__ import annotations

import time

import pymysql

from tests.query.sqlkit import fails, rows, run, scalar

_DIST = 'DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ("replication_num" = "1")'


def _partitions(conn: pymysql.connections.Connection, table: str) -> list[tuple[str, str]]:
    """(name, Range) of each partition, in SHOW PARTITIONS order."""
    return [(r[1], r[6]) for r in rows(conn, f"SHOW PARTITIONS FROM {table}")]


def _replays(conn: pymysql.connections.Connection, table: str) -> None:
    """SHOW CREATE TABLE's text creates the same table again (same partitions and ranges)."""
    ddl = rows(conn, f"SHOW CREATE TABLE {table}")[0][1]
    copy = f"{table}_replayed"
    run(conn, ddl.replace(f"CREATE TABLE `{table}`", f"CREATE TABLE `{copy}`", 1))
    assert _partitions(conn, copy) == _partitions(conn, table)
    assert rows(conn, f"SHOW CREATE TABLE {copy}")[0][1] == ddl.replace(f"`{table}`", f"`{copy}`", 1)


# -- batch range partitions ---------------------------------------------------------------------


def test_batch_partitions_have_doris_counts(conn: pymysql.connections.Connection, db: str) -> None:
    # regression-test/suites/partition_p0/multi_partition/test_multi_partition.groovy: multi_par1 (55),
    # multi_par2 (48, hours written 'yyyy-MM-dd HH' and in full), multi_par8 (16), multi_par9 (45).
    cases = {
        "m1": ('k DATE NOT NULL', '''FROM ("2000-11-14") TO ("2021-11-14") INTERVAL 1 YEAR,
              FROM ("2021-11-14") TO ("2022-11-14") INTERVAL 1 MONTH,
              FROM ("2022-11-14") TO ("2023-01-03") INTERVAL 1 WEEK,
              FROM ("2023-01-03") TO ("2023-01-14") INTERVAL 1 DAY,
              PARTITION p_20230114 VALUES [('2023-01-14'), ('2023-01-15'))''', 55),
        "m2": ('k DATETIME NOT NULL', '''FROM ("2022-12-01 02") TO ("2022-12-02 02") INTERVAL 1 HOUR,
              FROM ("2022-12-02 02:00:00") TO ("2022-12-03 02:00:00") INTERVAL 1 HOUR''', 48),
        "m8": ('k DATE NOT NULL', 'FROM ("2022-11-02") TO ("2022-12-03") INTERVAL 2 DAY', 16),
        "m9": ('k INT NOT NULL', 'FROM (1000) TO (10000) INTERVAL 200', 45),
    }
    for table, (column, partitions, count) in cases.items():
        run(conn, f"CREATE TABLE {table} ({column}, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) ({partitions}) "
                  f"{_DIST}")
        names = [name for name, _ in _partitions(conn, table)]
        assert len(names) == count, (table, names)
        assert all(name.startswith("p_") for name in names)


def test_batch_partition_names_and_ranges(conn: pymysql.connections.Connection, db: str) -> None:
    # Names and bounds as Doris' MultiPartitionDesc makes them: DAY p_yyyyMMdd, WEEK p_yyyy_ww (weeks from
    # Monday), MONTH p_yyyyMM, YEAR p_yyyy, the last partition of each ending at TO (DAY keeps its interval).
    run(conn, f'''CREATE TABLE b (k DATE NOT NULL, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) (
        FROM ("2023-04-16") TO ("2023-04-20") INTERVAL 2 DAY,
        PARTITION p_may VALUES [("20230501"), ("2023-06-01")),
        FROM ("2023-06-15") TO ("2023-08-10") INTERVAL 1 MONTH,
        FROM ("2023-09-01") TO ("2023-09-12") INTERVAL 1 WEEK,
        FROM ("2024") TO ("2025-06-01") INTERVAL 1 YEAR) {_DIST}''')
    ranges = {name: key_range for name, key_range in _partitions(conn, "b")}
    assert list(ranges) == ["p_20230416", "p_20230418", "p_may", "p_202306", "p_202307", "p_202308",
                            "p_2023_36", "p_2023_37", "p_2023_38", "p_2024", "p_2025"]

    def bounds(name: str) -> tuple[str, str]:
        lower, upper = ranges[name].split("..")
        return lower.split("keys: [")[1].split("]")[0], upper.split("keys: [")[1].split("]")[0]

    assert bounds("p_20230418") == ("2023-04-18", "2023-04-20")
    assert bounds("p_may") == ("2023-05-01", "2023-06-01")  # '20230501' is the compact spelling
    assert bounds("p_202306") == ("2023-06-15", "2023-07-01")
    assert bounds("p_202308") == ("2023-08-01", "2023-08-10")
    # 2023-01-01 is a Sunday, alone in week 1; Friday 2023-09-01 is in week 36.
    assert bounds("p_2023_36") == ("2023-09-01", "2023-09-04")
    assert bounds("p_2023_38") == ("2023-09-11", "2023-09-12")
    assert bounds("p_2025") == ("2025-01-01", "2025-06-01")
    run(conn, "INSERT INTO b VALUES ('2023-04-19', 1), ('20230502', 2), ('2023-09-05', 3), ('2024-12-31', 4)")
    assert rows(conn, "SELECT v FROM b PARTITION p_20230418") == [(1,)]
    assert rows(conn, "SELECT v FROM b PARTITIONS (p_may, p_2023_37, p_2024) ORDER BY v") == [(2,), (3,), (4,)]
    fails(conn, "INSERT INTO b VALUES ('2023-04-20', 5)", 1526)
    _replays(conn, "b")


def test_batch_integer_partitions_and_bad_batches(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE n (k INT NOT NULL, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) "
              f"(FROM (1) TO (100) INTERVAL 30, PARTITION p_top VALUES LESS THAN (MAXVALUE)) {_DIST}")
    assert [name for name, _ in _partitions(conn, "n")] == ["p_1_31", "p_31_61", "p_61_91", "p_91_100", "p_top"]
    run(conn, "INSERT INTO n VALUES (1, 1), (95, 2), (100, 3)")
    assert rows(conn, "SELECT v FROM n PARTITION p_91_100") == [(2,)]
    assert rows(conn, "SELECT v FROM n PARTITION p_top") == [(3,)]
    _replays(conn, "n")
    # test_multi_partition.groovy: FROM above TO is refused.
    fails(conn, f"CREATE TABLE bad (k INT NOT NULL) DUPLICATE KEY(k) PARTITION BY RANGE(k) "
                f"(FROM (2000) TO (1001) INTERVAL 200) {_DIST}", 1210, "From value should less then TO")
    fails(conn, f"CREATE TABLE bad (k INT NOT NULL) DUPLICATE KEY(k) PARTITION BY RANGE(k) "
                f"(FROM (1) TO (10) INTERVAL 1 DAY) {_DIST}", 1210, "DATE or DATETIME")
    fails(conn, f"CREATE TABLE bad (k DATE NOT NULL) DUPLICATE KEY(k) PARTITION BY LIST(k) "
                f"(FROM ('2023-01-01') TO ('2023-02-01') INTERVAL 1 DAY) {_DIST}", 1064)
    fails(conn, "ALTER TABLE n ADD PARTITIONS FROM (200) TO (300) INTERVAL 10", 1235)


# -- LIST partitions: NULL and DEFAULT -----------------------------------------------------------


def test_list_default_partition_takes_the_rest(conn: pymysql.connections.Connection, db: str) -> None:
    # regression-test/suites/partition_p0/list_partition/test_list_default_partition.groovy
    # (data/partition_p0/list_partition/test_list_default_partition.out).
    table = '''CREATE TABLE IF NOT EXISTS list_default_par (k1 tinyint NOT NULL, k2 smallint NOT NULL,
        k3 int NOT NULL, k4 bigint NOT NULL, k5 decimal(9, 3) NOT NULL, k8 double max NOT NULL,
        k9 float sum NOT NULL) AGGREGATE KEY(k1,k2,k3,k4,k5) PARTITION BY LIST(k1) (
        PARTITION p1 VALUES IN ("1","2","3","4"), PARTITION p2 VALUES IN ("5","6","7","8") {default})
        DISTRIBUTED BY HASH(k1) BUCKETS 5 properties("replication_num" = "1")'''
    run(conn, table.format(default=", PARTITION p3"))
    for k1 in (1, 10, 11):
        run(conn, f"insert into list_default_par values ({k1},1,1,1,24453.325,1,1)")
    assert [r[0] for r in rows(conn, "select * from list_default_par order by k1")] == [1, 10, 11]
    assert len(rows(conn, "show partitions from list_default_par")) == 3
    assert [r[0] for r in rows(conn, "select * from list_default_par partition p3 order by k1")] == [10, 11]
    fails(conn, "alter table list_default_par add partition p5", 1210, "DEFAULT")
    _replays(conn, "list_default_par")
    run(conn, "alter table list_default_par drop partition p3")
    run(conn, "drop table list_default_par")

    run(conn, table.format(default=""))
    fails(conn, "insert into list_default_par values (10,1,1,1,24453.325,1,1)", 1526)
    run(conn, "alter table list_default_par add partition p3")
    run(conn, "insert into list_default_par values (10,1,1,1,24453.325,1,1)")
    assert [r[0] for r in rows(conn, "select * from list_default_par partition p1 order by k1")] == []
    assert [r[0] for r in rows(conn, "select * from list_default_par partition p3 order by k1")] == [10]
    run(conn, "alter table list_default_par drop partition p3")
    assert rows(conn, "select * from list_default_par order by k1") == []
    fails(conn, "insert into list_default_par values (10,1,1,1,24453.325,1,1)", 1526)


def test_default_partition_show_create(conn: pymysql.connections.Connection, db: str) -> None:
    # regression-test/suites/partition_p0/list_partition/test_list_default_partition_show_create.groovy
    run(conn, '''CREATE TABLE IF NOT EXISTS list_default (k1 int NOT NULL, k2 int NOT NULL) UNIQUE KEY(k1)
        PARTITION BY LIST(k1) (PARTITION p1) DISTRIBUTED BY HASH(k1) BUCKETS 5 properties("replication_num" = "1")''')
    assert "(PARTITION p1)" in rows(conn, "show create table list_default")[0][1]
    run(conn, "INSERT INTO list_default VALUES (1, 1), (-7, 2)")
    assert rows(conn, "SELECT k1 FROM list_default PARTITION p1 ORDER BY k1") == [(-7,), (1,)]
    _replays(conn, "list_default")


def test_list_null_partition(conn: pymysql.connections.Connection, db: str) -> None:
    # regression-test/suites/partition_p0/test_null_partition.groovy: NULL only on nullable columns,
    # errors naming the column's index.
    fails(conn, '''CREATE TABLE test_null (k0 BIGINT NOT NULL, k1 BIGINT NOT NULL) partition by list (k0, k1)
        (PARTITION `pX` values in ((NULL, 1))) DISTRIBUTED BY HASH(k0)''', 1210,
          "Can't have null partition is for NOT NULL partition column in partition expr's index 0")
    fails(conn, '''CREATE TABLE test_null (k0 BIGINT NULL, k1 BIGINT NOT NULL) partition by list (k0, k1)
        (PARTITION `pX` values in ((NULL, 1), (NULL, 2), (NULL, 3), (4, NULL))) DISTRIBUTED BY HASH(k0)''', 1210,
          "partition expr's index 1")
    run(conn, '''CREATE TABLE OK (k0 BIGINT NULL, k1 BIGINT NOT NULL) partition by list (k0, k1)
        (PARTITION `pX` values in ((NULL, 1), (NULL, 2), (NULL, 3)), PARTITION pY values in ((4, 5)))
        DISTRIBUTED BY HASH(k1) PROPERTIES ("replication_num" = "1")''')
    run(conn, "INSERT INTO OK VALUES (NULL, 2), (4, 5)")
    assert rows(conn, "SELECT k0, k1 FROM OK PARTITION pX") == [(None, 2)]
    fails(conn, "INSERT INTO OK VALUES (NULL, 4)", 1526)
    _replays(conn, "OK")

    run(conn, f'''CREATE TABLE l (k INT NULL, v INT) DUPLICATE KEY(k) PARTITION BY LIST(k) (
        PARTITION p1 VALUES IN ("1", "2"), PARTITION p_null VALUES IN ((NULL)), PARTITION p_default) {_DIST}''')
    run(conn, "INSERT INTO l VALUES (1, 10), (NULL, 20), (7, 30), (2, 40)")
    assert rows(conn, "SELECT v FROM l PARTITION p_null") == [(20,)]
    assert rows(conn, "SELECT v FROM l PARTITION p_default") == [(30,)]
    assert rows(conn, "SELECT v FROM l PARTITIONS (p1) ORDER BY v") == [(10,), (40,)]
    ranges = dict(_partitions(conn, "l"))
    assert ranges["p_null"] == "[types: [INT]; keys: [NULL]; ]"
    ddl = rows(conn, "SHOW CREATE TABLE l")[0][1]
    assert "PARTITION p_null VALUES IN ((NULL))" in ddl and "PARTITION p_default)" in ddl
    _replays(conn, "l")
    fails(conn, "ALTER TABLE l ADD PARTITION p_null2 VALUES IN (NULL)", 1210, "NULL", "p_null")
    fails(conn, f'''CREATE TABLE twice (k INT NULL) DUPLICATE KEY(k) PARTITION BY LIST(k) (
        PARTITION a VALUES IN ((NULL), ("1")), PARTITION b VALUES IN (NULL)) {_DIST}''', 1210, "(NULL)", "partition a")
    # An INSERT naming partitions routes only to those: the DEFAULT one takes nothing it was not named for.
    fails(conn, "INSERT INTO l PARTITION (p1) VALUES (7, 50)", 1526)
    run(conn, "INSERT INTO l PARTITION (p_default) VALUES (7, 50)")
    assert rows(conn, "SELECT v FROM l PARTITION p_default ORDER BY v") == [(30,), (50,)]


def test_default_partition_keeps_time_travel(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f'''CREATE TABLE tt (k INT NULL, v INT) DUPLICATE KEY(k) PARTITION BY LIST(k) (
        PARTITION p1 VALUES IN (1)) {_DIST[:-1]}, "enable_time_travel" = "true")''')
    run(conn, "INSERT INTO tt VALUES (1, 1)")
    time.sleep(0.05)
    before = scalar(conn, "SELECT DATE_FORMAT(NOW(6), '%Y-%m-%d %H:%i:%s.%f')")
    time.sleep(0.05)
    run(conn, "ALTER TABLE tt ADD PARTITION p_rest")
    run(conn, "INSERT INTO tt VALUES (NULL, 2), (9, 3)")
    assert rows(conn, "SELECT v FROM tt ORDER BY v") == [(1,), (2,), (3,)]
    assert rows(conn, f"SELECT v FROM tt FOR TIME AS OF '{before}' ORDER BY v") == [(1,)]
    fails(conn, f"SELECT v FROM tt PARTITION p_rest FOR TIME AS OF '{before}'", 1735)
    # Doris' own order, the selection after the clause: the partition, not an alias named PARTITION.
    now = scalar(conn, "SELECT DATE_FORMAT(NOW(6), '%Y-%m-%d %H:%i:%s.%f')")
    assert rows(conn, f"SELECT v FROM tt FOR TIME AS OF '{now}' PARTITION (p_rest) ORDER BY v") == [(2,), (3,)]
    assert rows(conn, f"SELECT x.v FROM tt FOR TIME AS OF '{now}' PARTITION p1 x") == [(1,)]


# -- partition selections and compact dates -----------------------------------------------------


def test_partition_selection_spellings(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f'''CREATE TABLE s (k INT NOT NULL, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) (
        PARTITION p1 VALUES LESS THAN (10), PARTITION p2 VALUES LESS THAN (20), PARTITION p3 VALUES LESS THAN (30))
        {_DIST}''')
    run(conn, "INSERT INTO s VALUES (1, 1), (11, 2), (21, 3)")
    assert rows(conn, "SELECT v FROM s PARTITION p2") == [(2,)]
    assert rows(conn, "SELECT x.v FROM s PARTITION p2 x") == [(2,)]
    assert rows(conn, "SELECT v FROM s PARTITION p3 AS y WHERE y.v > 0") == [(3,)]
    assert rows(conn, "SELECT v FROM s PARTITIONS (p1, p3) ORDER BY v") == [(1,), (3,)]
    assert rows(conn, "SELECT v FROM s PARTITION (p1, p2) ORDER BY v") == [(1,), (2,)]
    assert rows(conn, "SELECT a.v, b.v FROM s PARTITION p1 a JOIN s PARTITIONS (p3) b ON true") == [(1, 3)]
    fails(conn, "SELECT v FROM s PARTITION nope", 1735, "nope")
    fails(conn, "SELECT v FROM s TEMPORARY PARTITION (p1)", 1235, "TEMPORARY PARTITION")
    # A table aliased `partitions` is still an alias.
    assert rows(conn, "SELECT partitions.v FROM s AS partitions WHERE partitions.k = 1") == [(1,)]


def test_compact_date_literals(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f'''CREATE TABLE d (k DATE NOT NULL, t DATETIME, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) (
        PARTITION p202210 VALUES [("20221001"), ("20221101"))) {_DIST}''')
    run(conn, "INSERT INTO d VALUES ('20221001', '20221001123456', 1), ('2022-10-31', '20221031', 2)")
    assert rows(conn, "SELECT CAST(k AS CHAR), CAST(t AS CHAR), v FROM d ORDER BY v") == [
        ("2022-10-01", "2022-10-01 12:34:56", 1), ("2022-10-31", "2022-10-31 00:00:00", 2)]
    assert 'VALUES [("2022-10-01"), ("2022-11-01"))' in rows(conn, "SHOW CREATE TABLE d")[0][1]
    fails(conn, "INSERT INTO d VALUES ('20221301', NULL, 3)", 1366)
    fails(conn, f"CREATE TABLE bad (k DATE NOT NULL) DUPLICATE KEY(k) PARTITION BY RANGE(k) "
                f"(PARTITION p VALUES LESS THAN ('20221301')) {_DIST}", 1210, "Invalid DATE value '20221301'")
