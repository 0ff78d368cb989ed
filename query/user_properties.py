"""Doris' user properties: `SET PROPERTY [FOR 'user'] 'key' = 'value'` and `SHOW PROPERTY [FOR 'user']
[LIKE '…']`, for the ones that limit what a user's sessions may consume:

* `max_user_connections` (Doris' default 100): connections at once (query.login_policy);
* `query_timeout` / `insert_timeout` (seconds; -1, the default: unset): when set, they override the
  session variables of the same names (query.timeouts), so a user cannot lift its own limit with SET.

Setting any of them needs ADMIN_PRIV (query.access); they are events of the log like the rest of a
user. root is built in and has none.
"""

from __future__ import annotations

from dataclasses import dataclass

from projections.users import ROOT, UserRecord
from query import show_filter
from query.context import Context, Done, Rows, SessionState, SqlFailure
from query.parser import statements as st
from schemas import commands as cmd
from schemas.errors import ErrorCode

UNSET = -1


@dataclass(frozen=True)
class _Property:
    field: str  # the UserRecord field (and the AlterUser command's)
    low: int
    high: int
    unset_allowed: bool  # -1 clears it (the session variable decides again)


MAX_TIMEOUT_S = 2**31 - 1
PROPERTIES = {
    "max_user_connections": _Property("max_user_connections", 1, 10000, False),  # Doris' bounds
    "query_timeout": _Property("query_timeout_s", 1, MAX_TIMEOUT_S, True),
    "insert_timeout": _Property("insert_timeout_s", 1, MAX_TIMEOUT_S, True),
}


def _user(ctx: Context, name: str) -> UserRecord:
    found = ctx.projection.users.get(name.lower())
    if found is None:
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"User '{name}'@'%' does not exist")
    return found


def _shown(user: UserRecord, key: str) -> str:
    value = int(getattr(user, PROPERTIES[key].field))
    return str(UNSET if PROPERTIES[key].unset_allowed and value == 0 else value)


def show_property(ctx: Context, session: SessionState, s: st.ShowProperty) -> Rows:
    name = s.user if s.user is not None else session.user
    if name.lower() == ROOT:
        rows = [(key, "unlimited" if key == "max_user_connections" else str(UNSET)) for key in PROPERTIES]
    else:
        user = _user(ctx, name)
        rows = [(key, _shown(user, key)) for key in PROPERTIES]
    return show_filter.apply(ctx, Rows(["Key", "Value"], rows), s.like, None)


def set_user_property(ctx: Context, session: SessionState, s: st.SetUserProperty) -> Done:
    name = s.user if s.user is not None else session.user
    if name.lower() == ROOT:
        raise SqlFailure(ErrorCode.CANNOT_USER, "root is built in: it has no properties to set")
    prop = PROPERTIES.get(s.key)
    if prop is None:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"user property '{s.key}' is not supported; "
                                                      f"{', '.join(PROPERTIES)} are")
    try:
        value = int(s.value.strip())
    except ValueError:
        value = 0
    if prop.unset_allowed and value == UNSET:
        value = 0
    elif not prop.low <= value <= prop.high:
        unset = f" (or {UNSET}: unset)" if prop.unset_allowed else ""
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{s.key} is not valid: '{s.value}'; it must be between "
                                                    f"{prop.low} and {prop.high}{unset}")
    user = _user(ctx, name)
    ctx.propose(cmd.AlterUser.model_validate({"name": user.name, prop.field: value}))
    return Done()
