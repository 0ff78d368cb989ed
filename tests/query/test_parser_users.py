"""Parsing CREATE/DROP USER, SET PASSWORD, GRANT/REVOKE and SHOW GRANTS (Doris' syntax)."""

from __future__ import annotations

import pytest

from query.parser import (
    CreateUser,
    DropUser,
    GrantPrivileges,
    SetPassword,
    ShowGrants,
    SqlError,
    UserIdentity,
    parse_statement,
)

U = UserIdentity("u")
ALL = ("SELECT_PRIV", "LOAD_PRIV", "ALTER_PRIV", "CREATE_PRIV", "DROP_PRIV", "ADMIN_PRIV")


@pytest.mark.parametrize(("sql", "expected"), [
    ("CREATE USER 'u'@'%' IDENTIFIED BY 'pw'", CreateUser(U, "pw")),
    ("CREATE USER IF NOT EXISTS u", CreateUser(U, None, True)),
    ("CREATE USER 'u'@'10.0.0.1'", CreateUser(UserIdentity("u", "10.0.0.1"))),
    ("DROP USER 'u'@'%'", DropUser(U)),
    ("DROP USER IF EXISTS u", DropUser(U, True)),
    ("SET PASSWORD FOR 'u'@'%' = PASSWORD('x')", SetPassword(U, "x")),
    ("SET PASSWORD = 'y'", SetPassword(None, "y")),
    ("GRANT SELECT_PRIV, LOAD_PRIV ON db1.* TO 'u'@'%'", GrantPrivileges(("SELECT_PRIV", "LOAD_PRIV"), "db1", "*", U)),
    ("GRANT ALL ON *.* TO u", GrantPrivileges(ALL, "*", "*", U)),
    ("GRANT SELECT, ALTER_PRIV ON d.t TO u", GrantPrivileges(("SELECT_PRIV", "ALTER_PRIV"), "d", "t", U)),
    ("REVOKE LOAD_PRIV ON d.t FROM 'u'", GrantPrivileges(("LOAD_PRIV",), "d", "t", U, revoke=True)),
    ("SHOW GRANTS", ShowGrants()),
    ("SHOW GRANTS FOR 'u'@'%'", ShowGrants(U)),
    ("SHOW ALL GRANTS", ShowGrants(None, True)),
])
def test_statements(sql: str, expected: object) -> None:
    assert parse_statement(sql) == expected


@pytest.mark.parametrize(("sql", "fragment"), [
    ("GRANT FLY_PRIV ON *.* TO u", "expected a privilege"),
    ("GRANT SELECT_PRIV ON d TO u", "expected db.table"),
    ("GRANT SELECT_PRIV ON *.t TO u", "a table needs its database"),
    ("GRANT SELECT_PRIV ON d.t FROM u", "expected TO"),
    ("CREATE USER u IDENTIFIED BY PASSWORD '*ABC'", "give the password itself"),
    ("SET PASSWORD FOR u 'x'", "="),
])
def test_errors_name_the_problem(sql: str, fragment: str) -> None:
    with pytest.raises(SqlError) as caught:
        parse_statement(sql)
    assert fragment in str(caught.value)
