"""The console's browser sign-in (form, session cookie, CSRF) and the table page's rows read through
SQL as the viewer: rows as of a moment, a commit's changes, and row counts equal to COUNT(*)."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pymysql
import pytest

from schemas.config import Settings
from tests.query.console_kit import Browser, csrf_of
from tests.query.sqlkit import Conn, rows, run

pytestmark = pytest.mark.integration


@pytest.fixture
def login(conn: Conn) -> Iterator[tuple[str, str]]:
    name, password = f"u_{uuid.uuid4().hex[:8]}", f"pw-{uuid.uuid4().hex[:8]}"
    run(conn, f"CREATE USER '{name}'@'%' IDENTIFIED BY '{password}'")
    yield name, password
    run(conn, f"DROP USER IF EXISTS '{name}'")


def test_root_redirects_to_the_console(browser: Browser) -> None:
    reply = browser.get("/")
    assert (reply.status, reply.headers["Location"]) == (302, "/console")


def test_form_sign_in_sets_a_session_cookie_and_sign_out_ends_it(browser: Browser, db: str, conn: Conn,
                                                                   login: tuple[str, str]) -> None:
    name, password = login
    run(conn, "CREATE TABLE t (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, f"GRANT SELECT_PRIV ON {db}.t TO '{name}'")
    asked = f"/console/table/{db}/t"
    # A page asked for without credentials: the sign-in form, then back to the page asked for.
    first = browser.get(asked)
    assert first.status == 302 and first.headers["Location"] == f"/console/login?next={quote(asked, safe='')}"
    form_page = browser.get(first.headers["Location"])
    assert form_page.status == 200 and "<form class=signin method=post action='/console/login'>" in form_page.body
    assert "name=password type=password" in form_page.body and f"value='{asked}'" in form_page.body
    login_cookie = form_page.cookie_line("strata_console_login")
    assert "HttpOnly" in login_cookie and "SameSite=Strict" in login_cookie
    signed = browser.post("/console/login", {"csrf": csrf_of(form_page.body), "next": asked, "user": name,
                                             "password": password})
    assert (signed.status, signed.headers["Location"]) == (303, asked)
    cookie = signed.cookie_line("strata_console_session")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    token = browser.cookies["strata_console_session"]
    assert len(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))) == 32  # 256 random bits
    page = browser.get(asked)
    assert page.status == 200 and f"<b id=viewer>{name}</b>" in page.body
    assert browser.get("/api/console/tables").json["viewer"] == name  # the session works for the JSON too
    # Another site's form cannot sign out (or post anything) without the session's CSRF token.
    assert browser.post("/console/logout", {}).status == 403
    assert browser.post("/console/logout", {"csrf": "guessed"}).status == 403
    assert browser.get(asked).status == 200
    out_page = browser.get("/console/logout")
    out = browser.post("/console/logout", {"csrf": csrf_of(out_page.body)})
    assert (out.status, out.headers["Location"]) == (303, "/console/login")
    # The token is forgotten server-side: presenting it again does not sign in.
    browser.cookies["strata_console_session"] = token
    assert browser.get(asked).status == 302


def test_bad_password_and_open_redirects(browser: Browser, login: tuple[str, str]) -> None:
    name, _ = login
    reply = browser.sign_in(name, "wrong")
    assert reply.status == 401 and "Access denied" in reply.body and "strata_console_session" not in browser.cookies
    assert "<form class=signin" in reply.body
    assert browser.sign_in("nobody_here", "x").status == 401
    # `next` only ever leads to a console page.
    root = browser.sign_in("root", "", target="https://evil.example/")
    assert (root.status, root.headers["Location"]) == (303, "/console")
    assert browser.get("/console/login?next=//evil.example/console").headers["Location"] == "/console"
    browser.cookies.clear()
    assert browser.sign_in("root", "", target="//evil.example/console").headers["Location"] == "/console"


def test_login_without_the_forms_token_is_refused(browser: Browser, config: Settings) -> None:
    # A cross-site form: right password, no pre-login cookie / no token bound to it.
    forged = browser.post("/console/login", {"csrf": "x" * 64, "next": "/console", "user": "root", "password": ""})
    assert forged.status == 403 and "strata_console_session" not in browser.cookies
    # A token from another browser's form does not match this browser's pre-login cookie.
    other = Browser(config.http_port)
    token = csrf_of(other.get("/console/login").body)
    browser.get("/console/login")
    stolen = browser.post("/console/login", {"csrf": token, "next": "/console", "user": "root", "password": ""})
    assert stolen.status == 403 and "strata_console_session" not in browser.cookies
    assert other.post("/console/login", {"csrf": token, "next": "/console", "user": "root",
                                         "password": ""}).status == 303


def test_basic_auth_still_works_for_the_api(browser: Browser, login: tuple[str, str]) -> None:
    name, password = login
    assert browser.get("/api/console/tables", basic=(name, password)).json["viewer"] == name
    assert browser.get("/console", basic=("root", "")).status == 200
    bare = browser.get("/api/console/tables")
    assert bare.status == 401 and bare.headers["WWW-Authenticate"].startswith("Basic ")
    assert browser.get("/api/console/tables", basic=(name, "wrong")).status == 401


def _unique_table(conn: Conn) -> list[dict[str, Any]]:
    """Unique Key table `u` with time travel: commit 1 inserts three rows, 2 upserts one, 3 deletes one."""
    run(conn, "CREATE TABLE u (k INT, v VARCHAR(10)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
              'PROPERTIES ("enable_time_travel"="true")')
    run(conn, "INSERT INTO u VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    run(conn, "INSERT INTO u VALUES (2, 'B')")
    run(conn, "DELETE FROM u WHERE k = 3")
    return []


def _api(browser: Browser, path: str, basic: tuple[str, str] = ("root", "")) -> Any:
    reply = browser.get(path, basic=basic)
    assert reply.status == 200, reply.body
    return reply.json


def test_rows_as_of_diff_and_counts_through_sql(browser: Browser, conn: Conn, db: str, config: Settings) -> None:
    _unique_table(conn)
    base = f"/api/console/table/{db}/u"
    commits = _api(browser, base)["commits"]
    assert [c["kind"] for c in commits] == ["load", "load", "delete"]

    # As of commit 1: the rows then, the SQL that reads them (with its session time zone), which agrees.
    at = _api(browser, f"{base}?at={commits[0]['ts_ms']}")["rows_as_of"]
    assert at["sql"] == f"SELECT * FROM `{db}`.`u` FOR TIME AS OF '{commits[0]['time']}' LIMIT 100"
    assert at["set_time_zone"] == "SET time_zone = 'UTC'" and at["error"] is None
    assert sorted(map(tuple, at["rows"])) == [(1, "a"), (2, "b"), (3, "c")] and at["count"]["count"] == 3
    with pymysql.connect(host="127.0.0.1", port=config.sql_port, user="root", autocommit=True) as c:
        run(c, at["set_time_zone"])
        assert sorted(rows(c, at["sql"])) == sorted(map(tuple, at["rows"]))
    later = _api(browser, f"{base}?at={commits[2]['ts_ms']}")["rows_as_of"]
    assert sorted(map(tuple, later["rows"])) == [(1, "a"), (2, "B")]

    # Each commit's changes from the change feed: inserts, an update (pre/post image), a delete.
    def changes(n: int) -> list[tuple[Any, ...]]:
        diff = _api(browser, f"{base}?diff={n}")["diff"]
        assert diff["error"] is None and f"@incr('startVersion'='{n - 1}', 'endVersion'='{n}')" in diff["sql"]
        kind, k, v = (diff["columns"].index(c) for c in ("_change_type", "k", "v"))
        return sorted((r[kind], r[k], r[v]) for r in diff["rows"])

    assert changes(1) == [("insert", 1, "a"), ("insert", 2, "b"), ("insert", 3, "c")]
    assert changes(2) == [("update_postimage", 2, "B"), ("update_preimage", 2, "b")]
    assert changes(3) == [("delete", 3, "c")]

    # Counts: what SELECT COUNT(*) returns (2), with the rows stored (3, 1 upserted, 1 delete mark) apart.
    listed = _api(browser, "/api/console/tables")
    u = next(t for d in listed["databases"] if d["name"] == db for t in d["tables"] if t["name"] == "u")
    assert u["rows"] == rows(conn, "SELECT COUNT(*) FROM u")[0][0] == 2 and u["rows_stored"] == 5
    assert _api(browser, base)["count"]["count"] == 2

    # The HTML: rows, diff colours, the SQL ready to copy, the labelled counts.
    page = browser.get(f"/console/table/{db}/u?at={quote(commits[0]['time'])}&diff=2", basic=("root", ""))
    assert page.status == 200
    assert f"SET time_zone = &#x27;UTC&#x27;;\nSELECT * FROM `{db}`.`u` FOR TIME AS OF" in page.body
    assert "<tr class=ch-update_preimage><td>2</td><td>b</td>" in page.body
    assert "<span id=row-count>2</span> rows (<code>SELECT COUNT(*)</code>)" in page.body
    assert "5 rows stored" in page.body
    tables = browser.get("/console", basic=("root", "")).body
    assert "<th>rows</th><th>rows stored</th>" in tables


def test_a_user_without_select_is_refused(browser: Browser, conn: Conn, db: str,
                                          login: tuple[str, str]) -> None:
    name, password = login
    _unique_table(conn)
    run(conn, f"GRANT LOAD_PRIV ON {db}.u TO '{name}'")  # sees the table, may not read it
    base = f"/api/console/table/{db}/u"
    commits = _api(browser, base)["commits"]
    mine = _api(browser, f"{base}?at={commits[0]['ts_ms']}&diff=1", basic=(name, password))
    assert mine["rows_as_of"]["rows"] == [] and "SELECT_PRIV" in mine["rows_as_of"]["error"]
    assert mine["diff"]["rows"] == [] and "SELECT_PRIV" in mine["diff"]["error"]
    assert mine["count"]["count"] is None
    listed = _api(browser, "/api/console/tables", basic=(name, password))
    (u,) = [t for d in listed["databases"] for t in d["tables"]]
    assert u["rows"] is None and u["rows_stored"] == 5
    page = browser.get(f"/console/table/{db}/u?at={commits[0]['ts_ms']}", basic=(name, password)).body
    assert "class='bad refused'" in page and "<table class='rows" not in page
    run(conn, f"GRANT SELECT_PRIV ON {db}.u TO '{name}'")
    granted = _api(browser, f"{base}?at={commits[0]['ts_ms']}", basic=(name, password))["rows_as_of"]
    assert len(granted["rows"]) == 3


def test_a_session_ends_with_its_user(browser: Browser, conn: Conn) -> None:
    name, password = f"u_{uuid.uuid4().hex[:8]}", "pw-dropped"
    run(conn, f"CREATE USER '{name}'@'%' IDENTIFIED BY '{password}'")
    assert browser.sign_in(name, password).status == 303
    assert browser.get("/console").status == 200
    run(conn, f"DROP USER '{name}'")
    assert browser.get("/console").status == 302
    assert browser.get("/api/console/tables").status == 401
