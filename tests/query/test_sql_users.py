"""Users and privileges on the SQL port: logging in, every privilege and what it lets through, a
user who cannot see what they may not, REVOKE, and passwords kept out of logs, events and SHOW."""

from __future__ import annotations

import os
import time
import uuid

import pymysql
import pytest
from confluent_kafka import Consumer, TopicPartition

from infra.layout import Layout
from schemas.config import load_settings
from schemas.topics import EVENTS_TOPIC
from tests.query.routine_load_kit import kafka_source, new_topic
from tests.query.sqlkit import Conn, fails, rows, run

pytestmark = pytest.mark.integration


def _login(user: str, password: str, database: str | None = None) -> Conn:
    return pymysql.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user=user, password=password,
                           database=database, autocommit=True, connect_timeout=20)


def _tables(conn: Conn) -> None:
    for name in ("open", "closed"):
        run(conn, f"CREATE TABLE {name} (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                  'PROPERTIES ("enable_time_travel" = "true")')
        run(conn, f"INSERT INTO {name} VALUES (1, 10)")


def test_login_needs_the_right_password_and_an_existing_user(conn: Conn, user: tuple[str, str]) -> None:
    name, password = user
    assert rows(_login(name, password), "SELECT 1") == [(1,)]
    for who, what in ((name, "wrong"), (name, ""), (f"nobody_{uuid.uuid4().hex[:6]}", "x")):
        with pytest.raises(pymysql.MySQLError) as refused:
            _login(who, what)
        assert refused.value.args[0] == 1045 and "Access denied" in refused.value.args[1]
    fails(conn, f"CREATE USER '{name}'", 1396, "exists")
    fails(conn, "CREATE USER root", 1396, "built in")
    run(conn, f"CREATE USER IF NOT EXISTS '{name}'")


def test_failed_logins_are_logged_without_the_password_and_slowed_down(user: tuple[str, str]) -> None:
    name, _ = user
    secret_guess = f"guess-{uuid.uuid4().hex}"
    took = []
    for _ in range(3):
        started = time.monotonic()
        with pytest.raises(pymysql.MySQLError):
            _login(name, secret_guess)
        took.append(time.monotonic() - started)
    assert took[2] >= 0.9 and took[2] > took[0], took  # 0 s, 0.5 s, 1 s …
    log = Layout(load_settings()).log_file("sql").read_text(errors="replace")
    assert f"login failed for user '{name}' (3 in a row)" in log
    assert secret_guess not in log


def test_each_privilege_lets_through_what_it_names(conn: Conn, db: str, user: tuple[str, str]) -> None:
    name, password = user
    _tables(conn)
    me = _login(name, password)
    fails(me, f"SELECT * FROM {db}.open", 1142, "SELECT_PRIV", f"{db}.open")
    fails(me, f"USE {db}", 1044, db)
    run(conn, f"GRANT SELECT_PRIV ON {db}.open TO '{name}'")
    run(me, f"USE {db}")
    assert rows(me, "SELECT k, v FROM open") == [(1, 10)]
    instant = rows(conn, "SHOW TIME TRAVEL ON open")[-1][2]
    assert rows(me, f"SELECT k, v FROM open FOR TIME AS OF '{instant}'") == [(1, 10)]  # history too
    fails(me, "SELECT * FROM closed", 1142, "SELECT_PRIV", f"{db}.closed")
    fails(me, "SELECT * FROM open JOIN closed USING (k)", 1142, f"{db}.closed")
    fails(me, "SHOW CREATE TABLE closed", 1142, "closed")
    fails(me, "INSERT INTO open VALUES (2, 20)", 1142, "LOAD_PRIV")
    fails(me, "ALTER TABLE open ADD COLUMN w INT", 1142, "ALTER_PRIV")
    fails(me, "CREATE TABLE mine (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1", 1142, "CREATE_PRIV")
    fails(me, "DROP TABLE open", 1142, "DROP_PRIV")
    fails(me, f"CREATE ROUTINE LOAD j ON open {kafka_source(new_topic())}", 1142, "LOAD_PRIV")
    fails(me, "ADMIN COMPACT TABLE open WHERE TYPE = 'BASE'", 1227, "ADMIN_PRIV")
    fails(me, "CREATE STORAGE POLICY p PROPERTIES ('storage_resource' = 'r', 'cooldown_ttl' = '1')", 1227, "ADMIN")
    fails(me, "SHOW RESOURCES", 1227, "ADMIN_PRIV")
    fails(me, "CREATE USER other", 1227, "ADMIN_PRIV")
    fails(me, f"GRANT SELECT_PRIV ON {db}.closed TO '{name}'", 1227, "ADMIN_PRIV")

    run(conn, f"GRANT LOAD_PRIV, ALTER_PRIV ON {db}.open TO '{name}'")
    run(me, "INSERT INTO open VALUES (2, 20)")
    run(me, "UPDATE open SET v = 21 WHERE k = 2")
    run(me, "DELETE FROM open WHERE k = 1")
    run(me, "ALTER TABLE open ADD COLUMN w INT")
    assert rows(me, "SELECT k, v FROM open") == [(2, 21)]
    run(conn, f"GRANT CREATE_PRIV, DROP_PRIV ON {db}.* TO '{name}'")
    run(me, "CREATE TABLE mine (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    fails(me, "INSERT INTO mine VALUES (1)", 1142, "LOAD_PRIV")  # creating a table is not loading it
    run(me, "DROP TABLE mine")
    run(conn, f"GRANT ADMIN_PRIV ON *.* TO '{name}'")
    run(me, "ADMIN COMPACT TABLE open WHERE TYPE = 'BASE'")
    assert rows(me, "SELECT count(*) FROM closed") == [(1,)]  # ADMIN_PRIV covers everything

    run(conn, f"REVOKE ADMIN_PRIV ON *.* FROM '{name}'")
    run(conn, f"REVOKE SELECT_PRIV ON {db}.open FROM '{name}'")
    fails(me, "SELECT * FROM open", 1142, "SELECT_PRIV")
    grants = rows(conn, f"SHOW GRANTS FOR '{name}'")
    assert grants == [(f"'{name}'@'%'", f"{db}.*: CREATE_PRIV, DROP_PRIV; {db}.open: LOAD_PRIV, ALTER_PRIV")]


def test_a_user_sees_only_what_it_may(conn: Conn, db: str, user: tuple[str, str]) -> None:
    name, password = user
    _tables(conn)
    run(conn, f"GRANT SELECT_PRIV ON {db}.open TO '{name}'")
    me = _login(name, password, db)
    assert sorted(r[0] for r in rows(me, "SHOW DATABASES")) == sorted(["information_schema", db])
    assert rows(me, "SHOW TABLES") == [("open",)]
    assert rows(me, f"SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_SCHEMA = '{db}'") == [("open",)]
    assert {r[0] for r in rows(me, f"SELECT DISTINCT TABLE_NAME FROM information_schema.columns "
                                   f"WHERE TABLE_SCHEMA = '{db}'")} == {"open"}
    assert sorted(r[0] for r in rows(me, "SELECT SCHEMA_NAME FROM information_schema.schemata")) == sorted(
        ["information_schema", db])
    assert rows(me, "SHOW GRANTS") == [(f"'{name}'@'%'", f"{db}.open: SELECT_PRIV")]
    fails(me, "SHOW ALL GRANTS", 1227, "ADMIN_PRIV")
    fails(me, "SHOW GRANTS FOR root", 1227, "ADMIN_PRIV")


def test_passwords_change_and_never_show(conn: Conn, user: tuple[str, str]) -> None:
    name, password = user
    me = _login(name, password)
    fails(me, "SET PASSWORD FOR root = 'x'", 1227, "ADMIN_PRIV")
    run(me, "SET PASSWORD = PASSWORD('second-one')")
    with pytest.raises(pymysql.MySQLError):
        _login(name, password)
    _login(name, "second-one").close()
    run(conn, f"SET PASSWORD FOR '{name}'@'%' = 'third-one'")
    _login(name, "third-one").close()
    shown = " ".join(str(r) for r in rows(conn, "SHOW ALL GRANTS"))
    assert password not in shown and "third-one" not in shown and name in shown
    consumer = Consumer(load_settings().kafka_client(**{"group.id": f"strata-test-{uuid.uuid4().hex}",
                                                        "enable.auto.commit": False}))
    meta = consumer.list_topics(EVENTS_TOPIC, timeout=10).topics[EVENTS_TOPIC]
    consumer.assign([TopicPartition(EVENTS_TOPIC, p, 0) for p in meta.partitions])
    seen = b""
    while batch := consumer.consume(2000, timeout=2):
        seen += b"".join(m.value() or b"" for m in batch if m.error() is None)
    consumer.close()
    assert name.encode() in seen, "the user's events were not read"
    for secret in (password, "second-one", "third-one"):
        assert secret.encode() not in seen


def test_a_dropped_user_is_locked_out(conn: Conn) -> None:
    name = f"u_{uuid.uuid4().hex[:8]}"
    run(conn, f"CREATE USER '{name}' IDENTIFIED BY 'pw'")
    me = _login(name, "pw")
    run(conn, f"DROP USER '{name}'")
    # Every statement of the dropped user's open session is refused, a SELECT without FROM too (it runs
    # on the engine and its access check like any other); the connection itself keeps answering.
    for sql in ("SELECT 1 FROM information_schema.schemata", "SELECT 1", "SELECT DATABASE()"):
        with pytest.raises(pymysql.MySQLError) as caught:
            run(me, sql)
        assert caught.value.args[0] == 1045 and "dropped" in str(caught.value.args[1])
    with pytest.raises(pymysql.MySQLError):
        _login(name, "pw")
    fails(conn, f"DROP USER '{name}'", 1105, "does not exist")
    fails(conn, f"GRANT SELECT_PRIV ON *.* TO '{name}'", 1105, "does not exist")
    fails(conn, "CREATE USER 'x'@'10.0.0.1'", 1235, "only the host '%'")


class _Sha2Client(pymysql.connections.Connection):  # type: ignore[misc]
    """A client whose own plugin is caching_sha2_password (MySQL 8's default, MySQL 9's only password
    plugin): it answers the handshake with a SHA-256 scramble whatever the server announced."""

    def _get_server_information(self) -> None:
        super()._get_server_information()
        self._auth_plugin_name = "caching_sha2_password"


def _sha2_login(user: str, password: str) -> Conn:
    return _Sha2Client(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user=user, password=password,
                       autocommit=True, connect_timeout=20)


def test_a_caching_sha2_password_client_logs_in_with_the_servers_public_key(user: tuple[str, str]) -> None:
    name, password = user
    conn = _sha2_login(name, password)
    assert rows(conn, "SELECT current_user()")[0][0].startswith(name)
    # The exchange took the full path: the key was asked for and sent.
    assert conn.server_public_key and conn.server_public_key.startswith(b"-----BEGIN PUBLIC KEY-----")
    for who, what in ((name, "wrong"), (f"nobody_{uuid.uuid4().hex[:6]}", "x")):
        with pytest.raises(pymysql.MySQLError) as refused:
            _sha2_login(who, what)
        assert refused.value.args[0] == 1045 and "Access denied" in refused.value.args[1]
    root = _sha2_login("root", os.environ.get("STRATA_ROOT_PASSWORD", ""))  # empty: the fast "no password" path
    assert rows(root, "SELECT 1") == [(1,)]
