"""Client matrix, Node mysql2 (from npm): tests/clients/node/matrix.js runs every check (`query` for text,
`execute` for server-side prepared statements) and the tests here compare what mysql2 returned, as
[JS type, text], exactly. The script runs with TZ=UTC, so a DATE or DATETIME read as a JS Date is midnight
or that time in UTC."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.clients import install
from tests.clients.external import Results, run_program, value
from tests.clients.matrix import Login

pytestmark = pytest.mark.integration

PREFIX = "n"
XFAIL: dict[tuple[str, str | None], str] = {}


@pytest.fixture(scope="module")
def mysql2(login: Login) -> Results:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node not found on PATH — install Node.js 18+ (apt-get install nodejs npm)")
    try:
        node_modules = install.mysql2()
    except install.ClientUnavailable as exc:
        pytest.skip(str(exc))
    script = Path(__file__).parent / "node" / "matrix.js"
    return run_program([node, str(script), login.host, str(login.port), login.user, login.password, login.database,
                        PREFIX], env={**os.environ, "TZ": "UTC", "NODE_PATH": str(node_modules)})


def _v(kind: str, text: str | None) -> list[Any]:
    return [kind, text]


NULLS = [_v("null", None)] * 9


def test_connect(mysql2: Results, login: Login) -> None:
    assert value(mysql2, "connect") == [login.database]


def test_ddl(mysql2: Results) -> None:
    assert value(mysql2, "ddl") == "ok"


def test_insert(mysql2: Results) -> None:
    assert value(mysql2, "insert") == 2


def test_select_types(mysql2: Results) -> None:
    """mysql2's defaults: DECIMAL as a string, a BIGINT past 2^53 as a string (supportBigNumbers), dates as
    JS Dates (milliseconds), BOOLEAN as the number 1."""
    assert value(mysql2, "select_types") == [
        [_v("number", "1"), _v("string", "9007199254740993"), _v("string", "12345.67"),
         _v("Date", "2026-12-01T00:00:00.000Z"), _v("Date", "2026-12-01T10:00:01.000Z"),
         _v("Date", "2026-12-01T10:00:01.123Z"), _v("Date", "2026-12-01T10:00:01.123Z"), _v("string", "Zürich ☃"),
         _v("number", "2.5"), _v("number", "1")],
        [_v("number", "2"), *NULLS],
    ]


def test_select_date_strings(mysql2: Results) -> None:
    assert value(mysql2, "select_date_strings") == [
        ["2026-12-01", "2026-12-01 10:00:01", "2026-12-01 10:00:01.123", "2026-12-01 10:00:01.123456"]]


def test_result_metadata(mysql2: Results) -> None:
    """The fields of an empty result: name and MySQL type code; decimals where MySQL fixes them."""
    fields = value(mysql2, "result_metadata")
    assert [(f[0], f[1]) for f in fields] == [
        ("id", 3), ("big", 8), ("amount", 246), ("d", 10), ("dt0", 12), ("dt3", 12), ("dt6", 12), ("txt", 253),
        ("dbl", 5), ("flag", 1)]
    assert {f[0]: f[3] for f in fields if f[0] in ("amount", "dt0", "dt3", "dt6")} == {
        "amount": 2, "dt0": 0, "dt3": 3, "dt6": 6}


def test_time_travel(mysql2: Results) -> None:
    assert value(mysql2, "time_travel") == [[[_v("number", "1"), _v("string", "before")]],
                                            [[_v("number", "1"), _v("string", "after")]]]


def test_prepared(mysql2: Results) -> None:
    """`execute` (binary protocol) with a number, a BigInt, a decimal string, JS Dates, a DATETIME(6)
    string, non-ASCII text with a quote and a `?`, a double, a boolean, and NULLs; read back with dateStrings."""
    assert value(mysql2, "prepared") == [
        [_v("number", "3"), _v("string", "-9007199254740993"), _v("string", "-0.05"), _v("string", "1999-12-31"),
         _v("string", "2026-12-01 23:59:59"), _v("string", "2026-12-01 23:59:59.999"),
         _v("string", "2026-12-01 23:59:59.999999"), _v("string", "Zürich ☃ ?'"), _v("number", "-1.25"),
         _v("number", "0")],
        [_v("number", "4"), *NULLS],
    ]


def test_show_tables(mysql2: Results) -> None:
    assert value(mysql2, "show_tables") == [[_v("string", f"{PREFIX}_dup")], [_v("string", f"{PREFIX}_uniq")]]


def test_error_unknown_table(mysql2: Results) -> None:
    assert value(mysql2, "error_unknown_table") == [1146, "42S02", 1]


def test_error_syntax(mysql2: Results) -> None:
    assert value(mysql2, "error_syntax") == [1064, "42000", 1]
