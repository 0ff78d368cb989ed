"""Logins as Doris checks them: the lockout policy of CREATE/ALTER USER (FAILED_LOGIN_ATTEMPTS,
PASSWORD_LOCK_TIME, ACCOUNT_UNLOCK) counted per user across connections, and the database a login
names, refused before the handshake's OK (1049 unknown, 1044 not allowed)."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Iterator

import pymysql
import pytest
from pymysql.connections import Connection as Conn

from tests.query.sqlkit import fails, rows, run, scalar

pytestmark = pytest.mark.integration


def _login(user: str, password: str, database: str | None = None) -> Conn:
    return pymysql.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user=user, password=password,
                           database=database, autocommit=True, connect_timeout=30)


_SQLSTATES = {1044: "42000", 1045: "28000", 1049: "42000", 3955: "HY000"}


def _refused(user: str, password: str, database: str | None = None) -> tuple[int, str]:
    """The error code and message a login gets, after checking the SQLSTATE MySQL sends with that code."""
    with pytest.raises(pymysql.MySQLError) as refused:
        _login(user, password, database).close()
    code = int(refused.value.args[0])
    if code in _SQLSTATES:
        assert getattr(refused.value, "sqlstate", None) == _SQLSTATES[code], (code, refused.value)
    return code, str(refused.value.args[1])


@pytest.fixture
def name(conn: Conn) -> Iterator[str]:
    found = f"lk_{uuid.uuid4().hex[:8]}"
    yield found
    run(conn, f"DROP USER IF EXISTS '{found}'")


def test_failed_logins_from_different_connections_lock_the_user_until_the_lock_time_passes(
        conn: Conn, name: str) -> None:
    run(conn, f"CREATE USER '{name}' IDENTIFIED BY 'right' FAILED_LOGIN_ATTEMPTS 3 PASSWORD_LOCK_TIME 3 SECOND")
    _login(name, "right").close()
    for _ in range(3):  # each attempt on a connection of its own
        assert _refused(name, "wrong")[0] == 1045
    code, message = _refused(name, "right")
    assert code == 3955, message
    assert "blocked for 3 second(s)" in message and "3 consecutive failed logins" in message
    assert _refused(name, "wrong")[0] == 3955, "a locked account is refused before its password is checked"
    time.sleep(3.5)
    with _login(name, "right") as back:
        assert rows(back, "SELECT 1") == [(1,)]
    assert _refused(name, "wrong")[0] == 1045, "a login that got in starts the count afresh"
    _login(name, "right").close()


def test_parallel_guesses_are_counted_together(conn: Conn, name: str) -> None:
    run(conn, f"CREATE USER '{name}' IDENTIFIED BY 'right' FAILED_LOGIN_ATTEMPTS 2 PASSWORD_LOCK_TIME 1 DAY")
    codes: list[int] = []

    def guess() -> None:
        try:
            _login(name, f"guess-{uuid.uuid4().hex[:6]}").close()
        except pymysql.MySQLError as exc:
            codes.append(int(exc.args[0]))

    threads = [threading.Thread(target=guess) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert len(codes) == 8 and set(codes) <= {1045, 3955}, codes
    assert codes.count(1045) <= 2, f"more wrong passwords were checked than FAILED_LOGIN_ATTEMPTS allows: {codes}"
    assert _refused(name, "right")[0] == 3955


def test_account_unlock_and_a_policy_change_end_the_lock(conn: Conn, name: str) -> None:
    run(conn, f"CREATE USER '{name}' IDENTIFIED BY 'right' FAILED_LOGIN_ATTEMPTS 2 PASSWORD_LOCK_TIME UNBOUNDED")
    for _ in range(2):
        assert _refused(name, "wrong")[0] == 1045
    code, message = _refused(name, "right")
    assert code == 3955 and "9999 second(s) remaining" in message, message
    run(conn, f"ALTER USER '{name}' ACCOUNT_UNLOCK")
    _login(name, "right").close()
    for _ in range(2):
        assert _refused(name, "wrong")[0] == 1045
    assert _refused(name, "right")[0] == 3955
    run(conn, f"ALTER USER '{name}' FAILED_LOGIN_ATTEMPTS 0")  # the policy off: the lock is gone with it
    _login(name, "right").close()
    for _ in range(3):
        assert _refused(name, "wrong")[0] == 1045
    _login(name, "right").close()


def test_lockout_statements_are_checked(conn: Conn, name: str) -> None:
    fails(conn, f"CREATE USER '{name}' PASSWORD_EXPIRE NEVER", 1235, "PASSWORD_EXPIRE")
    fails(conn, f"CREATE USER '{name}' FAILED_LOGIN_ATTEMPTS 40000", 1064, "FAILED_LOGIN_ATTEMPTS")
    fails(conn, f"ALTER USER '{name}' ACCOUNT_UNLOCK", 1396, "does not exist")
    run(conn, f"ALTER USER IF EXISTS '{name}' ACCOUNT_UNLOCK")
    fails(conn, "ALTER USER root ACCOUNT_UNLOCK", 1396, "root")
    run(conn, f"CREATE USER '{name}' IDENTIFIED BY 'old'")
    with _login(name, "old") as own:
        fails(own, f"ALTER USER '{name}' ACCOUNT_UNLOCK", 1227, "ADMIN_PRIV")
    run(conn, f"ALTER USER '{name}' IDENTIFIED BY 'new' FAILED_LOGIN_ATTEMPTS 5 PASSWORD_LOCK_TIME 2 HOUR")
    assert _refused(name, "old")[0] == 1045
    _login(name, "new").close()


def test_a_login_to_an_unknown_or_forbidden_database_is_refused(conn: Conn, db: str, name: str) -> None:
    run(conn, f"CREATE USER '{name}' IDENTIFIED BY 'pw'")
    code, message = _refused(name, "pw", db)
    assert code == 1044 and db in message and name in message, message
    code, message = _refused(name, "pw", f"no_such_{uuid.uuid4().hex[:6]}")
    assert code == 1049 and "Unknown database" in message, message
    assert _refused("root", "", f"no_such_{uuid.uuid4().hex[:6]}")[0] == 1049
    with _login(name, "pw", "information_schema") as anywhere:
        assert scalar(anywhere, "SELECT DATABASE()") == "information_schema"
    run(conn, "CREATE TABLE t (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, f"GRANT SELECT_PRIV ON {db}.t TO '{name}'")
    with _login(name, "pw", db) as allowed:
        assert scalar(allowed, "SELECT DATABASE()") == db
        assert rows(allowed, "SELECT count(*) FROM t") == [(0,)]


def test_parallel_guesses_without_a_policy_are_checked_one_at_a_time(conn: Conn, name: str) -> None:
    """Without a lockout policy failures still slow the guessing down, and parallel connections do not
    multiply the rate: after one failure, four simultaneous guesses are checked 0.5 s apart."""
    run(conn, f"CREATE USER '{name}' IDENTIFIED BY 'right'")
    assert _refused(name, "wrong")[0] == 1045
    answered: list[float] = []
    started = time.monotonic()

    def guess() -> None:
        try:
            _login(name, f"guess-{uuid.uuid4().hex[:6]}").close()
        except pymysql.MySQLError as exc:
            assert exc.args[0] == 1045
            answered.append(time.monotonic() - started)

    threads = [threading.Thread(target=guess) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert len(answered) == 4
    assert max(answered) >= 1.4, f"the guesses were checked in parallel: answered after {sorted(answered)} s"
