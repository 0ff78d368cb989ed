"""Doris' HTTP API on the SQL server's HTTP port: every endpoint that changes server state needs an
admin login (HTTP Basic, the SQL users): none or a wrong one gets 401, a user without ADMIN_PRIV 403,
both in Doris' JSON reply shape; root or ADMIN_PRIV gets through."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
import uuid
from typing import Any

import pymysql
import pytest
from pymysql.connections import Connection as Conn

from schemas.config import load_settings
from tests.query.sqlkit import run

pytestmark = pytest.mark.integration


def _post(path: str, login: tuple[str, str] | None) -> tuple[int, Any]:
    config = load_settings()
    headers = {}
    if login is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{login[0]}:{login[1]}".encode()).decode()
    request = urllib.request.Request(f"http://127.0.0.1:{config.http_port}{path}", data=b"", method="POST",
                                     headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_file_cache_clear_needs_an_admin_login(conn: Conn, user: tuple[str, str]) -> None:
    root = ("root", load_settings().root_password.get_secret_value())
    status, body = _post("/api/file_cache?op=clear", None)
    assert status == 401 and body["code"] == 401 and "msg" in body, body
    status, body = _post("/api/file_cache?op=clear", (user[0], "not-the-password"))
    assert status == 401 and body["code"] == 401, body
    status, body = _post("/api/file_cache?op=clear", user)
    assert status == 403 and body["code"] == 403 and "ADMIN_PRIV" in body["msg"], body
    status, body = _post("/api/file_cache?op=clear", root)
    assert status == 200 and body["status"] == "ok" and isinstance(body["cleared_files"], int), body
    run(conn, f"GRANT ADMIN_PRIV ON *.* TO '{user[0]}'")
    status, body = _post("/api/file_cache?op=clear", user)
    assert status == 200, body
    status, body = _post("/api/file_cache?op=other", root)
    assert status == 400, body


def test_http_logins_share_the_users_lockout(conn: Conn) -> None:
    """Wrong passwords over HTTP count toward the same lockout as the SQL port's, and a locked account
    is refused over HTTP too, even with the right password."""
    name = f"http_{uuid.uuid4().hex[:8]}"
    run(conn, f"CREATE USER '{name}' IDENTIFIED BY 'right' FAILED_LOGIN_ATTEMPTS 2 PASSWORD_LOCK_TIME 1 DAY")
    run(conn, f"GRANT ADMIN_PRIV ON *.* TO '{name}'")
    try:
        assert _post("/api/file_cache?op=clear", (name, "right"))[0] == 200
        for _ in range(2):
            status, body = _post("/api/file_cache?op=clear", (name, "wrong"))
            assert status == 401, body
        status, body = _post("/api/file_cache?op=clear", (name, "right"))
        assert status == 401 and "blocked" in body["msg"], body
        with pytest.raises(pymysql.MySQLError) as refused:
            pymysql.connect(host="127.0.0.1", port=load_settings().sql_port, user=name, password="right").close()
        assert refused.value.args[0] == 3955
        run(conn, f"ALTER USER '{name}' ACCOUNT_UNLOCK")
        assert _post("/api/file_cache?op=clear", (name, "right"))[0] == 200
    finally:
        run(conn, f"DROP USER IF EXISTS '{name}'")
