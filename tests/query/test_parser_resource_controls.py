"""Parsing Doris' session and login controls: SHOW PROCESSLIST, KILL, CREATE/ALTER USER with the
lockout policy, SET PROPERTY."""

from __future__ import annotations

import pytest

from query.parser import (
    AlterUser,
    CreateUser,
    Kill,
    PasswordPolicy,
    SetUserProperty,
    ShowProcesslist,
    ShowProperty,
    SqlSyntaxError,
    UnsupportedStatement,
    UserIdentity,
    parse_statement,
)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SHOW PROCESSLIST", ShowProcesslist()),
        ("show full processlist;", ShowProcesslist(full=True)),
        ("KILL 12", Kill(12)),
        ("KILL CONNECTION 7", Kill(7)),
        ("kill query 5", Kill(5, query_only=True)),
        ("CREATE USER 'jack' IDENTIFIED BY '12345' FAILED_LOGIN_ATTEMPTS 3 PASSWORD_LOCK_TIME 1 DAY",
         CreateUser(UserIdentity("jack"), "12345", policy=PasswordPolicy(3, 86400))),
        ("CREATE USER jack PASSWORD_LOCK_TIME UNBOUNDED FAILED_LOGIN_ATTEMPTS 2",
         CreateUser(UserIdentity("jack"), policy=PasswordPolicy(2, -1))),
        ("CREATE USER jack FAILED_LOGIN_ATTEMPTS 1 PASSWORD_LOCK_TIME 2",
         CreateUser(UserIdentity("jack"), policy=PasswordPolicy(1, 172800))),
        ("CREATE USER jack FAILED_LOGIN_ATTEMPTS 1 PASSWORD_LOCK_TIME 3 HOUR",
         CreateUser(UserIdentity("jack"), policy=PasswordPolicy(1, 10800))),
        ("ALTER USER jack ACCOUNT_UNLOCK", AlterUser(UserIdentity("jack"), unlock=True)),
        ("ALTER USER IF EXISTS 'jack'@'%' IDENTIFIED BY 'x' FAILED_LOGIN_ATTEMPTS 0",
         AlterUser(UserIdentity("jack"), "x", True, PasswordPolicy(0, None))),
        ("SET PROPERTY FOR 'jack' 'max_user_connections' = '10'",
         SetUserProperty("jack", "max_user_connections", "10")),
        ("SET PROPERTY 'MAX_USER_CONNECTIONS' = 3", SetUserProperty(None, "max_user_connections", "3")),
        ("SHOW PROPERTY", ShowProperty()),
        ("SHOW PROPERTY FOR 'jack' LIKE 'max%'", ShowProperty("jack", "max%")),
    ],
)
def test_parses(sql: str, expected: object) -> None:
    assert parse_statement(sql) == expected


@pytest.mark.parametrize("sql", ["ALTER USER jack", "KILL x", "KILL QUERY", "CREATE USER j FAILED_LOGIN_ATTEMPTS 99999",
                                 "SET PROPERTY FOR jack max_user_connections = 1"])
def test_refuses_malformed(sql: str) -> None:
    with pytest.raises(SqlSyntaxError):
        parse_statement(sql)


def test_other_password_options_are_not_supported() -> None:
    with pytest.raises(UnsupportedStatement, match="PASSWORD_EXPIRE"):
        parse_statement("CREATE USER j PASSWORD_EXPIRE INTERVAL 10 DAY")
