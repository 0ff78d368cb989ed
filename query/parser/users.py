"""Users and privileges, in Doris' syntax: CREATE/DROP USER, SET PASSWORD, GRANT/REVOKE, SHOW GRANTS."""

from __future__ import annotations

from sqlglot.tokens import TokenType

from projections.users import PRIVILEGES
from query.parser.cursor import Cursor
from query.parser.statements import (
    CreateUser,
    DropUser,
    GrantPrivileges,
    SetPassword,
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


def create_user(c: Cursor) -> Statement:
    """Everything after CREATE USER."""
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    user = user_identity(c)
    password = None
    if c.accept("IDENTIFIED", "BY"):
        if c.accept("PASSWORD"):
            raise c.error("IDENTIFIED BY PASSWORD '<hash>' is not supported; give the password itself")
        password = c.string("a quoted password")
    c.expect_end()
    return CreateUser(user, password, if_not_exists)


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
