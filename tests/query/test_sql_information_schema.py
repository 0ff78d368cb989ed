"""information_schema through pymysql: MySQL's tables and columns (and Doris' rowsets), the shapes of the
metadata queries Connector/J and dbt send, and what each user may see."""

from __future__ import annotations

import pymysql

from tests.query.sqlkit import columns, fails, rows, run, values


def test_tables_and_columns(conn: pymysql.connections.Connection, db: str,
                            other: pymysql.connections.Connection) -> None:
    run(conn, 'CREATE TABLE d (k INT NOT NULL, v VARCHAR(7) DEFAULT "x") DUPLICATE KEY(k) COMMENT "dup t" '
              "DISTRIBUTED BY HASH(k) BUCKETS 2")
    run(conn, "CREATE TABLE a (k INT, s BIGINT SUM) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2")
    run(conn, "INSERT INTO d VALUES (1, 'a'), (2, 'b')")
    found = rows(other, f"SELECT TABLE_NAME, TABLE_TYPE, TABLE_ROWS, TABLE_COMMENT FROM information_schema.tables "
                        f"WHERE TABLE_SCHEMA = '{db}' ORDER BY TABLE_NAME")
    assert found == [("a", "BASE TABLE", 0, ""), ("d", "BASE TABLE", 2, "dup t")]
    cols = rows(other, f"SELECT TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, COLUMN_DEFAULT, IS_NULLABLE, DATA_TYPE, "
                       f"COLUMN_TYPE, COLUMN_KEY FROM information_schema.columns WHERE TABLE_SCHEMA = '{db}' "
                       f"ORDER BY TABLE_NAME, ORDINAL_POSITION")
    assert cols == [("a", "k", 1, None, "YES", "int", "int", "AGG"), ("a", "s", 2, None, "YES", "bigint", "bigint", ""),
                    ("d", "k", 1, None, "NO", "int", "int", "DUP"),
                    ("d", "v", 2, "x", "YES", "varchar", "varchar(7)", "")]
    run(conn, "ALTER TABLE d ADD COLUMN n INT")
    run(conn, "DROP TABLE a")
    assert rows(other, f"SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_SCHEMA = '{db}'") == [("d",)]
    assert rows(other, f"SELECT max(ORDINAL_POSITION) FROM information_schema.columns WHERE TABLE_SCHEMA = '{db}' "
                       "AND TABLE_NAME = 'd'") == [(3,)]
    assert (db,) in rows(other, "SELECT SCHEMA_NAME FROM information_schema.schemata")
    fails(other, "SELECT * FROM information_schema.no_such_view", 1146, "no_such_view")


def test_rowsets(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, """CREATE TABLE r (k INT, v INT) DUPLICATE KEY(k)
                 PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN ("10"), PARTITION p2 VALUES LESS THAN ("20"))
                 DISTRIBUTED BY HASH(k) BUCKETS 3""")
    run(conn, f"INSERT INTO r VALUES {values([(k, k) for k in range(20)])}")
    run(conn, "INSERT INTO r VALUES (15, 15)")
    query = (f"SELECT * FROM information_schema.rowsets WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 'r' "
             "ORDER BY PARTITION_NAME, START_VERSION, TABLET_ID")
    names = columns(conn, query)
    for doris in ("BACKEND_ID", "ROWSET_ID", "TABLET_ID", "ROWSET_NUM_ROWS", "TXN_ID", "NUM_SEGMENTS",
                  "START_VERSION", "END_VERSION", "INDEX_DISK_SIZE", "DATA_DISK_SIZE", "CREATION_TIME",
                  "NEWEST_WRITE_TIMESTAMP", "TABLE_NAME", "PARTITION_NAME", "STATE", "TIER"):
        assert doris in names, doris
    found = [dict(zip(names, r, strict=True)) for r in rows(conn, query)]
    assert sum(r["ROWSET_NUM_ROWS"] for r in found) == 21
    assert {r["PARTITION_NAME"] for r in found} == {"p1", "p2"}
    assert {r["STATE"] for r in found} == {"visible"} and {r["TIER"] for r in found} == {"ssd"}
    assert len({r["TABLET_ID"] for r in found if r["PARTITION_NAME"] == "p1"}) == 3  # 10 keys over 3 buckets
    second = [r for r in found if r["START_VERSION"] == 2]
    assert len(second) == 1 and second[0]["PARTITION_NAME"] == "p2" and second[0]["END_VERSION"] == 2
    assert all(r["DATA_DISK_SIZE"] > 0 and r["CREATION_TIME"] is not None for r in found)


