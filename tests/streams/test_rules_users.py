"""The sequencer's user decisions and their fold: the lockout policy of CREATE USER, ALTER USER's
policy changes and ACCOUNT_UNLOCK, and SET PROPERTY's max_user_connections (no Kafka)."""

from __future__ import annotations

from pathlib import Path

import pytest

from projections.projection import Projection
from projections.users import DEFAULT_MAX_USER_CONNECTIONS
from schemas import commands as cmd
from schemas import events as ev
from schemas.errors import ErrorCode
from streams.rules import Rejected, Rules
from tests.streams.ruleskit import fold


def test_user_options_are_events_and_fold_into_the_user(tmp_path: Path) -> None:
    state = Projection(tmp_path / "p")
    created = fold(state, cmd.CreateUser(name="Jack", failed_login_attempts=3, password_lock_time_s=86400), 1000)
    assert isinstance(created, ev.UserCreated) and created.failed_login_attempts == 3
    jack = state.users["jack"]
    assert (jack.failed_login_attempts, jack.password_lock_time_s) == (3, 86400)
    assert jack.max_user_connections == DEFAULT_MAX_USER_CONNECTIONS and jack.lock_reset_ts_ms == 0

    fold(state, cmd.AlterUser(name="jack", max_user_connections=5, query_timeout_s=60), 1001)
    jack = state.users["jack"]
    assert jack.max_user_connections == 5 and jack.failed_login_attempts == 3
    assert (jack.query_timeout_s, jack.insert_timeout_s) == (60, 0)
    assert jack.lock_reset_ts_ms == 0, "a connection limit is no lockout change"

    altered = fold(state, cmd.AlterUser(name="jack", unlock=True), 1002)
    assert isinstance(altered, ev.UserAltered) and altered.name == "Jack"
    assert state.users["jack"].lock_reset_ts_ms == 1002

    fold(state, cmd.AlterUser(name="jack", password_lock_time_s=-1), 1003)
    jack = state.users["jack"]
    assert (jack.password_lock_time_s, jack.lock_reset_ts_ms, jack.max_user_connections) == (-1, 1003, 5)

    state.close()
    reopened = Projection(tmp_path / "p")
    assert reopened.users["jack"] == jack, "the options survive a reopen of the projection"
    reopened.close()


def test_altering_an_unknown_user_is_rejected(tmp_path: Path) -> None:
    state = Projection(tmp_path / "p")
    with pytest.raises(Rejected) as rejected:
        Rules(state).decide(cmd.AlterUser(name="nobody", unlock=True), 1000)
    assert rejected.value.code == ErrorCode.UNKNOWN_ERROR
    state.close()
