"""Group commit (`SET group_commit = sync_mode | async_mode | off_mode`): small INSERT … VALUES
statements share commits, every row lands exactly once, a bad row fails only its statement, order is
kept across batched statements, and other statements bypass the batch."""

from __future__ import annotations

import threading
import time

import pymysql
import pytest

from tests.query.sqlkit import connect, fails, rows, run, scalar, sorted_rows
from tests.threads import in_threads


def _table(conn: pymysql.connections.Connection, *, keys: str = "DUPLICATE", interval_ms: int = 200,
           data_bytes: int = 64 * 1024 * 1024, buckets: int = 1) -> None:
    run(conn, f"CREATE TABLE t (k INT NOT NULL, v VARCHAR(8)) {keys} KEY(k) DISTRIBUTED BY HASH(k) BUCKETS {buckets} "
              f'PROPERTIES ("enable_time_travel" = "true", "group_commit_interval_ms" = "{interval_ms}", '
              f'"group_commit_data_bytes" = "{data_bytes}")')


def _loads(conn: pymysql.connections.Connection) -> int:
    """The table's load commits (SHOW TIME TRAVEL lists every commit)."""
    return sum(1 for r in rows(conn, "SHOW TIME TRAVEL ON t") if r[6] == "load")


def _session(db: str, mode: str) -> pymysql.connections.Connection:
    connection = connect(db)
    run(connection, f"SET group_commit = {mode}")
    return connection


def test_set_group_commit_checks_the_mode(conn: pymysql.connections.Connection, db: str) -> None:
    assert scalar(conn, "SELECT @@group_commit") == "off_mode"
    run(conn, "SET group_commit = async_mode")
    assert scalar(conn, "SELECT @@group_commit") == "async_mode"
    run(conn, "SET group_commit = 'sync_mode'")
    assert scalar(conn, "SELECT @@group_commit") == "sync_mode"
    fails(conn, "SET group_commit = bogus_mode", 1231, "group_commit")


def test_sync_mode_concurrent_inserts_share_commits(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn, interval_ms=300)
    clients, each = 8, 10

    def client(i: int) -> None:
        session = _session(db, "sync_mode")
        try:
            for j in range(each):
                key = i * 100 + j
                assert run(session, f"INSERT INTO t VALUES ({key}, 'c{i}')") == 1
                # sync_mode returns once the batch is committed: the row is readable at once.
                assert scalar(session, f"SELECT count(*) FROM t WHERE k = {key}") == 1
        finally:
            session.close()

    assert in_threads(clients, client) == []
    assert scalar(conn, "SELECT count(*) FROM t") == clients * each
    assert scalar(conn, "SELECT count(DISTINCT k) FROM t") == clients * each
    loads = _loads(conn)
    assert loads <= clients * each // 4, f"{loads} commits for {clients * each} group-committed inserts"


def test_async_mode_rows_are_visible_within_the_interval(conn: pymysql.connections.Connection, db: str,
                                                         other: pymysql.connections.Connection) -> None:
    _table(conn, interval_ms=300)
    session = _session(db, "async_mode")
    try:
        started = time.monotonic()
        assert run(session, "INSERT INTO t VALUES (1, 'a'), (2, 'b')") == 2
        assert run(session, "INSERT INTO t (k) VALUES (3)") == 1
        elapsed = time.monotonic() - started
    finally:
        session.close()
    assert elapsed < 20
    deadline = time.monotonic() + 5
    while scalar(other, "SELECT count(*) FROM t") < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sorted_rows(other, "SELECT k, v FROM t") == [(1, "a"), (2, "b"), (3, None)]


def test_bytes_threshold_flushes_before_the_interval(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn, interval_ms=600_000, data_bytes=1)
    session = _session(db, "sync_mode")
    try:
        started = time.monotonic()
        for k in range(3):
            assert run(session, f"INSERT INTO t VALUES ({k}, 'x')") == 1
        assert time.monotonic() - started < 30  # the 10-minute interval was not waited for
    finally:
        session.close()
    assert scalar(conn, "SELECT count(*) FROM t") == 3
    assert _loads(conn) == 3


