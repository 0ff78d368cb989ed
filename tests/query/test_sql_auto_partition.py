"""Doris 2.1 AUTO PARTITION: a load that meets a value no partition holds creates the partition in
its own commit — atomically (a read sees both or neither, time travel included) and once, however
many loads race for it. Expected rows and counts from Doris' regression suite
regression-test/suites/partition_p0/auto_partition/test_auto_range_partition.groovy (and its .out)."""

from __future__ import annotations

import threading
import time

import pymysql

from tests.query.routine_load_kit import kafka_source, new_topic, produce, show, wait_for
from tests.query.sqlkit import connect, fails, rows, run, scalar

_PROPS = 'PROPERTIES ("replication_allocation" = "tag.location.default: 1")'


def _names(conn: pymysql.connections.Connection, table: str) -> list[str]:
    return [r[1] for r in rows(conn, f"SHOW PARTITIONS FROM {table}")]


def _now(conn: pymysql.connections.Connection) -> str:
    time.sleep(0.05)
    instant = str(scalar(conn, "SELECT DATE_FORMAT(NOW(6), '%Y-%m-%d %H:%i:%s.%f')"))
    time.sleep(0.05)
    return instant


def test_auto_range_by_day_and_month(conn: pymysql.connections.Connection, db: str) -> None:
    # test_auto_range_partition.groovy: range_table1 (day) and range_table_date (month).
    run(conn, f'''CREATE TABLE `range_table1` (`TIME_STAMP` datetimev2 NOT NULL COMMENT '采集日期')
        DUPLICATE KEY(`TIME_STAMP`) auto partition by range (date_trunc(`TIME_STAMP`, 'day')) ()
        DISTRIBUTED BY HASH(`TIME_STAMP`) BUCKETS 10 {_PROPS}''')
    days = [f"2022-12-{d}" for d in range(14, 21)] + [f"2122-12-{d}" for d in range(14, 21)]
    run(conn, "insert into range_table1 values " + ", ".join(f"('{d}')" for d in days[:7]))
    run(conn, "insert into range_table1 values " + ", ".join(f"('{d}')" for d in days[7:]))
    assert [str(r[0]) for r in rows(conn, "select * from range_table1 order by TIME_STAMP")] == [
        f"{d} 00:00:00" for d in days]
    assert rows(conn, "select count(*) from range_table1 WHERE TIME_STAMP > '2022-12-15'") == [(12,)]
    assert _names(conn, "range_table1")[:2] == ["p20221214000000", "p20221215000000"]
    assert len(_names(conn, "range_table1")) == 14

    run(conn, f'''CREATE TABLE `range_table_date` (`TIME_STAMP` datev2 NOT NULL) ENGINE=OLAP
        DUPLICATE KEY(`TIME_STAMP`) COMMENT 'OLAP' auto partition by range (date_trunc(`TIME_STAMP`, 'month')) ()
        DISTRIBUTED BY HASH(`TIME_STAMP`) BUCKETS 10 {_PROPS}''')
    run(conn, "insert into range_table_date values ('2022-11-14'), ('2022-12-15'), ('2022-12-16'), ('2022-12-17'), "
              "('2022-05-18'), ('2022-12-19'), ('2022-12-20')")
    assert sorted(_names(conn, "range_table_date")) == ["p20220501000000", "p20221101000000", "p20221201000000"]
    assert [str(r[0]) for r in rows(conn, "select * from range_table_date WHERE TIME_STAMP > '2022-12-15' "
                                          "order by TIME_STAMP")] == ["2022-12-16", "2022-12-17", "2022-12-19",
                                                                      "2022-12-20"]
    ddl = rows(conn, "SHOW CREATE TABLE range_table_date")[0][1]
    assert "AUTO PARTITION BY RANGE (date_trunc(`time_stamp`, 'month'))" in ddl
    assert 'PARTITION p20221201000000 VALUES [("2022-12-01"), ("2023-01-01"))' in ddl
    run(conn, ddl.replace("CREATE TABLE `range_table_date`", "CREATE TABLE `replayed`", 1))
    assert _names(conn, "replayed") == _names(conn, "range_table_date")
    run(conn, "INSERT INTO replayed VALUES ('2030-02-03')")
    assert "p20300201000000" in _names(conn, "replayed")