def test_use_information_schema(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE t (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "USE information_schema")
    assert ("rowsets",) in rows(conn, "SHOW TABLES") and ("tables",) in rows(conn, "SHOW TABLES")
    assert rows(conn, "SHOW FULL TABLES LIKE 'col%'") == [
        ("collation_character_set_applicability", "SYSTEM VIEW"), ("collations", "SYSTEM VIEW"),
        ("column_privileges", "SYSTEM VIEW"), ("columns", "SYSTEM VIEW")]
    assert rows(conn, f"SELECT TABLE_NAME FROM tables WHERE TABLE_SCHEMA = '{db}'") == [("t",)]
    assert rows(conn, f"SELECT count(*) FROM {db}.t") == [(0,)]


TAIL = "DISTRIBUTED BY HASH(k) BUCKETS 1"


def test_columns_carry_mysql_sizes(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE s (k BIGINT, c CHAR(3), v VARCHAR(20), t STRING, d DECIMAL(12, 3), f FLOAT, "
              f"g DOUBLE, dt DATETIME(3), dd DATE, b BOOLEAN, i TINYINT) DUPLICATE KEY(k) {TAIL}")
    # dbt-doris' incremental models read exactly these.
    found = rows(conn, "select column_name, data_type, character_maximum_length, character_octet_length, "
                       "numeric_precision, numeric_scale, datetime_precision, character_set_name, collation_name, "
                       f"column_type from information_schema.columns where table_schema = '{db}' and "
                       "table_name = 's' order by ordinal_position")
    utf8 = ("utf8mb4", "utf8mb4_0900_bin")
    assert found == [
        ("k", "bigint", None, None, 19, 0, None, None, None, "bigint"),
        ("c", "char", 3, 12, None, None, None, *utf8, "char(3)"),
        ("v", "varchar", 20, 80, None, None, None, *utf8, "varchar(20)"),
        ("t", "varchar", 2147483643, 8589934572, None, None, None, *utf8, "text"),
        ("d", "decimal", None, None, 12, 3, None, None, None, "decimal(12,3)"),
        ("f", "float", None, None, 12, None, None, None, None, "float"),
        ("g", "double", None, None, 22, None, None, None, None, "double"),
        ("dt", "datetime", None, None, None, None, 3, None, None, "datetime(3)"),
        ("dd", "date", None, None, None, None, None, None, None, "date"),
        ("b", "tinyint", None, None, 3, 0, None, None, None, "tinyint(1)"),  # as Doris: MySQL's BOOLEAN
        ("i", "tinyint", None, None, 3, 0, None, None, None, "tinyint")]
    key = rows(conn, f"SELECT COLUMN_KEY, EXTRA, PRIVILEGES FROM information_schema.columns WHERE "
                     f"TABLE_SCHEMA = '{db}' AND COLUMN_NAME = 'k'")
    assert key == [("DUP", "", "select,insert,update,references")]


def test_tables_sizes_and_server_tables(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(5)) PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN ('10'), "
              f"PARTITION p2 VALUES LESS THAN ('20')) {TAIL}")
    run(conn, "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (15, 'c')")
    (table,) = rows(conn, "SELECT ENGINE, VERSION, TABLE_ROWS, DATA_LENGTH > 0, AVG_ROW_LENGTH > 0, "
                          "TABLE_COLLATION, CREATE_TIME IS NOT NULL, UPDATE_TIME >= CREATE_TIME "
                          f"FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{db}'")
    assert table == ("Doris", 10, 3, True, True, "utf8mb4_0900_bin", True, True)
    assert rows(conn, "SELECT PARTITION_NAME, PARTITION_ORDINAL_POSITION, PARTITION_METHOD, PARTITION_EXPRESSION, "
                      f"TABLE_ROWS FROM information_schema.partitions WHERE TABLE_SCHEMA = '{db}' "
                      "ORDER BY PARTITION_ORDINAL_POSITION") == [("p1", 1, "RANGE", "`k`", 2),
                                                                 ("p2", 2, "RANGE", "`k`", 1)]
    assert rows(conn, "SELECT * FROM information_schema.engines") == [
        ("Doris", "DEFAULT", "Strata's Doris-compatible OLAP storage (event-sourced Parquet rowsets)", "NO", "NO",
         "NO")]
    assert rows(conn, "SELECT * FROM information_schema.character_sets") == [
        ("utf8mb4", "utf8mb4_0900_bin", "UTF-8 Unicode", 4)]
    assert rows(conn, "SELECT COLLATION_NAME, ID FROM information_schema.collations") == [("utf8mb4_0900_bin", 309)]
    assert rows(conn, "SELECT * FROM information_schema.collation_character_set_applicability") == [
        ("utf8mb4_0900_bin", "utf8mb4")]
    assert rows(conn, f"SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.schemata "
                      f"WHERE SCHEMA_NAME = '{db}'") == [("utf8mb4", "utf8mb4_0900_bin")]
    mine = "SELECT USER, DB, COMMAND, INFO FROM information_schema.PROCESSLIST WHERE INFO LIKE '%PROCESSLIST%'"
    assert rows(conn, mine) == [("root", db, "Query", mine)]
    assert ("'root'@'%'", "def", "ADMIN_PRIV", "NO") in rows(conn, "SELECT * FROM information_schema.user_privileges")
    # Strata tables have no secondary indexes, foreign keys, routines or triggers (and this database no views):
    # MySQL's columns, no rows (the table here is a Duplicate Key table, so it has no primary key either).
    for empty, column in (("statistics", "INDEX_NAME"), ("views", "VIEW_DEFINITION"),
                          ("key_column_usage", "REFERENCED_TABLE_NAME"), ("table_constraints", "CONSTRAINT_TYPE"),
                          ("referential_constraints", "DELETE_RULE"), ("routines", "ROUTINE_BODY"),
                          ("parameters", "PARAMETER_MODE"), ("triggers", "ACTION_TIMING"),
                          ("column_privileges", "PRIVILEGE_TYPE")):
        assert column in columns(conn, f"SELECT * FROM information_schema.{empty}"), empty
        assert rows(conn, f"SELECT * FROM information_schema.{empty} WHERE TABLE_SCHEMA = '{db}'"
                          if empty in ("statistics", "key_column_usage", "table_constraints", "views")
                          else f"SELECT * FROM information_schema.{empty} WHERE TRUE") == [], empty


def test_unique_key_is_the_primary_key(conn: pymysql.connections.Connection, db: str) -> None:
    """A Unique Key table's key is its PRIMARY index and constraint, as Connector/J's getPrimaryKeys and
    getIndexInfo read them (useInformationSchema=true); Duplicate and Aggregate tables have none."""
    tail = "DISTRIBUTED BY HASH(a) BUCKETS 1"
    run(conn, f"CREATE TABLE u (a INT, b VARCHAR(4), v INT) UNIQUE KEY(a, b) {tail}")
    run(conn, f"CREATE TABLE d (a INT, v INT) DUPLICATE KEY(a) {tail}")
    run(conn, f"CREATE TABLE g (a INT, v INT SUM) AGGREGATE KEY(a) {tail}")
    assert rows(conn, "SELECT TABLE_NAME, NON_UNIQUE, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, INDEX_TYPE FROM "
                      f"information_schema.statistics WHERE TABLE_SCHEMA = '{db}' ORDER BY SEQ_IN_INDEX") == [
        ("u", 0, "PRIMARY", 1, "a", "BTREE"), ("u", 0, "PRIMARY", 2, "b", "BTREE")]
    assert rows(conn, "SELECT CONSTRAINT_NAME, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION FROM "
                      f"information_schema.key_column_usage WHERE TABLE_SCHEMA = '{db}' ORDER BY 4") == [
        ("PRIMARY", "u", "a", 1), ("PRIMARY", "u", "b", 2)]
    assert rows(conn, "SELECT CONSTRAINT_NAME, TABLE_NAME, CONSTRAINT_TYPE FROM information_schema.table_constraints "
                      f"WHERE TABLE_SCHEMA = '{db}'") == [("PRIMARY", "u", "PRIMARY KEY")]


def test_connector_j_metadata_query_shapes(conn: pymysql.connections.Connection, db: str) -> None:
    """The shapes of Connector/J's DatabaseMetaDataUsingInfoSchema queries (useInformationSchema=true):
    joins with USING, DISTINCT, CASE over LCASE/IFNULL, GROUP BY and ORDER BY over information_schema."""
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(8)) {TAIL}")
    run(conn, f"CREATE TABLE u (k INT) {TAIL}")
    imported = ("SELECT DISTINCT A.REFERENCED_TABLE_SCHEMA AS PKTABLE_CAT, NULL AS PKTABLE_SCHEM, "
                "A.REFERENCED_TABLE_NAME AS PKTABLE_NAME, A.TABLE_NAME AS FKTABLE_NAME, A.ORDINAL_POSITION AS KEY_SEQ, "
                "CASE WHEN R.UPDATE_RULE='CASCADE' THEN 0 ELSE 1 END AS UPDATE_RULE, R.UNIQUE_CONSTRAINT_NAME AS "
                "PK_NAME FROM INFORMATION_SCHEMA.KEY_COLUMN_USAGE A JOIN INFORMATION_SCHEMA.TABLE_CONSTRAINTS B "
                "USING (CONSTRAINT_SCHEMA, CONSTRAINT_NAME, TABLE_NAME) JOIN INFORMATION_SCHEMA.REFERENTIAL_CONSTRAINTS"
                " R ON (R.CONSTRAINT_NAME = B.CONSTRAINT_NAME AND R.TABLE_NAME = B.TABLE_NAME AND "
                "R.CONSTRAINT_SCHEMA = B.TABLE_SCHEMA) LEFT JOIN INFORMATION_SCHEMA.TABLE_CONSTRAINTS TC ON "
                "(A.REFERENCED_TABLE_SCHEMA = TC.TABLE_SCHEMA AND TC.CONSTRAINT_TYPE IN ('UNIQUE', 'PRIMARY KEY')) "
                f"WHERE B.CONSTRAINT_TYPE = 'FOREIGN KEY' AND A.TABLE_SCHEMA = '{db}' AND A.TABLE_NAME='t' "
                "ORDER BY PKTABLE_CAT, PKTABLE_NAME, KEY_SEQ")
    assert rows(conn, imported) == []
    assert rows(conn, "SELECT TABLE_SCHEMA AS TABLE_CAT, NULL AS TABLE_SCHEM, TABLE_NAME, COLUMN_NAME, SEQ_IN_INDEX "
                      "AS KEY_SEQ, 'PRIMARY' AS PK_NAME FROM INFORMATION_SCHEMA.STATISTICS WHERE TABLE_SCHEMA = "
                      f"'{db}' AND TABLE_NAME = 't' AND INDEX_NAME='PRIMARY' ORDER BY TABLE_SCHEMA, TABLE_NAME, "
                      "COLUMN_NAME, SEQ_IN_INDEX") == []
    assert rows(conn, "SELECT SPECIFIC_SCHEMA AS PROCEDURE_CAT, SPECIFIC_NAME AS `PROCEDURE_NAME`, "
                      "IFNULL(PARAMETER_NAME, '') AS `COLUMN_NAME`, CASE WHEN LCASE(DATA_TYPE)='date' THEN 0 ELSE "
                      "NUMERIC_PRECISION END AS `PRECISION` FROM INFORMATION_SCHEMA.PARAMETERS WHERE SPECIFIC_SCHEMA = "
                      f"'{db}' AND SPECIFIC_NAME LIKE '%' AND (PARAMETER_NAME LIKE '%' OR PARAMETER_NAME IS NULL) "
                      "ORDER BY SPECIFIC_SCHEMA, SPECIFIC_NAME, ROUTINE_TYPE, ORDINAL_POSITION") == []
    columns_of = rows(conn, "SELECT TABLE_SCHEMA, NULL, TABLE_NAME, COLUMN_NAME, CASE WHEN LCASE(DATA_TYPE)='int' "
                            "THEN 4 WHEN LCASE(DATA_TYPE)='varchar' THEN 12 ELSE 1111 END AS DATA_TYPE, CASE WHEN "
                            "CHARACTER_MAXIMUM_LENGTH IS NULL THEN NUMERIC_PRECISION WHEN CHARACTER_MAXIMUM_LENGTH > "
                            "2147483647 THEN 2147483647 ELSE CHARACTER_MAXIMUM_LENGTH END AS COLUMN_SIZE, CASE WHEN "
                            "IS_NULLABLE='NO' THEN 0 ELSE 1 END AS NULLABLE, ORDINAL_POSITION FROM "
                            f"INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME LIKE '%' AND "
                            "COLUMN_NAME LIKE '%' ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION")
    assert columns_of == [(db, None, "t", "k", 4, 10, 1, 1), (db, None, "t", "v", 12, 8, 1, 2),
                          (db, None, "u", "k", 4, 10, 1, 1)]
    # getTables: HAVING without GROUP BY filters by the select list's aliases (query.mysql_semantics).
    tables = rows(conn, "SELECT TABLE_SCHEMA AS TABLE_CAT, NULL AS TABLE_SCHEM, TABLE_NAME, CASE WHEN TABLE_TYPE="
                        "'BASE TABLE' THEN CASE WHEN TABLE_SCHEMA = 'mysql' OR TABLE_SCHEMA = 'performance_schema' "
                        "THEN 'SYSTEM TABLE' ELSE 'TABLE' END WHEN TABLE_TYPE='TEMPORARY' THEN 'LOCAL_TEMPORARY' ELSE "
                        "TABLE_TYPE END AS TABLE_TYPE, TABLE_COMMENT AS REMARKS FROM INFORMATION_SCHEMA.TABLES WHERE "
                        f"TABLE_SCHEMA = '{db}' AND TABLE_NAME LIKE '%' HAVING TABLE_TYPE IN ('TABLE', 'VIEW', null, "
                        "null, null) ORDER BY TABLE_TYPE, TABLE_SCHEMA, TABLE_NAME")
    assert tables == [(db, None, "t", "TABLE", ""), (db, None, "u", "TABLE", "")]
    # getColumns: string functions over numbers (UPPER(CASE … THEN 10 … END)), LOCATE, IF, COLLATE (9.x).
    sizes = rows(conn, "SELECT COLUMN_NAME, UPPER(CASE WHEN UPPER(DATA_TYPE)='DATE' THEN 10 WHEN "
                       "CHARACTER_MAXIMUM_LENGTH IS NULL THEN NUMERIC_PRECISION WHEN CHARACTER_MAXIMUM_LENGTH > "
                       "2147483647 THEN 2147483647 ELSE "
                       "CHARACTER_MAXIMUM_LENGTH END) AS COLUMN_SIZE, UPPER(CASE WHEN LOCATE('UNSIGNED', "
                       "UPPER(COLUMN_TYPE)) != 0 THEN CONCAT(DATA_TYPE, ' UNSIGNED') ELSE UPPER(DATA_TYPE) END) AS "
                       "TYPE_NAME, IF (EXTRA COLLATE utf8mb4_0900_bin LIKE '%auto_increment%','YES','NO') AS "
                       "IS_AUTOINCREMENT, CASE WHEN IS_NULLABLE COLLATE utf8mb4_0900_bin= 'NO' THEN 0 ELSE 1 END FROM "
                       f"INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 't' ORDER BY "
                       "ORDINAL_POSITION")
    assert sizes == [("k", "10", "INT", "NO", 1), ("v", "8", "VARCHAR", "NO", 1)]
    assert rows(conn, "SELECT TABLE_NAME, COUNT(*) AS n FROM information_schema.columns WHERE TABLE_SCHEMA = "
                      f"'{db}' GROUP BY TABLE_NAME ORDER BY TABLE_NAME") == [("t", 2), ("u", 1)]
    joined = rows(conn, "SELECT t.TABLE_NAME, c.COLUMN_NAME FROM information_schema.tables t JOIN "
                        "information_schema.columns c ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = "
                        f"c.TABLE_NAME WHERE t.TABLE_SCHEMA = '{db}' AND c.TABLE_NAME IN ('t', 'u') ORDER BY 1, 2")
    assert joined == [("t", "k"), ("t", "v"), ("u", "k")]


