"""Client matrix, the `mariadb` (or `mysql`) command-line client from Debian: `-e` scripts in batch mode
(tab-separated, NULL as `NULL`) as shell scripts use it, `\\s` status, and errors as the CLI prints them.
It has no prepared statements of its own (the binary protocol is covered by the drivers)."""

from __future__ import annotations

import re
import subprocess
import time

import pytest

from tests.clients import install
from tests.clients.matrix import (
    CITY,
    SYNTAX_ERROR,
    TIME_TRAVEL_GAP_AFTER_S,
    TIME_TRAVEL_GAP_S,
    UNKNOWN_TABLE,
    Login,
    Tables,
)

pytestmark = pytest.mark.integration

TABLES = Tables("cli")
XFAIL: dict[tuple[str, str | None], str] = {}


@pytest.fixture(scope="module")
def cli() -> str:
    try:
        return install.mysql_cli()
    except install.ClientUnavailable as exc:
        pytest.skip(str(exc))


def _run(cli: str, login: Login, script: str, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([cli, f"--host={login.host}", f"--port={login.port}", f"--user={login.user}",
                           f"--password={login.password}", "--default-character-set=utf8mb4", "--batch", *options,
                           login.database, "-e", script], capture_output=True, text=True, timeout=60)


def _ok(cli: str, login: Login, script: str, *options: str) -> str:
    proc = _run(cli, login, script, *options)
    assert proc.returncode == 0, f"{script!r}: exit {proc.returncode}: {proc.stderr}"
    return proc.stdout


def test_connect(cli: str, login: Login) -> None:
    assert _ok(cli, login, "SELECT DATABASE()", "--skip-column-names") == f"{login.database}\n"


def test_status(cli: str, login: Login) -> None:
    """`\\s` prints the database and `Server version: <@@version> <@@version_comment>`; Doris' version is 5.7.99."""
    status = _ok(cli, login, "\\s")
    assert re.search(rf"^Current database:\s+{login.database}$", status, re.M), status
    version, comment = _ok(cli, login, "SELECT @@version, @@version_comment", "--skip-column-names").rstrip(
        "\n").split("\t")
    assert version == "5.7.99" and "Strata" in comment and "Doris" in comment, (version, comment)
    assert re.search(rf"^Server version:\s+{re.escape(version + ' ' + comment)}$", status, re.M), status


def test_ddl_and_insert(cli: str, login: Login) -> None:
    _ok(cli, login, f"{TABLES.create_dup()}; {TABLES.create_uniq()}; {TABLES.insert_rows()}")


def test_select_types(cli: str, login: Login) -> None:
    out = _ok(cli, login, f"SHOW TABLES; {TABLES.select_rows()}")
    assert out.splitlines() == [
        f"Tables_in_{login.database}", TABLES.dup, TABLES.uniq,
        "id\tbig\tamount\td\tdt0\tdt3\tdt6\ttxt\tdbl\tflag",
        f"1\t9007199254740993\t12345.67\t2026-12-01\t2026-12-01 10:00:01\t2026-12-01 10:00:01.123\t"
        f"2026-12-01 10:00:01.123456\t{CITY}\t2.5\t1",
        "2" + "\tNULL" * 9]


def test_time_travel(cli: str, login: Login) -> None:
    _ok(cli, login, f"INSERT INTO {TABLES.uniq} VALUES (1, 'before')")
    time.sleep(TIME_TRAVEL_GAP_S)
    instant = _ok(cli, login, "SELECT NOW(6)", "--skip-column-names").strip()
    time.sleep(TIME_TRAVEL_GAP_AFTER_S)
    _ok(cli, login, f"INSERT INTO {TABLES.uniq} VALUES (1, 'after')")
    assert _ok(cli, login, f"{TABLES.time_travel(instant)}; SELECT id, v FROM {TABLES.uniq}",
               "--skip-column-names") == "1\tbefore\n1\tafter\n"


def _error(cli: str, login: Login, sql: str, code: int, sqlstate: str) -> None:
    proc = _run(cli, login, sql)
    assert proc.returncode == 1, proc
    # The client echoes the failed statement between dashes first, then the error line.
    assert re.search(rf"^ERROR {code} \({sqlstate}\) at line 1: ", proc.stderr, re.M), proc.stderr


def test_error_unknown_table(cli: str, login: Login) -> None:
    _error(cli, login, *UNKNOWN_TABLE)


def test_error_syntax(cli: str, login: Login) -> None:
    _error(cli, login, *SYNTAX_ERROR)