def test_auto_range_week_quarter_and_bounds(conn: pymysql.connections.Connection, db: str) -> None:
    # test_auto_range_partition.groovy: week_range (1 partition), quarter_range (2), right_bound (2).
    for table, unit, values, count in (("week_range", "week", "(20240408), (20240409)", 1),
                                       ("quarter_range", "quarter", "(20240102), (20240330), (20241001), (20241231)",
                                        2)):
        run(conn, f'''CREATE TABLE `{table}` (`TIME_STAMP` datev2 NOT NULL) DUPLICATE KEY(`TIME_STAMP`)
            auto partition by range (date_trunc(`TIME_STAMP`, '{unit}')) () DISTRIBUTED BY HASH(`TIME_STAMP`)
            BUCKETS 10 {_PROPS}''')
        run(conn, f"insert into {table} values {values}")
        assert len(_names(conn, table)) == count, _names(conn, table)
    assert _names(conn, "week_range") == ["p20240408000000"]
    run(conn, '''create table right_bound(k0 datetime(6) not null) auto partition by range (date_trunc(k0, 'second'))
        (partition pX values less than ("1970-01-01")) DISTRIBUTED BY HASH(`k0`) BUCKETS auto
        properties("replication_num" = "1")''')
    run(conn, "insert into right_bound values ('9999-12-31 23:59:59')")
    run(conn, "insert into right_bound values ('9999-12-31 23:59:59.999999')")
    assert len(_names(conn, "right_bound")) == 2
    assert rows(conn, "select count(*) from right_bound") == [(2,)]
    # A value inside a partition the table already has goes there; none is created.
    run(conn, "insert into right_bound values ('1960-01-01 00:00:00')")
    assert rows(conn, "select count(*) from right_bound partition pX") == [(1,)]


def test_auto_range_refusals(conn: pymysql.connections.Connection, db: str) -> None:
    fails(conn, f'''CREATE TABLE bad (DATE_ID BIGINT NOT NULL) AUTO PARTITION BY RANGE (date_trunc(DATE_ID, 'year'))()
        DISTRIBUTED BY HASH(DATE_ID) BUCKETS AUTO {_PROPS}''', 1210, "DATE or DATETIME")
    fails(conn, f'''CREATE TABLE bad (k DATE NOT NULL) AUTO PARTITION BY RANGE (date_trunc(k, 'hour'))()
        DISTRIBUTED BY HASH(k) BUCKETS AUTO {_PROPS}''', 1210, "DATE column")
    fails(conn, f'''CREATE TABLE bad (k DATE NOT NULL) AUTO PARTITION BY RANGE (date_trunc(k, 'yeear'))()
        DISTRIBUTED BY HASH(k) {_PROPS}''', 1064, "yeear")
    fails(conn, f'''CREATE TABLE bad (k INT NOT NULL) AUTO PARTITION BY LIST (k) (PARTITION p_rest)
        DISTRIBUTED BY HASH(k) {_PROPS}''', 1210, "DEFAULT")


def test_auto_list_partition(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f'''CREATE TABLE l (city VARCHAR(20) NOT NULL, v INT) DUPLICATE KEY(city)
        AUTO PARTITION BY LIST (city) (PARTITION p_known VALUES IN ("Paris")) DISTRIBUTED BY HASH(city) {_PROPS}''')
    run(conn, "INSERT INTO l VALUES ('Beijing', 1), ('Paris', 2), ('Beijing', 3), ('Shang Hai', 4)")
    assert _names(conn, "l") == ["p_known", "pBeijing7", "pShang20Hai9"]
    assert rows(conn, "SELECT v FROM l PARTITION pBeijing7 ORDER BY v") == [(1,), (3,)]
    assert rows(conn, "SELECT v FROM l PARTITION p_known") == [(2,)]
    ddl = rows(conn, "SHOW CREATE TABLE l")[0][1]
    assert "AUTO PARTITION BY LIST (`city`)" in ddl and 'PARTITION pBeijing7 VALUES IN (("Beijing"))' in ddl


def test_auto_partition_is_atomic_with_its_rows(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, '''CREATE TABLE t (d DATE NOT NULL, v INT) DUPLICATE KEY(d) AUTO PARTITION BY RANGE (date_trunc(d, 'day'))
        () DISTRIBUTED BY HASH(d) BUCKETS 2 PROPERTIES ("replication_num" = "1", "enable_time_travel" = "true")''')
    run(conn, "INSERT INTO t VALUES ('2023-04-16', 1)")
    before = _now(conn)
    run(conn, "INSERT INTO t VALUES ('2023-04-17', 2), ('2023-04-16', 3)")
    # The commit that created p20230417000000 is one event: the partition and its rows share one instant.
    # No separate partition commit: the history is two loads, the second naming the new partition.
    history = rows(conn, "SHOW TIME TRAVEL ON t")
    assert [(r[4], r[6]) for r in history] == [(1, "load"), (2, "load")]
    assert "p20230417000000" in history[1][9] and "p20230417000000" not in history[0][9]
    fails(conn, "SELECT v FROM t PARTITION p20230417000000 FOR VERSION AS OF 1", 1735)
    assert rows(conn, "SELECT v FROM t PARTITION p20230417000000 FOR VERSION AS OF 2") == [(2,)]
    just_before = rows(conn, f"SELECT TIMESTAMPADD(MICROSECOND, -1000, '{history[1][5]}')")[0][0]
    assert rows(conn, f"SELECT v FROM t FOR TIME AS OF '{just_before}' ORDER BY v") == [(1,)]
    assert rows(conn, f"SELECT v FROM t FOR TIME AS OF '{before}' ORDER BY v") == [(1,)]
    fails(conn, f"SELECT v FROM t PARTITION p20230417000000 FOR TIME AS OF '{before}'", 1735)
    assert rows(conn, "SELECT v FROM t PARTITION p20230417000000") == [(2,)]
    run(conn, "ADMIN COMPACT TABLE t WHERE TYPE = 'BASE'")
    assert rows(conn, f"SELECT v FROM t FOR TIME AS OF '{before}' ORDER BY v") == [(1,)]
    assert rows(conn, "SELECT v FROM t ORDER BY v") == [(1,), (2,), (3,)]


