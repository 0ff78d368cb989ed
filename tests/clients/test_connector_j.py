"""Client matrix, MySQL Connector/J (from Maven Central): tests/clients/java/ClientMatrix.java runs every
check once per connection setting — server-side prepares on and off × metadata from information_schema
on and off — and the tests here compare what JDBC returned, as [Java class, toString()], exactly."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from tests.clients import install
from tests.clients.external import Results, run_program, value
from tests.clients.matrix import Login

pytestmark = pytest.mark.integration

SETTINGS = {
    "server-prep-infoschema": (True, True),
    "server-prep-show": (True, False),
    "client-prep-infoschema": (False, True),
    "client-prep-show": (False, False),
}

XFAIL: dict[tuple[str, str | None], str] = {}


@pytest.fixture(scope="module")
def classpath() -> str:
    if shutil.which("java") is None:
        pytest.skip("java not found on PATH — install a JDK 17+ (apt-get install openjdk-17-jdk-headless)")
    try:
        return install.connector_j()
    except install.ClientUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module", params=list(SETTINGS))
def jdbc(request: pytest.FixtureRequest, classpath: str, login: Login) -> tuple[Results, str, str]:
    """(results, table prefix, database) of one run of ClientMatrix with this setting."""
    server_prepares, information_schema = SETTINGS[request.param]
    prefix = "j_" + request.param.replace("-", "_")
    url = (f"jdbc:mysql://{login.host}:{login.port}/{login.database}?useServerPrepStmts={str(server_prepares).lower()}"
           f"&useInformationSchema={str(information_schema).lower()}"
           # No TLS on the SQL port: caching_sha2_password's full authentication needs the server's RSA key.
           "&sslMode=DISABLED&allowPublicKeyRetrieval=true")
    results = run_program(["java", "-cp", classpath, "ClientMatrix", url, login.user, login.password,
                           login.database, prefix])
    return results, prefix, login.database


def _obj(cls: str, text: str | None) -> list[Any]:
    return [cls, text]


INT, LONG, DEC, DATE = "java.lang.Integer", "java.lang.Long", "java.math.BigDecimal", "java.sql.Date"
LDT, STR, DBL, BOOL = "java.time.LocalDateTime", "java.lang.String", "java.lang.Double", "java.lang.Boolean"
NULL = "null"
NULLS = [_obj(NULL, None)] * 9


def test_connect(jdbc: tuple[Results, str, str]) -> None:
    results, _, database = jdbc
    assert value(results, "connect") == [database, database]


def test_ddl(jdbc: tuple[Results, str, str]) -> None:
    assert value(jdbc[0], "ddl") == "ok"


def test_insert(jdbc: tuple[Results, str, str]) -> None:
    assert value(jdbc[0], "insert") == 2


def test_select_types(jdbc: tuple[Results, str, str]) -> None:
    assert value(jdbc[0], "select_types") == [
        [_obj(INT, "1"), _obj(LONG, "9007199254740993"), _obj(DEC, "12345.67"), _obj(DATE, "2026-12-01"),
         _obj(LDT, "2026-12-01T10:00:01"), _obj(LDT, "2026-12-01T10:00:01.123"),
         _obj(LDT, "2026-12-01T10:00:01.123456"), _obj(STR, "Zürich ☃"), _obj(DBL, "2.5"), _obj(BOOL, "true")],
        [_obj(INT, "2"), *NULLS],
    ]


def test_result_metadata(jdbc: tuple[Results, str, str]) -> None:
    """ResultSetMetaData of an empty result: label, type name, java.sql.Types, class; scale where it counts."""
    columns = value(jdbc[0], "result_metadata")
    assert [(c[0], c[1], c[2], c[5]) for c in columns] == [
        ("id", "INT", 4, INT), ("big", "BIGINT", -5, LONG), ("amount", "DECIMAL", 3, DEC), ("d", "DATE", 91, DATE),
        ("dt0", "DATETIME", 93, LDT), ("dt3", "DATETIME", 93, LDT), ("dt6", "DATETIME", 93, LDT),
        ("txt", "VARCHAR", 12, STR), ("dbl", "DOUBLE", 8, DBL), ("flag", "BIT", -7, BOOL)]
    # Connector/J's precision: a DECIMAL's digits; for other types the column length sent (DATETIME(p):
    # 19, or 20 + p with a fraction). Its scale is a DECIMAL's decimals, 0 for any other type.
    assert {c[0]: (c[3], c[4]) for c in columns if c[0] in ("amount", "dt0", "dt3", "dt6")} == {
        "amount": (10, 2), "dt0": (19, 0), "dt3": (23, 0), "dt6": (26, 0)}


def test_time_travel(jdbc: tuple[Results, str, str]) -> None:
    assert value(jdbc[0], "time_travel") == [[[_obj(INT, "1"), _obj(STR, "before")]],
                                             [[_obj(INT, "1"), _obj(STR, "after")]]]


def test_prepared(jdbc: tuple[Results, str, str]) -> None:
    assert value(jdbc[0], "prepared") == [
        [_obj(INT, "3"), _obj(LONG, "-9007199254740993"), _obj(DEC, "-0.05"), _obj(DATE, "1999-12-31"),
         _obj(LDT, "2026-12-01T23:59:59"), _obj(LDT, "2026-12-01T23:59:59.999"),
         _obj(LDT, "2026-12-01T23:59:59.999999"), _obj(STR, "Zürich ☃ ?'"), _obj(DBL, "-1.25"), _obj(BOOL, "false")],
        [_obj(INT, "4"), *NULLS],
    ]


def test_batch(jdbc: tuple[Results, str, str]) -> None:
    assert value(jdbc[0], "batch") == [[1, 1, 1], [[_obj(INT, str(i)), _obj(STR, f"batch {i}")] for i in (10, 11, 12)]]


def test_get_tables(jdbc: tuple[Results, str, str]) -> None:
    results, prefix, database = jdbc
    mine = [t for t in value(results, "get_tables") if t[1].startswith(prefix + "_")]
    assert mine == [[database, f"{prefix}_dup", "TABLE"], [database, f"{prefix}_uniq", "TABLE"]]


def test_get_columns(jdbc: tuple[Results, str, str]) -> None:
    """Name, TYPE_NAME, DATA_TYPE, IS_NULLABLE and position of every column; COLUMN_SIZE and DECIMAL_DIGITS
    where MySQL fixes them (DECIMAL(10,2), VARCHAR(64), DATETIME(6): Connector/J gives a DATETIME no
    DECIMAL_DIGITS, against MySQL too).

    A BOOLEAN column is what Doris makes of it on each path: SHOW FULL COLUMNS says `boolean`
    (Types.BOOLEAN; the Doris SQLAlchemy dialect reads that word), information_schema says
    `tinyint(1)`, which Connector/J reads as MySQL's BIT."""
    _, prefix, _ = jdbc
    flag = ("BIT", -7) if prefix.endswith("infoschema") else ("BOOLEAN", 16)
    columns = value(jdbc[0], "get_columns")
    assert [(c[0], c[1], c[2], c[5], c[6]) for c in columns] == [
        (name, type_name, data_type, "YES", i + 1) for i, (name, type_name, data_type) in enumerate([
            ("id", "INT", 4), ("big", "BIGINT", -5), ("amount", "DECIMAL", 3), ("d", "DATE", 91),
            ("dt0", "DATETIME", 93), ("dt3", "DATETIME", 93), ("dt6", "DATETIME", 93), ("txt", "VARCHAR", 12),
            ("dbl", "DOUBLE", 8), ("flag", *flag)])]
    sizes = {c[0]: (c[3], c[4]) for c in columns if c[0] in ("amount", "txt", "dt6")}
    assert sizes == {"amount": (10, 2), "txt": (64, None), "dt6": (26, None)}, sizes


def test_get_primary_keys(jdbc: tuple[Results, str, str]) -> None:
    """A Unique Key table's key columns are its primary key to JDBC tools (upserts, editors)."""
    _, prefix, _ = jdbc
    assert value(jdbc[0], "get_primary_keys") == [[f"{prefix}_uniq", "id", 1]]


def test_get_index_info(jdbc: tuple[Results, str, str]) -> None:
    _, prefix, _ = jdbc
    assert value(jdbc[0], "get_index_info") == [[f"{prefix}_uniq", False, "PRIMARY", "id"]]


def test_error_unknown_table(jdbc: tuple[Results, str, str]) -> None:
    assert value(jdbc[0], "error_unknown_table") == [1146, "42S02", 1]


def test_error_syntax(jdbc: tuple[Results, str, str]) -> None:
    assert value(jdbc[0], "error_syntax") == [1064, "42000", 1]
