"""Arrow Flight SQL on the SQL server's `arrow_flight_sql_port`, through the real clients: ADBC's
flightsql driver (Go, as a BI tool or pandas uses it) and pyarrow.flight speaking the protocol by
hand. The answers are checked against the MySQL port's answer to the same SQL (one evaluator), and
the logins and grants against the SQL port's rules."""

from __future__ import annotations

import base64
import datetime as dt
import threading
import time
import urllib.request
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import adbc_driver_flightsql.dbapi as flightsql
import adbc_driver_manager
import pyarrow as pa
import pyarrow.flight as flight
import pymysql
import pytest

from query.flight import messages as m
from query.flight.server import FIRST_RUN_S, MAX_PENDING_PER_LOGIN
from schemas.config import Settings
from tests.query.sqlkit import Conn, rows, run
from tests.query.test_sql_time_travel import TT, instant

pytestmark = pytest.mark.usefixtures("server")


@pytest.fixture
def uri(config: Settings) -> str:
    return f"grpc://{config.sql_host}:{config.arrow_flight_sql_port}"


def adbc(uri: str, user: str = "root", password: str = "") -> Any:
    return flightsql.connect(uri, db_kwargs={"username": user, "password": password}, autocommit=True)


def arrow(uri: str, sql: str, user: str = "root", password: str = "") -> pa.Table:
    with adbc(uri, user, password) as conn, conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetch_arrow_table()


@pytest.fixture
def client(uri: str) -> Iterator[tuple[flight.FlightClient, flight.FlightCallOptions]]:
    """A pyarrow.flight client logged in as root: (client, the call options carrying its bearer token)."""
    found = flight.FlightClient(uri)
    token = found.authenticate_basic_token("root", "")
    yield found, flight.FlightCallOptions(headers=[token])
    found.close()


def query_info(sql: str) -> flight.FlightDescriptor:
    return flight.FlightDescriptor.for_command(m.pack(m.STATEMENT_QUERY, m.message((1, sql))))


def test_root_logs_in_and_reads_a_table(uri: str, conn: Conn, db: str) -> None:
    run(conn, "CREATE TABLE t (k INT, v VARCHAR(10)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO t VALUES (1, 'a'), (2, NULL)")
    table = arrow(uri, f"SELECT k, v AS label FROM {db}.t ORDER BY k")
    assert table.column_names == ["k", "label"]
    assert table.to_pylist() == [{"k": 1, "label": "a"}, {"k": 2, "label": None}]
    run(conn, "CREATE VIEW named AS SELECT k FROM t WHERE v IS NOT NULL")
    assert arrow(uri, f"SELECT * FROM {db}.named").to_pylist() == [{"k": 1}]


def test_a_wrong_password_is_unauthenticated(uri: str, user: tuple[str, str]) -> None:
    name, password = user
    with pytest.raises(adbc_driver_manager.ProgrammingError, match="UNAUTHENTICATED"):
        adbc(uri, name, password + "x")
    client = flight.FlightClient(uri)
    with pytest.raises(flight.FlightUnauthenticatedError, match="Access denied"):
        client.authenticate_basic_token(name, "wrong")
    with pytest.raises(flight.FlightUnauthenticatedError):
        client.get_flight_info(query_info("SELECT 1"))  # no login at all
    bad = flight.FlightCallOptions(headers=[(b"authorization", b"Bearer made-up")])
    with pytest.raises(flight.FlightUnauthenticatedError, match="unknown or expired"):
        client.get_flight_info(query_info("SELECT 1"), bad)
    # The right password logs in, as that user (the SQL port's USER() reads the session's user).
    assert name in arrow(uri, "SELECT USER() AS me", name, password)["me"][0].as_py()


def test_every_type_matches_the_mysql_port(uri: str, conn: Conn, db: str) -> None:
    run(conn, "CREATE TABLE ty (k INT, ti TINYINT, si SMALLINT, bi BIGINT, li LARGEINT, f FLOAT, d DOUBLE, "
              "de DECIMAL(27,9), b BOOLEAN, c CHAR(5), v VARCHAR(20), s STRING, dt DATE, dtm DATETIME, "
              "dt6 DATETIME(6), j JSON) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO ty VALUES (1, -1, 300, 9000000000, 170141183460469231731687303715884105727, 1.5, 2.25, "
              "123456789.123456789, true, 'ab', 'héllo', 'long text', '2024-02-29', '2024-02-29 12:34:56', "
              "'2024-02-29 12:34:56.123456', '{\"k\": [1, 2]}'), "
              "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)")
    sql = f"SELECT * FROM {db}.ty ORDER BY k"
    table = arrow(uri, sql)
    expected_types = [pa.int32(), pa.int8(), pa.int16(), pa.int64(), pa.decimal128(38, 0), pa.float32(),
                      pa.float64(), pa.decimal128(27, 9), pa.bool_(), pa.string(), pa.string(), pa.string(),
                      pa.date32(), pa.timestamp("s"), pa.timestamp("us"), pa.string()]
    assert table.schema.types == expected_types
    got = [tuple(r.values()) for r in table.to_pylist()]
    mysql = [tuple(bool(v) if i == 8 and v is not None else v for i, v in enumerate(r)) for r in rows(conn, sql)]
    assert got == mysql
    assert got[0][4] == Decimal("170141183460469231731687303715884105727") and got[1][1:] == (None,) * 15
    # ARRAY and MAP, which the MySQL port sends as text, stay nested Arrow types.
    nested = arrow(uri, "SELECT [1, 2] AS a, map('k', 1) AS m")
    assert nested.schema.types == [pa.list_(pa.field("l", pa.int32())), pa.map_(pa.string(), pa.int32())]
    assert nested.to_pylist() == [{"a": [1, 2], "m": [("k", 1)]}]


