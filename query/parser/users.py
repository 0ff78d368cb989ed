"""Users and privileges, in Doris' syntax: CREATE/ALTER/DROP USER (with the login-lockout password
policy), SET PASSWORD, SET PROPERTY, GRANT/REVOKE, SHOW GRANTS."""

from __future__ import annotations

from sqlglot.tokens import TokenType

from projections.users import PRIVILEGES
from query.parser.cursor import Cursor
from query.parser.errors import UnsupportedStatement
from query.parser.statements import (
    AlterUser,
    CreateUser,
    DropUser,
    GrantPrivileges,
    PasswordPolicy,
    SetPassword,
    SetUserProperty,
    ShowGrants,
    Statement,
    UserIdentity,
)

# Doris' spellings of the same privileges.
_ALIASES = {"SELECT": "SELECT_PRIV", "LOAD": "LOAD_PRIV", "INSERT": "LOAD_PRIV", "ALTER": "ALTER_PRIV",
            "CREATE": "CREATE_PRIV", "DROP": "DROP_PRIV", "ADMIN": "ADMIN_PRIV", "NODE_PRIV": "ADMIN_PRIV"}


def user_identity(c: Cursor) -> UserIdentity:
    name = c.name_or_string("a user name")
    if c.accept_type(TokenType.PARAMETER):  # the tokenizer reads '@' as a parameter marker
        return UserIdentity(name, c.name_or_string("a host"))
    return UserIdentity(name)


def _password(c: Cursor) -> str:
    if c.accept("PASSWORD"):
        c.expect_type(TokenType.L_PAREN, "(")
        text = c.string("a quoted password")
        c.expect_type(TokenType.R_PAREN, ")")
        return text
    return c.string("a quoted password")


_LOCK_UNITS = {"DAY": 86400, "DAYS": 86400, "HOUR": 3600, "HOURS": 3600, "SECOND": 1, "SECONDS": 1}
_MAX_POLICY_VALUE = 32767  # MySQL's bound for both options (days for the lock time)
_UNSUPPORTED_POLICY = ("PASSWORD_EXPIRE", "PASSWORD_HISTORY", "PASSWORD_REUSE", "PASSWORD_REQUIRE", "DEFAULT",
                       "ACCOUNT_LOCK", "COMMENT")


def _identified_by(c: Cursor) -> str | None:
    if not c.accept("IDENTIFIED", "BY"):
        return None
    if c.accept("PASSWORD"):
        raise c.error("IDENTIFIED BY PASSWORD '<hash>' is not supported; give the password itself")
    return c.string("a quoted password")


def _password_policy(c: Cursor) -> PasswordPolicy:
    """``FAILED_LOGIN_ATTEMPTS n`` and ``PASSWORD_LOCK_TIME {n [DAY|HOUR|SECOND] | UNBOUNDED}``, in any order."""
    attempts: int | None = None
    lock_s: int | None = None
    while True:
        if c.accept("FAILED_LOGIN_ATTEMPTS"):
            attempts = c.integer("a number of failed logins")
            if attempts > _MAX_POLICY_VALUE:
                raise c.error(f"FAILED_LOGIN_ATTEMPTS is 0 to {_MAX_POLICY_VALUE}", c.tokens[c.pos - 1])
        elif c.accept("PASSWORD_LOCK_TIME"):
            if c.accept("UNBOUNDED"):
                lock_s = -1
                continue
            amount = c.integer("a lock time (n DAY, n HOUR, n SECOND or UNBOUNDED)")
            if amount > _MAX_POLICY_VALUE * 86400:
                raise c.error("PASSWORD_LOCK_TIME is too long", c.tokens[c.pos - 1])
            unit = c.accept_any(tuple(_LOCK_UNITS)) or "DAY"  # a bare number is days, as in MySQL
            lock_s = amount * _LOCK_UNITS[unit]
        elif (word := c.word()) in _UNSUPPORTED_POLICY:
            raise UnsupportedStatement(f"{word} is not supported; FAILED_LOGIN_ATTEMPTS and PASSWORD_LOCK_TIME are")
        else:
            return PasswordPolicy(attempts, lock_s)


def create_user(c: Cursor) -> Statement:
    """Everything after CREATE USER."""
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    user = user_identity(c)
    password = _identified_by(c)
    policy = _password_policy(c)
    c.expect_end()
    return CreateUser(user, password, if_not_exists, policy)


def alter_user(c: Cursor) -> Statement:
    """Everything after ALTER USER."""
    if_exists = c.accept("IF", "EXISTS")
    user = user_identity(c)
    password = _identified_by(c)
    policy = _password_policy(c)
    unlock = c.accept("ACCOUNT_UNLOCK")
    c.expect_end()
    if password is None and policy == PasswordPolicy() and not unlock:
        raise c.error("expected IDENTIFIED BY, FAILED_LOGIN_ATTEMPTS, PASSWORD_LOCK_TIME or ACCOUNT_UNLOCK")
    return AlterUser(user, password, if_exists, policy, unlock)


def set_property(c: Cursor) -> Statement:
    """Everything after SET PROPERTY: ``[FOR 'user'] 'key' = 'value'``."""
    user = c.name_or_string("a user name") if c.accept("FOR") else None
    key = c.string("a quoted property name")
    c.expect_type(TokenType.EQ, "=")
    value = c.literal("a property value")
    c.expect_end()
    return SetUserProperty(user, key.lower(), value)


def drop_user(c: Cursor) -> Statement:
    """Everything after DROP USER."""
    if_exists = c.accept("IF", "EXISTS")
    user = user_identity(c)
    c.expect_end()
    return DropUser(user, if_exists)


def set_password(c: Cursor) -> Statement:
    """Everything after SET PASSWORD."""
    user = user_identity(c) if c.accept("FOR") else None
    c.expect_type(TokenType.EQ, "=")
    password = _password(c)
    c.expect_end()
    return SetPassword(user, password)


def _privilege(c: Cursor) -> list[str]:
    token = c.peek()
    word = (token.text.upper() if token is not None else "")
    if word == "ALL":
        c.advance()
        c.accept("PRIVILEGES")
        return list(PRIVILEGES)
    name = _ALIASES.get(word, word)
    if name not in PRIVILEGES:
        raise c.error(f"expected a privilege ({', '.join(PRIVILEGES)} or ALL)")
    c.advance()
    return [name]


def _scope_part(c: Cursor, what: str) -> str:
    if c.accept_type(TokenType.STAR):
        return "*"
    return c.identifier(what)


def grant(c: Cursor, *, revoke: bool) -> Statement:
    """Everything after GRANT / REVOKE: ``privileges ON db.table TO|FROM user``."""
    privileges: list[str] = []
    while True:
        privileges.extend(p for p in _privilege(c) if p not in privileges)
        if not c.accept_type(TokenType.COMMA):
            break
    c.expect("ON")
    db = _scope_part(c, "a database name or *")
    table = "*"
    if c.accept_type(TokenType.DOT):
        table = _scope_part(c, "a table name or *")
    elif db != "*":
        raise c.error("expected db.table, db.* or *.*")
    if db == "*" and table != "*":
        raise c.error("a table needs its database: db.table")
    c.expect("FROM" if revoke else "TO")
    user = user_identity(c)
    c.expect_end()
    return GrantPrivileges(tuple(privileges), db, table, user, revoke)


def show_grants(c: Cursor, *, all_users: bool) -> Statement:
    """Everything after SHOW [ALL] GRANTS."""
    user = user_identity(c) if c.accept("FOR") else None
    c.expect_end()
    return ShowGrants(user, all_users)
