"""query.login_policy on its own: the lockout counts per user, ends with the lock time, an unlock
or a policy change (a new lock_reset_ts_ms), and a login's database and connection limit."""

from __future__ import annotations

import time

from projections.users import UserRecord
from query.login_policy import LoginPolicy
from query.sessions import SessionDirectory


def _policy(users: dict[str, UserRecord], sessions: SessionDirectory | None = None) -> LoginPolicy:
    return LoginPolicy(lambda name: users.get(name.lower()), lambda db: db == "sales",
                       sessions or SessionDirectory())


def test_locks_after_the_attempts_and_unlocks_after_the_lock_time() -> None:
    users = {"jack": UserRecord(name="jack", failed_login_attempts=2, password_lock_time_s=1)}
    policy = _policy(users)
    assert policy.locked("jack") is None
    assert policy.failed("jack") is False
    assert policy.failed("JACK") is True, "the count is per user name, case-insensitive"
    refused = policy.locked("jack")
    assert refused is not None and refused.code == 3955 and "2 consecutive failed logins" in refused
    time.sleep(1.1)
    assert policy.locked("jack") is None
    assert policy.failed("jack") is False, "after the lock ran out the count starts afresh"


def test_an_unlock_or_a_policy_change_forgets_the_lock() -> None:
    users = {"jack": UserRecord(name="jack", failed_login_attempts=1, password_lock_time_s=-1)}
    policy = _policy(users)
    policy.failed("jack")
    refused = policy.locked("jack")
    assert refused is not None and "9999 second(s) remaining" in refused
    users["jack"] = users["jack"].model_copy(update={"lock_reset_ts_ms": 42})
    assert policy.locked("jack") is None


def test_no_policy_never_locks_and_root_is_not_stored() -> None:
    users = {"jack": UserRecord(name="jack")}
    policy = _policy(users)
    for _ in range(50):
        assert policy.failed("jack") is False
        assert policy.failed("root") is False
    assert policy.locked("jack") is None and policy.locked("root") is None


def test_admit_checks_the_database_and_the_connection_limit() -> None:
    sessions = SessionDirectory()
    users = {"jack": UserRecord(name="jack", grants={"sales.*": ["SELECT_PRIV"]}, max_user_connections=1),
             "jill": UserRecord(name="jill")}
    policy = _policy(users, sessions)
    for connection_id in (1, 2, 3):
        sessions.open(connection_id, "127.0.0.1:1")
    unknown = policy.admit("jack", "nope", 1)
    assert unknown is not None and unknown.code == 1049
    forbidden = policy.admit("jill", "sales", 1)
    assert forbidden is not None and forbidden.code == 1044
    assert policy.admit("jack", "sales", 1) is None
    too_many = policy.admit("jack", None, 2)
    assert too_many is not None and too_many.code == 1203
    assert policy.admit("root", "sales", 3) is None
    sessions.close(1)
    assert policy.admit("jack", None, 2) is None
