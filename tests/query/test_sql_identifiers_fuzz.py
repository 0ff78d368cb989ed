"""Hostile identifiers through the SQL port (integration): database, table, column and partition
names with path characters (`../`, `/`, `\\`), 300+ characters, NUL bytes, quotes, unicode.

Every statement gets a MySQL error or does what it says — the object it created is usable under
exactly that name — and the server stays up. No user string becomes a path (DESIGN §7): every file
under the data roots has a path made of ids (`storage.paths.rowset_path`), and no file or directory
named after one appears anywhere under STRATA_HOME, next to it, in /tmp or in the server's working
directory."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas.config import REPO_ROOT
from schemas.config import settings as strata_settings
from tests.query.sqlkit import connect, fails, rows, run

# In every hostile name, so a file or directory made from one can be found by name.
MARK = "zqxfz"

NAMES = [
    f"../{MARK}up", f"../../{MARK}up2", f"a/{MARK}b", f"a\\{MARK}b", f"/{MARK}abs", f"/tmp/{MARK}tmp",
    f"..\\..\\{MARK}win", f"{MARK}" + "x" * 300, f"{MARK}\x00nul", f"{MARK}'q", f'{MARK}"dq', f"{MARK}`bt",
    f"{MARK}字é😀", f"{MARK} trailing ", f"{MARK}%_*?", f"{MARK};DROP", f"{MARK}\nnl", f"{MARK}\u202erlo",
    f"{MARK}\x1b[31m", f"{MARK}.", f"{MARK}..", f"./{MARK}dot", f"~/{MARK}home", f"{MARK}$HOME",
]
_HOSTILE = st.text(alphabet=st.sampled_from(list("./\\`'\"\x00\x01 \t\n;%_*?~$#-é字😀") + ["\u202e", "\ufeff", "a"]),
                   min_size=1, max_size=12)


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def _statement(conn: pymysql.connections.Connection, sql: str) -> bool:
    """True when `sql` succeeded; False on a MySQL error from the server. A lost connection fails."""
    try:
        run(conn, sql)
        return True
    except pymysql.MySQLError as exc:
        code = exc.args[0] if exc.args else None
        assert isinstance(code, int) and not 2000 <= code < 3000, f"{sql!r:.200}: client-side failure {exc!r:.300}"
        assert exc.args[1], f"{sql!r:.200}: an error without a message"
        return False


def _cells(found: list[tuple]) -> set[object]:
    return {cell for row in found for cell in row}


def _try_database(conn: pymysql.connections.Connection, name: str) -> None:
    if not _statement(conn, f"CREATE DATABASE {quote(name)}"):
        return
    try:
        assert name in _cells(rows(conn, "SHOW DATABASES")), f"created database {name!r} is not listed as such"
        run(conn, f"USE {quote(name)}")
        run(conn, "CREATE TABLE t (k INT, v VARCHAR(20)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
        run(conn, "INSERT INTO t VALUES (1, 'one')")
        assert rows(conn, f"SELECT k, v FROM {quote(name)}.t") == [(1, "one")]
    finally:
        run(conn, f"DROP DATABASE {quote(name)} FORCE")


def _try_table(conn: pymysql.connections.Connection, name: str) -> None:
    if not _statement(conn, f"CREATE TABLE {quote(name)} (k INT, v VARCHAR(20)) DUPLICATE KEY(k) "
                            "DISTRIBUTED BY HASH(k) BUCKETS 2"):
        return
    assert name in _cells(rows(conn, "SHOW TABLES")), f"created table {name!r} is not listed as such"
    run(conn, f"INSERT INTO {quote(name)} VALUES (1, 'one'), (2, 'two')")
    assert sorted(rows(conn, f"SELECT k, v FROM {quote(name)}")) == [(1, "one"), (2, "two")]
    assert rows(conn, f"SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_NAME = {literal(name)}") \
        == [(name,)]
    run(conn, f"DROP TABLE {quote(name)} FORCE")


def _try_column(conn: pymysql.connections.Connection, name: str) -> None:
    table = f"c_{uuid.uuid4().hex[:8]}"
    if not _statement(conn, f"CREATE TABLE {table} (k INT, {quote(name)} VARCHAR(20)) DUPLICATE KEY(k) "
                            "DISTRIBUTED BY HASH(k) BUCKETS 1"):
        return
    assert name in [r[0] for r in rows(conn, f"DESC {table}")], f"column {name!r} is not described as such"
    run(conn, f"INSERT INTO {table} (k, {quote(name)}) VALUES (1, 'x')")
    with conn.cursor() as cur:
        cur.execute(f"SELECT {quote(name)} FROM {table}")
        assert [tuple(r) for r in cur.fetchall()] == [("x",)]
        assert cur.description[0][0] == name
    run(conn, f"DROP TABLE {table} FORCE")


def _try_partition(conn: pymysql.connections.Connection, name: str) -> None:
    table = f"p_{uuid.uuid4().hex[:8]}"
    if not _statement(conn, f"CREATE TABLE {table} (k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) "
                            f"(PARTITION {quote(name)} VALUES LESS THAN ('10'), PARTITION p_rest VALUES LESS THAN "
                            "MAXVALUE) DISTRIBUTED BY HASH(k) BUCKETS 1"):
        return
    assert name in _cells(rows(conn, f"SHOW PARTITIONS FROM {table}")), f"partition {name!r} is not listed"
    run(conn, f"INSERT INTO {table} VALUES (1, 1), (20, 2)")
    assert rows(conn, f"SELECT k FROM {table} PARTITION ({quote(name)})") == [(1,)]
    dropped = _statement(conn, f"ALTER TABLE {table} DROP PARTITION {quote(name)}")
    assert sorted(rows(conn, f"SELECT k FROM {table}")) == ([(20,)] if dropped else [(1,), (20,)])
    run(conn, f"DROP TABLE {table} FORCE")


def _exercise(conn: pymysql.connections.Connection, db: str, name: str) -> None:
    for attempt in (_try_database, _try_table, _try_column, _try_partition):
        run(conn, f"USE {db}")
        attempt(conn, name)
    assert rows(conn, "SELECT 1") == [(1,)], "the connection is unusable"


# -- the filesystem ------------------------------------------------------------------------------
# Rowset files, and merge-on-write delete bitmaps (`v<version>_<uuid>.bitmap`, storage/delete_bitmaps.py).
_ID_PATH = re.compile(r"t\d+/p\d+/b\d+/(\.?[0-9a-f]+\.parquet(\.tmp)?|v\d+_[0-9a-f]{32}\.bitmap)")


def _marked(root: Path, *, recursive: bool = True, skip: tuple[str, ...] = ()) -> list[str]:
    if not root.is_dir():
        return []
    if not recursive:
        return [str(p) for p in root.iterdir() if MARK in p.name]
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in skip]
        found += [os.path.join(dirpath, n) for n in (*dirnames, *filenames) if MARK in n]
    return found


def _snapshot() -> dict[str, list[str]]:
    config = strata_settings()
    home = config.home.resolve()
    try:
        server_cwd = Path(os.readlink(f"/proc/{(config.run_dir / 'sql.pid').read_text().strip()}/cwd"))
    except OSError:
        server_cwd = REPO_ROOT  # where infra/up starts it
    marked = {*_marked(home), *_marked(home.parent, recursive=False), *_marked(Path("/tmp"), recursive=False),
              *_marked(server_cwd, skip=(".venv", ".git", "node_modules", "__pycache__", ".hypothesis"))}
    return {
        "marked": sorted(marked),
        "home": sorted(p.name for p in home.iterdir()),
        "parent": sorted(p.name for p in home.parent.iterdir()),
    }


def _data_files_are_ids() -> None:
    config = strata_settings()
    for root in (config.ssd_dir, config.hdd_dir):
        for path in root.rglob("*"):
            if path.is_file():
                relative = path.relative_to(root).as_posix()
                assert _ID_PATH.fullmatch(relative), f"{path} is not a path of ids"


@pytest.fixture(scope="module")
def filesystem() -> Iterator[None]:
    before = _snapshot()
    yield
    after = _snapshot()
    assert after["marked"] == [], f"files named after user strings: {after['marked']}"
    assert set(after["home"]) <= set(before["home"]) | {"cache", "secrets"}, (before["home"], after["home"])
    assert set(after["parent"]) <= set(before["parent"]), (before["parent"], after["parent"])
    _data_files_are_ids()


@pytest.mark.parametrize("name", NAMES, ids=lambda n: repr(n)[:30])
def test_hostile_names_are_refused_or_work(filesystem: None, conn: pymysql.connections.Connection, db: str,
                                           name: str) -> None:
    _exercise(conn, db, name)


@settings(max_examples=10, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.tuples(_HOSTILE, _HOSTILE).map(lambda parts: parts[0] + MARK + parts[1]))
def test_generated_names_are_refused_or_work(filesystem: None, conn: pymysql.connections.Connection, db: str,
                                             name: str) -> None:
    _exercise(conn, db, name)


def test_select_from_named_partitions_reads_only_those(conn: pymysql.connections.Connection, db: str) -> None:
    """Found by the fuzz above: `FROM t PARTITION (p)` used to read every partition, and an unknown
    name was no error."""
    run(conn, "CREATE TABLE sel (k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS "
              "THAN ('10'), PARTITION p2 VALUES LESS THAN ('20'), PARTITION p3 VALUES LESS THAN MAXVALUE) "
              "DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO sel VALUES (1, 1), (15, 2), (25, 3)")
    assert rows(conn, "SELECT k FROM sel PARTITION (p2)") == [(15,)]
    assert sorted(rows(conn, "SELECT s.k FROM sel PARTITION (P1, p3) s")) == [(1,), (25,)]
    assert rows(conn, "SELECT count(*) FROM sel") == [(3,)]
    fails(conn, "SELECT k FROM sel PARTITION (nope)", 1735, "Unknown partition 'nope'")


def test_the_server_is_still_up_after_all_of_it(filesystem: None) -> None:
    fresh = connect()
    try:
        assert rows(fresh, "SELECT 1") == [(1,)]
    finally:
        fresh.close()