def test_pushed_down_filters_keep_sql_semantics(conn: pymysql.connections.Connection, db: str) -> None:
    """A WHERE on the schema or table narrows what is built, never what the query returns."""
    run(conn, f"CREATE TABLE t (k INT) {TAIL}")
    run(conn, f"CREATE TABLE u (k INT) {TAIL}")
    named = f"SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_SCHEMA = '{db}'"
    assert rows(conn, f"{named} AND TABLE_NAME IN ('t', 'x') ORDER BY 1") == [("t",)]
    assert rows(conn, f"{named} AND TABLE_NAME = 't' AND TABLE_NAME = 'u'") == []
    assert rows(conn, f"{named} OR TABLE_NAME = 'no_such' ORDER BY 1") == [("t",), ("u",)]
    assert rows(conn, f"SELECT TABLE_NAME FROM (SELECT * FROM information_schema.tables) x WHERE TABLE_SCHEMA = '{db}'"
                      " ORDER BY 1") == [("t",), ("u",)]
    assert rows(conn, f"SELECT COUNT(*) FROM information_schema.columns WHERE TABLE_SCHEMA = '{db}' AND "
                      "COLUMN_NAME = 'k'") == [(2,)]


def test_users_see_only_what_they_may(db: str, reader: tuple[pymysql.connections.Connection, str, str]) -> None:
    me, name, _ = reader
    assert rows(me, f"SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_SCHEMA = '{db}'") == [("open",)]
    assert rows(me, f"SELECT TABLE_NAME, PRIVILEGES FROM information_schema.columns WHERE TABLE_SCHEMA = '{db}'"
                ) == [("open", "select")]
    assert rows(me, "SELECT GRANTEE, TABLE_SCHEMA, TABLE_NAME, PRIVILEGE_TYPE FROM information_schema."
                    "table_privileges") == [(f"'{name}'@'%'", db.lower(), "open", "SELECT_PRIV")]
    assert rows(me, "SELECT * FROM information_schema.user_privileges") == []
    # information_schema lists its own tables and columns to everyone, as MySQL and Doris do.
    assert rows(me, "SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.tables WHERE TABLE_SCHEMA = "
                    "'information_schema' AND TABLE_NAME IN ('schemata', 'views')") == [
        ("schemata", "SYSTEM VIEW"), ("views", "SYSTEM VIEW")]
    own = rows(me, "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE FROM information_schema.columns WHERE TABLE_SCHEMA "
                   "= 'information_schema' AND TABLE_NAME = 'collations' ORDER BY ORDINAL_POSITION")
    text, number = ("varchar", "text"), ("bigint", "bigint")
    assert own == [("COLLATION_NAME", *text), ("CHARACTER_SET_NAME", *text), ("ID", *number),
                   ("IS_DEFAULT", *text), ("IS_COMPILED", *text), ("SORTLEN", *number)]
    assert {r[0] for r in rows(me, "SELECT USER FROM information_schema.processlist")} == {name}
    assert rows(me, f"SELECT TABLE_NAME FROM information_schema.partitions WHERE TABLE_SCHEMA = '{db}'") == [
        ("open",)]