def test_time_travel_and_tags_read_the_table_as_it_was(uri: str, conn: Conn, db: str) -> None:
    run(conn, f"CREATE TABLE h (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    run(conn, "INSERT INTO h VALUES (1, 10), (2, 20)")
    run(conn, "ALTER TABLE h CREATE TAG first")
    t = instant()
    run(conn, "INSERT INTO h VALUES (2, 21), (3, 30)")  # an upsert of k = 2 and a new key
    at_t = f"SELECT k, v FROM {db}.h FOR TIME AS OF '{t}' ORDER BY k"
    tagged = f"SELECT k, v FROM {db}.h FOR TAG AS OF 'first' ORDER BY k"
    for sql in (at_t, tagged):
        got = arrow(uri, sql).to_pylist()
        assert got == [{"k": 1, "v": 10}, {"k": 2, "v": 20}]
        assert [tuple(r.values()) for r in got] == rows(conn, sql)  # the SQL port's answer, the same
    assert arrow(uri, f"SELECT v FROM {db}.h ORDER BY k")["v"].to_pylist() == [10, 21, 30]


@pytest.fixture
def limited(uri: str, reader: tuple[Conn, str, str]) -> tuple[str, str]:
    """`reader`'s name and password: SELECT_PRIV on `open`, nothing on `closed` (tests/query/conftest)."""
    _, name, password = reader
    return name, password


def test_a_table_without_grant_is_refused(uri: str, db: str, limited: tuple[str, str]) -> None:
    name, password = limited
    assert arrow(uri, f"SELECT * FROM {db}.open", name, password).num_rows == 0
    with pytest.raises(adbc_driver_manager.Error, match="1142") as refused:
        arrow(uri, f"SELECT * FROM {db}.closed", name, password)
    assert "PERMISSION_DENIED" in str(refused.value) or "Unauthorized" in str(refused.value)
    client = flight.FlightClient(uri)
    options = flight.FlightCallOptions(headers=[client.authenticate_basic_token(name, password)])
    with pytest.raises(flight.FlightUnauthorizedError, match=r"ERROR 1142 \(42000\).*SELECT"):
        client.get_flight_info(query_info(f"SELECT k FROM {db}.closed"), options)


def test_information_schema_shows_only_what_the_grants_allow(uri: str, db: str, limited: tuple[str, str]) -> None:
    name, password = limited
    sql = f"SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_SCHEMA = '{db}' ORDER BY TABLE_NAME"
    assert arrow(uri, sql, name, password)["TABLE_NAME"].to_pylist() == ["open"]
    assert arrow(uri, sql)["TABLE_NAME"].to_pylist() == ["closed", "open"]
    with adbc(uri, name, password) as conn:
        objects = conn.adbc_get_objects(depth="tables", db_schema_filter=db).read_all().to_pylist()
    tables = [t["table_name"] for c in objects for s in c["catalog_db_schemas"] or [] for t in s["db_schema_tables"]]
    assert tables == ["open"]


def test_a_syntax_error_keeps_mysql_s_message(uri: str, client: tuple[flight.FlightClient, Any]) -> None:
    found, options = client
    with pytest.raises(flight.FlightServerError, match=r"ERROR 1064 \(42000\)"):
        found.get_flight_info(query_info("SELEC 1"), options)
    with pytest.raises(adbc_driver_manager.Error, match="1064"):
        arrow(uri, "SELECT FROM WHERE")
    with pytest.raises(flight.FlightServerError, match="Unknown database"):
        found.get_flight_info(query_info("SELECT * FROM no_such_db.t"), options)


def test_dml_through_execute_update(uri: str, conn: Conn, db: str, client: tuple[flight.FlightClient, Any]) -> None:
    run(conn, "CREATE TABLE w (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    with adbc(uri) as fc, fc.cursor() as cur:
        cur.adbc_statement.set_sql_query(f"INSERT INTO {db}.w VALUES (1, 1), (2, 2), (3, 3)")
        assert cur.adbc_statement.execute_update() == 3
    found, options = client
    descriptor = flight.FlightDescriptor.for_command(
        m.pack(m.STATEMENT_UPDATE, m.message((1, f"UPDATE {db}.w SET v = 10 WHERE k >= 2"))))
    writer, metadata = found.do_put(descriptor, pa.schema([]), options)
    writer.done_writing()
    answer = metadata.read()
    writer.close()
    assert answer is not None and m.decode(answer.to_pybytes()) == {1: [2]}
    assert rows(conn, f"SELECT k, v FROM {db}.w ORDER BY k") == [(1, 1), (2, 10), (3, 10)]


def test_parameters_are_bound_as_typed_literals(uri: str, conn: Conn, db: str) -> None:
    run(conn, "CREATE TABLE p (k INT, name VARCHAR(40), amount DECIMAL(10,2), day DATE, at DATETIME(6), "
              "ratio DOUBLE) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    values = [(1, "O'Brien", Decimal("12.50"), dt.date(2024, 2, 29), dt.datetime(2024, 2, 29, 12, 34, 56, 789), 0.5),
              (2, "nobody' OR '1'='1", Decimal("-0.01"), None, None, None),
              (3, "back\\slash ? -- not a comment", None, dt.date(1999, 12, 31), dt.datetime(2000, 1, 1), 1e300)]
    with adbc(uri) as fc, fc.cursor() as cur:
        # executemany: one prepared INSERT, the rows bound in one DoPut …
        cur.executemany(f"INSERT INTO {db}.p VALUES (?, ?, ?, ?, ?, ?)", values)
        assert cur.rowcount == 3
        # … as one multi-row INSERT: one commit, one rowset.
        assert rows(conn, "SELECT count(*) FROM information_schema.rowsets "
                          f"WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 'p'") == [(1,)]
        cur.execute(f"SELECT * FROM {db}.p WHERE name = ? ORDER BY k", ("O'Brien",))
        assert cur.fetchall() == [values[0]]
        # A string is one literal, never SQL: the injection matches only the row that holds it.
        cur.execute(f"SELECT k FROM {db}.p WHERE name = ?", ("nobody' OR '1'='1",))
        assert cur.fetchall() == [(2,)]
        cur.execute(f"SELECT k, ? AS tag FROM {db}.p WHERE day > ? AND amount IS NULL", ("x", dt.date(1999, 1, 1)))
        assert cur.fetchall() == [(3, "x")]
        # The prepared statement runs again with other values bound.
        for k in (1, 3):
            cur.execute(f"SELECT k FROM {db}.p WHERE k = ?", (k,))
            assert cur.fetchall() == [(k,)]
    assert rows(conn, f"SELECT * FROM {db}.p ORDER BY k") == values  # what the MySQL port reads back


def test_wrong_parameters_are_refused(uri: str, client: tuple[flight.FlightClient, Any]) -> None:
    with adbc(uri) as fc, fc.cursor() as cur:
        with pytest.raises(adbc_driver_manager.Error, match=r"1210.*takes 2 parameters, 1 were bound"):
            cur.execute("SELECT ? + ?", (1,))
        with pytest.raises(adbc_driver_manager.Error, match=r"1210.*takes 1 parameters, none were bound"):
            cur.adbc_statement.set_sql_query("SELECT ? + 1")
            cur.adbc_statement.prepare()
            cur.adbc_statement.execute_query()
        with pytest.raises(adbc_driver_manager.Error, match="time zone is not supported"):
            cur.execute("SELECT ?", (dt.datetime(2024, 1, 1, tzinfo=dt.UTC),))
    # Two rows of parameters for one query: refused, not one of them picked.
    found, options = client
    request = m.pack(m.CREATE_PREPARED_STATEMENT_REQUEST, m.message((1, "SELECT ? AS v")))
    (result,) = list(found.do_action(flight.Action("CreatePreparedStatement", request), options))
    handle = m.unpack(result.body.to_pybytes()).bytes(1)
    query = flight.FlightDescriptor.for_command(m.pack(m.PREPARED_STATEMENT_QUERY, m.message((1, handle))))
    two = pa.table({"p": [1, 2]})
    writer, _ = found.do_put(query, two.schema, options)
    writer.write_table(two)
    writer.close()
    with pytest.raises(flight.FlightError, match="more than one row of parameters.*not supported"):
        found.get_flight_info(query, options)
    one = pa.table({"p": [7]})
    writer, _ = found.do_put(query, one.schema, options)
    writer.write_table(one)
    writer.close()
    info = found.get_flight_info(query, options)
    assert found.do_get(info.endpoints[0].ticket, options).read_all().to_pylist() == [{"v": 7}]


def test_parameters_past_max_allowed_packet_are_refused(client: tuple[flight.FlightClient, Any]) -> None:
    found, options = client
    request = m.pack(m.CREATE_PREPARED_STATEMENT_REQUEST, m.message((1, "SELECT length(?) AS n")))
    (result,) = list(found.do_action(flight.Action("CreatePreparedStatement", request), options))
    handle = m.unpack(result.body.to_pybytes()).bytes(1)
    query = flight.FlightDescriptor.for_command(m.pack(m.PREPARED_STATEMENT_QUERY, m.message((1, handle))))
    megabyte = pa.table({"p": ["x" * (1 << 20)]})
    writer, _ = found.do_put(query, megabyte.schema, options)
    with pytest.raises(flight.FlightError, match="1153"):
        for _ in range(70):  # 70 MB against the default 64 MB
            writer.write_table(megabyte)
        writer.close()
    # The server goes on: the login binds a small value and runs.
    writer, _ = found.do_put(query, megabyte.schema, options)
    writer.write_table(pa.table({"p": ["four"]}))
    writer.close()
    info = found.get_flight_info(query, options)
    assert found.do_get(info.endpoints[0].ticket, options).read_all().to_pylist() == [{"n": 4}]


def _statements_run(config: Settings, kind: str) -> float:
    """strata_flight_sql_statements_total{kind, outcome="ok"} from the SQL server's /metrics."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{config.http_port}/metrics", timeout=10).read().decode()
    prefix = f'strata_flight_sql_statements_total{{kind="{kind}",outcome="ok"}} '
    return sum(float(line.removeprefix(prefix)) for line in text.splitlines() if line.startswith(prefix))


def _prepare(found: flight.FlightClient, options: flight.FlightCallOptions, sql: str) -> dict[int, Any]:
    """CreatePreparedStatement's answer: handle (1), dataset_schema (2) and parameter_schema (3), each
    schema read back from its IPC bytes (None when left out)."""
    request = m.pack(m.CREATE_PREPARED_STATEMENT_REQUEST, m.message((1, sql)))
    (result,) = list(found.do_action(flight.Action("CreatePreparedStatement", request), options))
    fields = m.unpack(result.body.to_pybytes())
    return {1: fields.bytes(1)} | {n: None if fields.bytes(n) is None else pa.ipc.read_schema(
        pa.py_buffer(fields.bytes(n))) for n in (2, 3)}


def test_a_prepared_statement_announces_its_rows_and_parameters(conn: Conn, db: str,
                                                                 client: tuple[flight.FlightClient, Any]) -> None:
    run(conn, "CREATE TABLE ps (k INT, name VARCHAR(20), amount DECIMAL(10,2), day DATE) DUPLICATE KEY(k) "
              "DISTRIBUTED BY HASH(k) BUCKETS 1")
    found, options = client
    # A query: its rows' schema, as its FlightInfo gives it; no parameters.
    query = _prepare(found, options, f"SELECT k, name AS who FROM {db}.ps")
    assert query[2] is not None and query[2].names == ["k", "who"] and query[2].types == [pa.int32(), pa.string()]
    # A DECIMAL says its precision and scale in Flight SQL's column metadata (JDBC's getPrecision / getScale).
    amount = _prepare(found, options, f"SELECT amount FROM {db}.ps")[2].field("amount")
    assert amount.metadata == {b"ARROW:FLIGHT:SQL:PRECISION": b"10", b"ARROW:FLIGHT:SQL:SCALE": b"2"}
    assert query[3] is None
    # A SHOW has rows too; DML and DDL have none (the JDBC driver runs those as updates).
    shown = _prepare(found, options, f"SHOW TABLES FROM {db}")[2]
    assert shown is not None and len(shown) == 1
    assert _prepare(found, options, f"INSERT INTO {db}.ps VALUES (1, 'a', 1.5, '2024-01-01')")[2] is None
    assert _prepare(found, options, f"DROP TABLE IF EXISTS {db}.nothing_here")[2] is None
    # Parameters take the type of the column they stand for, a string where they stand for none.
    typed = _prepare(found, options, f"SELECT name FROM {db}.ps AS p WHERE p.k = ? AND ? < amount "
                                     "AND day BETWEEN ? AND ? AND name IN (?, 'x') AND length(?) > 1")
    assert typed[2] is not None and typed[2].names == ["name"]
    assert typed[3] is not None and typed[3].types == [pa.int32(), pa.decimal128(10, 2), pa.date32(), pa.date32(),
                                                       pa.string(), pa.string()]
    inserted = _prepare(found, options, f"INSERT INTO {db}.ps VALUES (?, upper(?), ?, ?)")[3]
    assert inserted is not None and inserted.types == [pa.int32(), pa.string(), pa.decimal128(10, 2), pa.date32()]
    named = _prepare(found, options, f"INSERT INTO {db}.ps (day, k) VALUES (?, ?)")[3]
    assert named is not None and named.types == [pa.date32(), pa.int32()]
    updated = _prepare(found, options, f"UPDATE {db}.ps SET amount = ? WHERE k = ?")[3]
    assert updated is not None and updated.types == [pa.decimal128(10, 2), pa.int32()]
    deleted = _prepare(found, options, f"DELETE FROM {db}.ps WHERE day < ?")[3]
    assert deleted is not None and deleted.types == [pa.date32()]
    # A statement that does not parse is refused when prepared, with the MySQL port's message.
    with pytest.raises(flight.FlightServerError, match=r"ERROR 1064 \(42000\)"):
        _prepare(found, options, "SELEC ?")


def test_a_query_prepared_and_run_at_once_runs_once(config: Settings, conn: Conn, db: str, uri: str,
                                                    client: tuple[flight.FlightClient, Any]) -> None:
    run(conn, "CREATE TABLE once (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO once VALUES (1)")
    before = _statements_run(config, "prepared_query")
    assert arrow(uri, f"SELECT k FROM {db}.once").to_pylist() == [{"k": 1}]  # ADBC prepares, then executes
    assert _statements_run(config, "prepared_query") - before == 1
    # Run again later, the statement reads the table as it is then, not as it was prepared.
    found, options = client
    handle = _prepare(found, options, f"SELECT count(*) AS n FROM {db}.once")[1]
    descriptor = flight.FlightDescriptor.for_command(m.pack(m.PREPARED_STATEMENT_QUERY, m.message((1, handle))))
    run(conn, "INSERT INTO once VALUES (2)")
    time.sleep(FIRST_RUN_S + 0.2)
    info = found.get_flight_info(descriptor, options)
    assert found.do_get(info.endpoints[0].ticket, options).read_all().to_pylist() == [{"n": 2}]
    # … and so does one with another statement of the login in between, however soon.
    handle = _prepare(found, options, f"SELECT count(*) AS n FROM {db}.once")[1]
    descriptor = flight.FlightDescriptor.for_command(m.pack(m.PREPARED_STATEMENT_QUERY, m.message((1, handle))))
    writer, metadata = found.do_put(flight.FlightDescriptor.for_command(m.pack(
        m.STATEMENT_UPDATE, m.message((1, f"INSERT INTO {db}.once VALUES (3)")))), pa.schema([]), options)
    writer.done_writing()
    metadata.read()
    writer.close()
    info = found.get_flight_info(descriptor, options)
    assert found.do_get(info.endpoints[0].ticket, options).read_all().to_pylist() == [{"n": 3}]


def _metadata(found: flight.FlightClient, options: flight.FlightCallOptions, name: str, *fields: Any) -> list[Any]:
    info = found.get_flight_info(flight.FlightDescriptor.for_command(m.pack(name, m.message(*fields))), options)
    return found.do_get(info.endpoints[0].ticket, options).read_all().to_pylist()


def test_get_schema_describes_without_running(uri: str, conn: Conn, db: str,
                                              client: tuple[flight.FlightClient, Any]) -> None:
    run(conn, "CREATE TABLE described (k INT, v VARCHAR(5)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    found, options = client
    assert found.get_schema(query_info(f"SELECT k, v AS label FROM {db}.described"), options).schema == \
        pa.schema([pa.field("k", pa.int32()), pa.field("label", pa.string())])
    # DML has no rows and is not run to learn it.
    assert found.get_schema(query_info(f"INSERT INTO {db}.described VALUES (1, 'a')"), options).schema == pa.schema([])
    assert rows(conn, f"SELECT count(*) FROM {db}.described") == [(0,)]
    with adbc(uri) as fc, fc.cursor() as cur:
        assert cur.adbc_execute_schema(f"SELECT v FROM {db}.described").names == ["v"]
    # pyarrow wraps GetSchema's errors in a plain ArrowException.
    with pytest.raises(pa.ArrowException, match="1146"):
        found.get_schema(query_info(f"SELECT * FROM {db}.no_such_table"), options)


def test_primary_and_foreign_keys(conn: Conn, db: str, client: tuple[flight.FlightClient, Any]) -> None:
    run(conn, "CREATE TABLE keyed (a INT, b VARCHAR(5), v INT) UNIQUE KEY(a, b) DISTRIBUTED BY HASH(a) BUCKETS 1")
    run(conn, "CREATE TABLE loose (a INT, v INT) DUPLICATE KEY(a) DISTRIBUTED BY HASH(a) BUCKETS 1")
    found, options = client
    # A Unique Key table's key is its primary key, as on the MySQL port; a Duplicate Key table has none.
    assert _metadata(found, options, m.GET_PRIMARY_KEYS, (2, db), (3, "keyed")) == [
        {"catalog_name": "internal", "db_schema_name": db, "table_name": "keyed", "column_name": column,
         "key_name": "PRIMARY", "key_sequence": i} for i, column in ((1, "a"), (2, "b"))]
    assert _metadata(found, options, m.GET_PRIMARY_KEYS, (2, db), (3, "loose")) == []
    # Doris has no foreign keys.
    for name in (m.GET_IMPORTED_KEYS, m.GET_EXPORTED_KEYS):
        assert _metadata(found, options, name, (2, db), (3, "keyed")) == []
    assert _metadata(found, options, m.GET_CROSS_REFERENCE, (2, db), (3, "keyed"), (5, db), (6, "loose")) == []


def test_type_info_lists_the_column_types_create_table_takes(conn: Conn, db: str,
                                                            client: tuple[flight.FlightClient, Any]) -> None:
    found, options = client
    types = _metadata(found, options, m.GET_XDBC_TYPE_INFO)
    # Ordered by data_type, then type_name, as FlightSql.proto asks.
    assert [(t["data_type"], t["type_name"]) for t in types] == sorted((t["data_type"], t["type_name"]) for t in types)
    by_name = {t["type_name"]: t for t in types}
    assert by_name["BIGINT"]["data_type"] == -5 and by_name["VARCHAR"]["data_type"] == 12
    assert by_name["DECIMAL"]["create_params"] == ["precision", "scale"] and by_name["DECIMAL"]["maximum_scale"] == 38
    assert by_name["DATETIME"]["sql_data_type"] == 9 and by_name["DATETIME"]["datetime_subcode"] == 3
    assert by_name["VARCHAR"]["column_size"] == 65533 and by_name["VARCHAR"]["literal_prefix"] == "'"
    # Every type listed is one a table can be created with (its parameters given).
    for name, t in by_name.items():
        spelled = {"DECIMAL": "DECIMAL(10,2)", "CHAR": "CHAR(3)", "VARCHAR": "VARCHAR(8)", "DATETIME": "DATETIME(3)"}
        run(conn, f"CREATE TABLE typed_{name.lower()} (k INT, v {spelled.get(name, name)}) "
                  "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
        assert t["nullable"] == 1
    assert {"BITMAP", "HLL"}.isdisjoint(by_name)  # their values never reach a client
    # The optional data_type filter, a negative one (protobuf's ten-byte varint) included.
    assert [t["type_name"] for t in _metadata(found, options, m.GET_XDBC_TYPE_INFO, (1, -1))] == ["JSON", "STRING"]
    assert [t["type_name"] for t in _metadata(found, options, m.GET_XDBC_TYPE_INFO, (1, 3))] == ["DECIMAL", "LARGEINT"]
    assert _metadata(found, options, m.GET_XDBC_TYPE_INFO, (1, 2014)) == []


def test_get_tables_with_their_schemas(uri: str, conn: Conn, db: str, limited: tuple[str, str]) -> None:
    run(conn, "CREATE TABLE `odd-name` (k BIGINT, v VARCHAR(10), d DECIMAL(9,3)) DUPLICATE KEY(k) "
              "DISTRIBUTED BY HASH(k) BUCKETS 1")
    with adbc(uri) as fc:
        schema = fc.adbc_get_table_schema("odd-name", db_schema_filter=db)
        assert schema == arrow(uri, f"SELECT * FROM {db}.`odd-name`").schema
        assert schema.names == ["k", "v", "d"] and schema.types == [pa.int64(), pa.string(), pa.decimal128(9, 3)]
        objects = fc.adbc_get_objects(depth="all", db_schema_filter=db, table_name_filter="odd%").read_all()
    [table] = [t for c in objects.to_pylist() for s in c["catalog_db_schemas"] for t in s["db_schema_tables"]]
    assert [(c["column_name"], c["ordinal_position"]) for c in table["table_columns"]] == [("k", 1), ("v", 2), ("d", 3)]
    # A user's GetTables lists, with schemas too, only the tables its grants let it see.
    name, password = limited
    with adbc(uri, name, password) as fc:
        listed = fc.adbc_get_objects(depth="all", db_schema_filter=db).read_all().to_pylist()
        assert [t["table_name"] for c in listed for s in c["catalog_db_schemas"] for t in s["db_schema_tables"]] \
            == ["open"]
        with pytest.raises(adbc_driver_manager.Error):
            fc.adbc_get_table_schema("closed", db_schema_filter=db)


def test_use_lasts_for_the_login(uri: str, conn: Conn, db: str) -> None:
    run(conn, "CREATE TABLE u (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO u VALUES (7)")
    with adbc(uri) as fc, fc.cursor() as cur:
        cur.execute(f"USE {db}")
        cur.execute("SELECT k FROM u")
        assert cur.fetch_arrow_table()["k"].to_pylist() == [7]


def test_session_variables_read_and_set_refused(uri: str, conn: Conn) -> None:
    sql = "SELECT @@version_comment AS v, @@time_zone AS z"
    assert arrow(uri, sql).to_pylist() == [{"v": rows(conn, sql)[0][0], "z": "UTC"}]
    with pytest.raises(adbc_driver_manager.Error, match="1235.*not supported"):
        arrow(uri, "SET time_zone = '+08:00'")


def test_a_large_result_streams_in_several_batches(uri: str, conn: Conn, db: str,
                                                   client: tuple[flight.FlightClient, Any]) -> None:
    run(conn, "CREATE TABLE seed (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO seed VALUES " + ", ".join(f"({i})" for i in range(250)))
    run(conn, "CREATE TABLE big (k BIGINT, name VARCHAR(20)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2")
    run(conn, "INSERT INTO big SELECT a.k * 250 + b.k, concat('n', a.k) FROM seed a, seed b")
    found, options = client
    info = found.get_flight_info(query_info(f"SELECT k, name FROM {db}.big ORDER BY k"), options)
    assert info.schema.names == ["k", "name"] and len(info.endpoints) == 1
    reader = found.do_get(info.endpoints[0].ticket, options)
    batches = [chunk.data for chunk in reader]
    assert len(batches) > 1
    keys = [k for b in batches for k in b.column(0).to_pylist()]
    assert keys == list(range(250 * 250))
    with pytest.raises(flight.FlightServerError, match="already fetched"):
        found.do_get(info.endpoints[0].ticket, options).read_all()


def test_a_ticket_is_only_its_login_s(uri: str, client: tuple[flight.FlightClient, Any]) -> None:
    found, options = client
    other = flight.FlightClient(uri)
    other_options = flight.FlightCallOptions(headers=[other.authenticate_basic_token("root", "")])
    tickets = [found.get_flight_info(query_info(f"SELECT {i} AS i"), options).endpoints[0].ticket
               for i in range(MAX_PENDING_PER_LOGIN)]
    with pytest.raises(flight.FlightUnavailableError, match="waiting for their DoGet"):
        found.get_flight_info(query_info("SELECT 1"), options)
    with pytest.raises(flight.FlightServerError, match="unknown"):
        other.do_get(tickets[0], other_options).read_all()
    assert [found.do_get(t, options).read_all()["i"][0].as_py() for t in tickets] == list(range(len(tickets)))


def test_a_prepared_statement_runs_until_closed(client: tuple[flight.FlightClient, Any], uri: str) -> None:
    found, options = client
    request = m.pack(m.CREATE_PREPARED_STATEMENT_REQUEST, m.message((1, "SELECT 6 * 7 AS answer")))
    (result,) = list(found.do_action(flight.Action("CreatePreparedStatement", request), options))
    handle = m.unpack(result.body.to_pybytes()).bytes(1)
    assert handle
    query = flight.FlightDescriptor.for_command(m.pack(m.PREPARED_STATEMENT_QUERY, m.message((1, handle))))
    for _ in range(2):  # a prepared statement runs as often as it is asked
        info = found.get_flight_info(query, options)
        assert found.do_get(info.endpoints[0].ticket, options).read_all().to_pylist() == [{"answer": 42}]
    other = flight.FlightClient(uri)
    other_options = flight.FlightCallOptions(headers=[other.authenticate_basic_token("root", "")])
    with pytest.raises(flight.FlightServerError, match="unknown or closed"):
        other.get_flight_info(query, other_options)  # another login's handle is not this one's
    close = m.pack(m.CLOSE_PREPARED_STATEMENT_REQUEST, m.message((1, handle)))
    list(found.do_action(flight.Action("ClosePreparedStatement", close), options))
    with pytest.raises(flight.FlightServerError, match="unknown or closed"):
        found.get_flight_info(query, options)


def test_metadata_commands(uri: str, db: str) -> None:
    with adbc(uri) as conn:
        assert conn.adbc_get_info()["vendor_name"].startswith("Strata")
        assert set(conn.adbc_get_table_types()) == {"BASE TABLE", "SYSTEM VIEW", "VIEW"}
        catalogs = conn.adbc_get_objects(depth="catalogs").read_all().to_pylist()
    assert [c["catalog_name"] for c in catalogs] == ["internal"]


def test_what_is_not_supported_says_so(uri: str, conn: Conn, db: str, client: tuple[flight.FlightClient, Any]) -> None:
    found, options = client
    with pytest.raises(flight.FlightError, match="not supported"):
        list(found.do_action(flight.Action("BeginTransaction", b""), options))
    substrait = flight.FlightDescriptor.for_command(m.pack("CommandStatementSubstraitPlan", b""))
    with pytest.raises(flight.FlightError, match="not supported"):
        found.get_flight_info(substrait, options)
    with adbc(uri) as fc, fc.cursor() as cur, pytest.raises(adbc_driver_manager.Error, match="not supported"):
        cur.adbc_ingest("ingested", pa.table({"k": [1]}), mode="create")


def test_basic_padding_is_optional(uri: str) -> None:
    client = flight.FlightClient(uri)
    raw = base64.b64encode(b"root:").rstrip(b"=")
    info = client.get_flight_info(query_info("SELECT 41 + 1 AS x"),
                                  flight.FlightCallOptions(headers=[(b"authorization", b"Basic " + raw)]))
    assert info.schema.names == ["x"]


def test_an_unclaimed_result_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    from query.flight import server as flight_server
    from query.flight.results import ArrowResult

    closed: list[bool] = []

    def batches() -> Iterator[pa.RecordBatch]:
        try:
            yield pa.record_batch({"k": [1]})
        finally:
            closed.append(True)

    pending = flight_server._Pending()
    stream = batches()
    next(stream)  # started, as a DuckDB reader is once its statement ran
    handle = pending.add("token", ArrowResult(pa.schema([("k", pa.int64())]), stream))
    pending.expire()
    assert not closed
    monkeypatch.setattr(flight_server, "UNCLAIMED_S", 0.0)
    pending.expire()
    assert closed == [True]
    with pytest.raises(flight.FlightServerError, match="expired"):
        pending.take("token", handle)


def _flight_login(uri: str, name: str, password: str) -> tuple[flight.FlightClient, flight.FlightCallOptions]:
    found = flight.FlightClient(uri)
    return found, flight.FlightCallOptions(headers=[found.authenticate_basic_token(name, password)])


def _sessions_of(conn: Conn, name: str) -> list[dict[str, Any]]:
    with conn.cursor() as cur:
        cur.execute("SHOW FULL PROCESSLIST")
        names = [d[0] for d in cur.description or ()]
        return [r for r in (dict(zip(names, row, strict=True)) for row in cur.fetchall()) if r["User"] == name]


def test_a_flight_login_is_a_connection_counted_listed_and_killed(uri: str, conn: Conn, db: str,
                                                                  user: tuple[str, str]) -> None:
    """Doris registers a connection per bearer token: it counts toward max_user_connections (on both
    ports), shows in SHOW PROCESSLIST with its statement, and KILL ends it."""
    name, password = user
    run(conn, "CREATE TABLE big (k BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO big VALUES " + ", ".join(f"({i})" for i in range(2000)))
    run(conn, f"GRANT SELECT_PRIV ON {db}.* TO '{name}'")
    run(conn, f"SET PROPERTY FOR '{name}' 'max_user_connections' = '2'")
    first, first_options = _flight_login(uri, name, password)
    second, second_options = _flight_login(uri, name, password)
    try:
        with pytest.raises(flight.FlightUnauthenticatedError, match=r"ERROR 1203 \(42000\).*max_user_connections"):
            flight.FlightClient(uri).authenticate_basic_token(name, password)
        with pytest.raises(pymysql.MySQLError) as refused:
            pymysql.connect(host=conn.host, port=conn.port, user=name, password=password)
        assert refused.value.args[0] == 1203, refused.value

        listed = _sessions_of(conn, name)
        assert len(listed) == 2, listed
        slow = f"SELECT count(*) FROM {db}.big a, {db}.big b, {db}.big c WHERE a.k * b.k * c.k = 7777777777"
        outcome: dict[str, BaseException] = {}

        def run_slow() -> None:
            try:
                info = first.get_flight_info(query_info(slow), first_options)
                first.do_get(info.endpoints[0].ticket, first_options).read_all()
            except flight.FlightError as exc:
                outcome["error"] = exc

        thread = threading.Thread(target=run_slow, daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        running: list[dict[str, Any]] = []
        while not running and time.monotonic() < deadline:
            running = [r for r in _sessions_of(conn, name) if r["Command"] == "Query" and r["Info"] == slow]
            time.sleep(0.1)
        assert running, _sessions_of(conn, name)
        assert str(running[0]["Host"]).startswith("127.0.0.1:") and running[0]["Db"] == "", running
        run(conn, f"KILL QUERY {running[0]['Id']}")
        thread.join(30)
        assert not thread.is_alive() and "1317" in str(outcome.get("error")), outcome
        # KILL CONNECTION ends the token: it is refused, and its place is free for a new login.
        run(conn, f"KILL {running[0]['Id']}")
        with pytest.raises(flight.FlightUnauthenticatedError, match="unknown or expired"):
            first.get_flight_info(query_info("SELECT 1"), first_options)
        assert len(_sessions_of(conn, name)) == 1
        third, third_options = _flight_login(uri, name, password)
        assert third.get_flight_info(query_info("SELECT 1"), third_options).total_records in (-1, 1)
        third.close()
    finally:
        first.close()
        second.close()


def test_a_closed_adbc_connection_ends_its_login_at_once(uri: str, conn: Conn, user: tuple[str, str]) -> None:
    """ADBC sends CloseSession when a connection closes: its login stops counting toward
    max_user_connections then, not an hour later — a client connecting again and again is not locked out."""
    name, password = user
    run(conn, f"SET PROPERTY FOR '{name}' 'max_user_connections' = '2'")
    for _ in range(4):
        assert arrow(uri, "SELECT 6 * 7 AS x", name, password).to_pylist() == [{"x": 42}]
    assert _sessions_of(conn, name) == []
    with adbc(uri, name, password) as fc, fc.cursor() as cur:
        cur.execute("SELECT 1")
        assert cur.fetchall() == [(1,)]
        assert len(_sessions_of(conn, name)) == 1  # open, it counts and is listed
    assert _sessions_of(conn, name) == []


def test_close_session_ends_the_token_and_its_unread_results(uri: str, conn: Conn, user: tuple[str, str]) -> None:
    name, password = user
    found, options = _flight_login(uri, name, password)
    try:
        assert "CloseSession" in [a.type for a in found.list_actions(options)]
        unread = found.get_flight_info(query_info("SELECT 1 AS x"), options)
        assert len(_sessions_of(conn, name)) == 1
        # CloseSessionResult{status: CLOSED}: a plain Flight message, field 1 = 1.
        answers = [r.body.to_pybytes() for r in found.do_action(flight.Action("CloseSession", b""), options)]
        assert answers == [b"\x08\x01"]
        assert _sessions_of(conn, name) == []
        with pytest.raises(flight.FlightUnauthenticatedError, match="unknown or expired"):
            found.do_get(unread.endpoints[0].ticket, options).read_all()
    finally:
        found.close()


def test_a_login_s_unread_results_close_with_it_and_no_other_s() -> None:
    from query.flight import server as flight_server
    from query.flight.results import ArrowResult

    closed: list[str] = []

    def batches(owner: str) -> Iterator[pa.RecordBatch]:
        try:
            yield pa.record_batch({"k": [1]})
        finally:
            closed.append(owner)

    pending = flight_server._Pending()
    handles = {}
    for owner in ("ended", "ended", "other"):
        stream = batches(owner)
        next(stream)  # started, as a DuckDB reader is once its statement ran
        handles[owner] = pending.add(owner, ArrowResult(pa.schema([("k", pa.int64())]), stream))
    pending.drop("ended")
    assert closed == ["ended", "ended"]
    with pytest.raises(flight.FlightServerError, match="unknown"):
        pending.take("ended", handles["ended"])
    assert pending.take("other", handles["other"]) is not None