def test_a_bad_row_fails_only_its_statement(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn, interval_ms=1500)
    good = _session(db, "sync_mode")
    bad = _session(db, "sync_mode")
    try:
        errors: list[BaseException] = []
        thread = threading.Thread(target=lambda: errors.extend(
            in_threads(1, lambda _: None if run(good, "INSERT INTO t VALUES (1, 'ok')") == 1 else None)))
        thread.start()
        time.sleep(0.3)  # the good row is waiting in the batch
        started = time.monotonic()
        fails(bad, "INSERT INTO t VALUES (2, 'ok'), (NULL, 'bad')", 1048, "k")
        fails(bad, "INSERT INTO t VALUES (3, 'far too long')", 1406, "v")
        assert time.monotonic() - started < 1.2, "a bad row must fail at once, not with the batch"
        thread.join(60)
        assert errors == []
    finally:
        good.close()
        bad.close()
    assert sorted_rows(conn, "SELECT k, v FROM t") == [(1, "ok")]
    assert _loads(conn) == 1


def test_unique_key_later_statement_wins_within_a_batch(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn, keys="UNIQUE", interval_ms=1500, buckets=3)
    first, second = _session(db, "sync_mode"), _session(db, "async_mode")
    try:
        def work(i: int) -> None:
            if i == 0:
                run(first, "INSERT INTO t VALUES (1, 'first'), (2, 'x'), (2, 'y'), (3, 'first')")
            else:
                time.sleep(0.5)  # accepted after the first statement, into the same batch
                run(second, "INSERT INTO t VALUES (1, 'second'), (4, 'second')")

        assert in_threads(2, work) == []
        assert _loads(conn) == 1, "both statements should have shared one commit"
        assert sorted_rows(conn, "SELECT k, v FROM t") == [(1, "second"), (2, "y"), (3, "first"), (4, "second")]
        run(first, "INSERT INTO t VALUES (1, 'third')")
        assert sorted_rows(conn, "SELECT k, v FROM t WHERE k = 1") == [(1, "third")]
    finally:
        first.close()
        second.close()


def test_off_mode_commits_each_insert(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn, interval_ms=600_000)
    run(conn, "SET group_commit = sync_mode")
    run(conn, "SET group_commit = off_mode")
    started = time.monotonic()
    for k in range(3):
        assert run(conn, f"INSERT INTO t VALUES ({k}, 'o')") == 1
    assert time.monotonic() - started < 30
    assert _loads(conn) == 3 and scalar(conn, "SELECT count(*) FROM t") == 3


def test_select_and_labelled_inserts_bypass_the_batch(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn, interval_ms=600_000)
    run(conn, "SET group_commit = sync_mode")
    started = time.monotonic()
    assert run(conn, "INSERT INTO t SELECT 1, 'sel'") == 1
    assert run(conn, "INSERT INTO t WITH LABEL gc_label_1 VALUES (2, 'lab')") == 1
    fails(conn, "INSERT INTO t WITH LABEL gc_label_1 VALUES (3, 'again')", 1105, "errCode = 5001", "gc_label_1")
    assert run(conn, "DELETE FROM t WHERE k = 1") == 1
    assert time.monotonic() - started < 30, "none of these may wait for the 10-minute interval"
    assert sorted_rows(conn, "SELECT k, v FROM t") == [(2, "lab")]


@pytest.mark.parametrize("change", ["ALTER TABLE t ADD COLUMN extra INT DEFAULT \"0\"", "DROP TABLE t"])
def test_a_change_while_pending_fails_the_batch_clearly(conn: pymysql.connections.Connection, db: str,
                                                        change: str) -> None:
    _table(conn, interval_ms=3000)
    session = _session(db, "async_mode")
    failures: list[BaseException] = []
    try:
        thread = threading.Thread(target=lambda: failures.extend(
            in_threads(1, lambda _: None if run(session, "INSERT INTO t VALUES (1, 'p')") else None)))
        thread.start()
        time.sleep(0.5)
        run(conn, change)
        thread.join(60)
    finally:
        session.close()
    assert len(failures) == 1 and isinstance(failures[0], pymysql.MySQLError), failures
    code, message = failures[0].args[0], str(failures[0].args[1])
    if change.startswith("ALTER"):
        assert code == 1105 and "schema" in message and "changed" in message, (code, message)
        assert scalar(conn, "SELECT count(*) FROM t") == 0
    else:
        assert code == 1146 and "dropped" in message, (code, message)