def test_concurrent_loads_create_a_partition_once(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f'''CREATE TABLE c (d DATE NOT NULL, v INT) DUPLICATE KEY(d)
        AUTO PARTITION BY RANGE (date_trunc(d, 'day')) () DISTRIBUTED BY HASH(d) BUCKETS 1 {_PROPS}''')
    errors: list[BaseException] = []

    def load(worker: int) -> None:
        try:
            own = connect(db)
            try:
                for i in range(3):
                    # Every load meets the same new day, and one of its own.
                    run(own, f"INSERT INTO c VALUES ('2024-01-01', {worker * 10 + i}), "
                             f"('2024-02-{worker + 1:02d}', {worker * 10 + i})")
            finally:
                own.close()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=load, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    names = _names(conn, "c")
    assert sorted(names) == ["p20240101000000"] + [f"p202402{d:02d}000000" for d in range(1, 5)]
    assert rows(conn, "SELECT count(*) FROM c PARTITION p20240101000000") == [(12,)]
    assert rows(conn, "SELECT count(*) FROM c") == [(24,)]


def test_routine_load_creates_partitions(conn: pymysql.connections.Connection, db: str) -> None:
    # A routine load batch brings the partitions its rows need in its own commit, as an INSERT does;
    # a row whose value is NULL gets none and is an error row.
    run(conn, f'''CREATE TABLE r (d DATETIME NOT NULL, city VARCHAR(20) NULL, v INT) DUPLICATE KEY(d)
        AUTO PARTITION BY LIST (city) () DISTRIBUTED BY HASH(d) BUCKETS 1 {_PROPS}''')
    topic = new_topic()
    produce(topic, ["2024-01-01 10:00:00|Oslo|1", "2024-01-02 10:00:00|Rome|2", "2024-01-03 10:00:00|Oslo|3",
                    "2024-01-04 10:00:00|\\N|4"])
    run(conn, f'CREATE ROUTINE LOAD j ON r COLUMNS TERMINATED BY "|", COLUMNS(d, city, v) '
              f'PROPERTIES ("max_batch_interval" = "0.2", "max_error_number" = "5") {kafka_source(topic)}')
    wait_for(lambda: show(conn, "j")["Statistic"]["totalRows"] >= 4, "four records")
    assert _names(conn, "r") == ["pOslo4", "pRome4"]
    assert rows(conn, "SELECT v FROM r PARTITION pOslo4 ORDER BY v") == [(1,), (3,)]
    stats = show(conn, "j")["Statistic"]
    assert (stats["loadedRows"], stats["errorRows"]) == (3, 1)
    run(conn, "STOP ROUTINE LOAD FOR j")


def test_auto_list_with_null_partitions(conn: pymysql.connections.Connection, db: str) -> None:
    # regression-test/suites/partition_p0/auto_partition/test_auto_list_partition_null.groovy
    run(conn, '''CREATE TABLE list_table_null (id int null, k largeint null) AUTO PARTITION BY LIST (`id`, `k`) ()
        DISTRIBUTED BY HASH(`k`) BUCKETS 16 PROPERTIES ("replication_allocation" = "tag.location.default: 1")''')
    for name, value in (("p1", '(NULL, "1")'), ("p2", '("1", NULL)'), ("p3", "(NULL, NULL)")):
        run(conn, f'ALTER TABLE `list_table_null` ADD PARTITION `{name}` VALUES IN ({value}) ("version_info" = "1") '
                  f'DISTRIBUTED BY HASH(`k`) BUCKETS 16')
    fails(conn, 'ALTER TABLE `list_table_null` ADD PARTITION `p4` VALUES IN ((NULL, MAXVALUE))', 1064)
    ddl = rows(conn, "show create table list_table_null")[0][1]
    for text in ("PARTITION p3 VALUES IN ((NULL, NULL))", 'PARTITION p1 VALUES IN ((NULL, "1"))',
                 'PARTITION p2 VALUES IN (("1", NULL))'):
        assert text in ddl
    run(conn, 'insert into list_table_null values (null, "1"), ("1", null), (null, null), ("2", "2")')
    # data/partition_p0/auto_partition/test_auto_list_partition_null.out: select_all, select_with_predicate.
    assert rows(conn, "select * from list_table_null order by id, k") == [(None, None), (None, 1), (1, None), (2, 2)]
    assert rows(conn, "select * from list_table_null where id = 2 and k = 2 order by id, k") == [(2, 2)]
    assert rows(conn, "select id, k from list_table_null partition p3") == [(None, None)]
    assert _names(conn, "list_table_null") == ["p1", "p2", "p3", "p21" + "21"]
