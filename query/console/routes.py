"""The console's aiohttp handlers on the SQL server's HTTP port, and their login.

Access follows the SQL users: HTTP Basic auth with a SQL login. root's password is the
configuration's (`STRATA_ROOT_PASSWORD`, empty: no password); any other user's is checked against
its stored mysql_native_password hash (SHA1(SHA1(password)), sealed on the log), compared in
constant time. A wrong login waits like one on the SQL port (query.auth.FailedLogins) and gets
401; an unknown user fails exactly like a wrong password.

Browsers sign in with a form instead (query.console.web_sessions): a page asked for without
credentials redirects to `/console/login`, whose form posts the same login checks (`http_login`,
lockout included) and gets a session cookie. HTTP Basic stays accepted everywhere (scripts, the JSON
API); `/api/...` without credentials still answers 401 with a Basic challenge.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any
from urllib.parse import urlencode

from aiohttp import web
from mysql_mimic.auth import NativePasswordAuthPlugin

from projections.users import ROOT
from query.auth import FailedLogins
from query.console import charts, data, html, sql_reads
from query.console.web_sessions import (
    LOGIN_COOKIE,
    LOGIN_TTL_S,
    SESSION_COOKIE,
    SESSION_TTL_S,
    SessionStore,
    WebSession,
    csrf_ok,
)
from query.engine import Engine
from storage.secrets import SecretError

log = logging.getLogger("strata.console")
REALM = 'Basic realm="Strata console (SQL login)", charset="UTF-8"'


def _hash(password: str) -> str:
    return NativePasswordAuthPlugin.create_auth_string(password)


def check_login(engine: Engine, name: str, password: str) -> data.Viewer | None:
    """The viewer for a SQL login, or None when the name or password is wrong."""
    ctx = engine.ctx
    if name.lower() == ROOT:
        expected = ctx.config.root_password.get_secret_value()
        ok = hmac.compare_digest(_hash(password), _hash(expected))
        return data.Viewer(ROOT, None) if ok else None
    user = ctx.projection.users.get(name.lower())
    stored = "" if user is None else user.auth_string
    try:
        auth_string = ctx.stores.box.open(stored) if stored else ""
    except SecretError:
        log.error("user '%s': its password hash was sealed with another key; it cannot log in", name)
        return None
    # No password set: only the empty password matches (as on the SQL port).
    expected_hash = auth_string if auth_string else _hash("")
    ok = hmac.compare_digest(_hash(password).encode(), expected_hash.lower().encode())
    return data.Viewer(user.name, user) if ok and user is not None else None


def credentials(request: web.Request) -> tuple[str, str] | None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "basic" or not token:
        return None
    try:
        decoded = base64.b64decode(token.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    name, sep, password = decoded.partition(":")
    return (name, password) if sep else None


def _unauthorized(request: web.Request, message: str) -> web.Response:
    headers = {"WWW-Authenticate": REALM}
    if request.path.startswith("/api/"):
        return web.json_response({"status": "error", "msg": message}, status=401, headers=headers)
    return web.Response(text=html.error_page("Sign in", message), status=401, content_type="text/html",
                        headers=headers)


Handler = Callable[[web.Request, data.Viewer], Awaitable[web.StreamResponse]]


async def http_login(engine: Engine, failures: FailedLogins, name: str, password: str,
                     via: str = "HTTP") -> data.Viewer | str:
    """The viewer of an HTTP login (or another protocol's user/password login, named by `via` in the
    log), or why it is refused. It obeys the same rules as a login on the SQL port: a locked account
    is refused whatever it sends, failures count toward the user's lockout (query.login_policy), and
    guesses at one name are checked one at a time (FailedLogins.wait_turn)."""
    policy = engine.login_policy
    refused = policy.locked(name)
    if refused is None:
        await failures.wait_turn(name)
        refused = policy.locked(name)  # nothing awaits from here to counting the outcome
    if refused is not None:
        return str(refused)
    viewer = check_login(engine, name, password)
    if viewer is None:
        policy.failed(name)
        await asyncio.sleep(failures.delay_s(name))
        count = failures.failed(name)
        log.warning("%s login failed for user '%s' (%d in a row)", via, name, count)
        return f"Access denied for user '{name}'"
    policy.succeeded(name)
    failures.succeeded(name)
    return viewer


def _session_viewer(engine: Engine, session: WebSession) -> data.Viewer | None:
    """The viewer a session signed in, as that user is now: None once it is dropped or locked."""
    if session.user.lower() == ROOT:
        return data.Viewer(ROOT, None)
    user = engine.ctx.projection.users.get(session.user.lower())
    if user is None or engine.login_policy.locked(session.user) is not None:
        return None
    return data.Viewer(user.name, user)


def safe_next(target: str | None) -> str:
    """Where to go after signing in: a console page of this server, never another site."""
    if not target or not target.startswith("/console") or target.startswith("/console/login"):
        return "/console"
    rest = target[len("/console"):]
    if (rest and rest[0] not in "/?") or "\\" in target or "//" in target:
        return "/console"
    return target


def _redirect(location: str, status: int = 302) -> web.Response:
    return web.Response(status=status, headers={"Location": location})


def _sign_in_redirect(request: web.Request) -> web.Response:
    return _redirect(f"/console/login?{urlencode({'next': request.path_qs})}")


def _authenticated(engine: Engine, failures: FailedLogins, sessions: SessionStore, handler: Handler) -> Callable[
        [web.Request], Awaitable[web.StreamResponse]]:
    async def wrapped(request: web.Request) -> web.StreamResponse:
        given = credentials(request)
        if given is not None:
            viewer = await http_login(engine, failures, *given)
            if isinstance(viewer, str):
                return _unauthorized(request, viewer)
            return await handler(request, viewer)
        token = request.cookies.get(SESSION_COOKIE)
        session = sessions.get(token)
        signed_in = _session_viewer(engine, session) if session is not None else None
        if session is None or signed_in is None:
            sessions.end(token)
            if request.path.startswith("/api/"):
                return _unauthorized(request, "sign in with a SQL user (HTTP Basic auth)")
            return _sign_in_redirect(request)
        if request.method != "GET":
            # A form posted from another site carries the cookie only if SameSite fails; it never has the token.
            form = await request.post()
            posted = form.get("csrf")
            given_csrf = posted if isinstance(posted, str) else request.headers.get("X-CSRF-Token")
            if not csrf_ok(session, given_csrf):
                return _html(html.error_page("Refused", "missing or wrong CSRF token", signed_in.name), 403)
        request["console_session"] = session
        return await handler(request, signed_in)
    return wrapped


PlainHandler = Callable[[web.Request], Awaitable[web.StreamResponse]]
# Failed admin logins on the HTTP API, per user name (the same slowing as the SQL port's).
_ADMIN_FAILURES = FailedLogins()


def _doris_reply(status: int, message: str) -> web.Response:
    """Doris' HTTP API reply shape: {"msg", "code", "data", "count"}."""
    headers = {"WWW-Authenticate": REALM} if status == 401 else None
    return web.json_response({"msg": message, "code": status, "data": None, "count": 0}, status=status,
                             headers=headers)


def admin_only(engine: Engine, handler: PlainHandler) -> PlainHandler:
    """For HTTP endpoints that change the server's state: an admin SQL login (root, or a user with
    ADMIN_PRIV) by HTTP Basic auth; else 401 (no or wrong login) or 403 (not an admin)."""

    async def wrapped(request: web.Request) -> web.StreamResponse:
        given = credentials(request)
        if given is None:
            return _doris_reply(401, "Unauthorized: sign in with an admin SQL user (HTTP Basic auth)")
        viewer = await http_login(engine, _ADMIN_FAILURES, *given)
        if isinstance(viewer, str):
            return _doris_reply(401, f"Unauthorized: {viewer}")
        if viewer.user is not None and not viewer.user.may("ADMIN_PRIV"):
            return _doris_reply(403, f"Forbidden: user '{viewer.name}' needs ADMIN_PRIV for {request.path}")
        return await handler(request)

    return wrapped


async def _off_loop(fn: Callable[..., Any], *args: Any) -> Any:
    """The facts read RocksDB and may ask Kafka for watermarks: not on the event loop."""
    return await asyncio.get_running_loop().run_in_executor(None, partial(fn, *args))


def parse_at(text: str | None) -> int | None:
    """`?at=` as UTC milliseconds: a number of ms, or 'YYYY-MM-DD HH:MM:SS[.fff]' in UTC."""
    if text is None or not text.strip():
        return None
    text = text.strip()
    if text.isdigit():
        return int(text)
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S",
                "%Y-%m-%dT%H:%M", "%Y-%m-%d"):
        try:
            return int(datetime.strptime(text, fmt).replace(tzinfo=UTC).timestamp() * 1000)
        except ValueError:
            continue
    raise ValueError(f"'{text}' is not an instant; expected 'YYYY-MM-DD HH:MM:SS[.fff]' (UTC) or milliseconds")


def _html(text: str, status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8")


def parse_commit(text: str | None) -> int | None:
    """`?diff=` as a commit number (1 and up)."""
    if text is None or not text.strip():
        return None
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"'{text}' is not a commit number")
    return int(text)


def _set_cookie(response: web.Response, request: web.Request, name: str, value: str, max_age: int,
                path: str) -> None:
    response.set_cookie(name, value, max_age=max_age, path=path, httponly=True, samesite="Strict",
                        secure=request.secure)


def add_routes(app: web.Application, engine: Engine) -> None:
    """Registers / (to the console), /console… (HTML), its sign-in and /api/console/… (JSON) on the
    SQL server's HTTP app."""
    ctx = engine.ctx
    failures = FailedLogins()
    sessions = SessionStore()

    def with_counts(listing: dict[str, Any], viewer: data.Viewer) -> dict[str, Any]:
        """Each table's rows as `SELECT COUNT(*)` answers them (None when the viewer may not SELECT)."""
        for database in listing["databases"]:
            for t in database["tables"]:
                counted = sql_reads.count_rows(engine, viewer, t["db"], t["name"])
                t["rows"], t["rows_error"] = counted["count"], counted["error"]
        return listing

    def listing(viewer: data.Viewer) -> dict[str, Any]:
        return with_counts(data.tables(ctx, viewer), viewer)

    async def api_tables(request: web.Request, viewer: data.Viewer) -> web.StreamResponse:
        return web.json_response(await _off_loop(listing, viewer))

    async def page_tables(request: web.Request, viewer: data.Viewer) -> web.StreamResponse:
        return _html(html.tables_page(await _off_loop(listing, viewer)))

    def table_facts(viewer: data.Viewer, db: str, name: str, at: int | None, diff: int | None) -> dict[str, Any]:
        found = data.table_timeline(ctx, viewer, db, name, at)
        # The names as the catalog spells them, for the SQL shown.
        db, name = found["table"]["db"], found["table"]["name"]
        found["count"] = sql_reads.count_rows(engine, viewer, db, name)
        found["rows_as_of"] = None if at is None else {
            **sql_reads.rows_as_of(engine, viewer, db, name, at),
            "count": sql_reads.count_rows(engine, viewer, db, name, at)}
        if diff is None and at is not None:
            diff = data.next_commit(found, at)  # a moment's page shows what the next commit changed
        found["diff"] = None if diff is None else sql_reads.commit_diff(engine, viewer, db, name, diff)
        found["may_restore"] = found["table"]["time_travel"]["enabled"] and sql_reads.restore_refusal(
            engine, viewer, db, name, at if at is not None else data.now_ms()) is None
        return found

    async def _timeline(request: web.Request, viewer: data.Viewer) -> tuple[dict[str, Any] | None, int, str]:
        try:
            at = parse_at(request.query.get("at"))
            diff = parse_commit(request.query.get("diff"))
        except ValueError as exc:
            return None, 400, str(exc)
        try:
            found = await _off_loop(table_facts, viewer, request.match_info["db"], request.match_info["table"],
                                    at, diff)
        except data.NotFound as exc:
            return None, 404, str(exc)
        return found, 200, ""

    async def api_table(request: web.Request, viewer: data.Viewer) -> web.StreamResponse:
        found, status, message = await _timeline(request, viewer)
        if found is None:
            return web.json_response({"status": "error", "msg": message}, status=status)
        return web.json_response(found)

    async def page_table(request: web.Request, viewer: data.Viewer) -> web.StreamResponse:
        found, status, message = await _timeline(request, viewer)
        if found is None:
            return _html(html.error_page("Table", message, viewer.name), status)
        try:
            start, end = parse_at(request.query.get("from")), parse_at(request.query.get("to"))
        except ValueError as exc:
            return _html(html.error_page("Table", str(exc), viewer.name), 400)
        found["restored"] = request.query.get("restored")
        return _html(html.table_page(found, request.query.get("at", ""), charts.window_of(found, start, end)))

    # -- restore to here -------------------------------------------------------------------------
    def restore_facts(viewer: data.Viewer, db: str, name: str, at: int) -> tuple[dict[str, Any], str | None]:
        """The table, and why the viewer may not restore it (None: it may)."""
        found = data.table_timeline(ctx, viewer, db, name)
        db, name = found["table"]["db"], found["table"]["name"]
        return found, sql_reads.restore_refusal(engine, viewer, db, name, at)

    async def _restore_target(request: web.Request, viewer: data.Viewer, at_text: str | None) -> tuple[
            dict[str, Any], int] | web.Response:
        """(the table's facts, the instant) of a restore the viewer may make, or the page refusing it."""
        try:
            at = parse_at(at_text)
        except ValueError as exc:
            return _html(html.error_page("Restore", str(exc), viewer.name), 400)
        if at is None:
            return _html(html.error_page("Restore", "restore to which moment? (at=…)", viewer.name), 400)
        try:
            found, refusal = await _off_loop(restore_facts, viewer, request.match_info["db"],
                                             request.match_info["table"], at)
        except data.NotFound as exc:
            return _html(html.error_page("Restore", str(exc), viewer.name), 404)
        if refusal is not None:
            return _html(html.error_page("Restore", refusal, viewer.name), 403)
        return found, at

    async def restore_page(request: web.Request, viewer: data.Viewer) -> web.StreamResponse:
        target = await _restore_target(request, viewer, request.query.get("at"))
        if isinstance(target, web.Response):
            return target
        found, at = target
        db, name = found["table"]["db"], found["table"]["name"]
        undone = await _off_loop(sql_reads.changes_since, engine, viewer, db, name, at)
        session: WebSession | None = request.get("console_session")
        return _html(html.restore_page(found, undone, sql_reads.restore_sql(db, name, at),
                                       session.csrf if session is not None else None))

    async def restore(request: web.Request, viewer: data.Viewer) -> web.StreamResponse:
        if request.get("console_session") is None:
            # Only a form session's POST carries a CSRF token (the guard checked it); a browser may
            # send cached Basic credentials with a form another site posts.
            return _html(html.error_page("Restore", "restoring needs a session signed in with the form (it "
                                                    "carries a CSRF token); scripts run RESTORE TABLE over SQL",
                                         viewer.name), 403)
        form = await request.post()
        at_text = form.get("at")
        target = await _restore_target(request, viewer, at_text if isinstance(at_text, str) else None)
        if isinstance(target, web.Response):
            return target
        found, at = target
        db, name = found["table"]["db"], found["table"]["name"]
        done = await _off_loop(sql_reads.restore, engine, viewer, db, name, at)
        if done["error"] is not None:
            return _html(html.error_page("Restore", f"{done['sql']}: {done['error']}", viewer.name), 409)
        log.info("console: %s ran %s", viewer.name, done["sql"])
        return _redirect(f"{html.table_href(db, name)}?{urlencode({'restored': done['sql']})}", 303)

    async def api_pipelines(request: web.Request, viewer: data.Viewer) -> web.StreamResponse:
        return web.json_response(await _off_loop(data.pipelines, ctx, viewer))

    async def page_pipelines(request: web.Request, viewer: data.Viewer) -> web.StreamResponse:
        return _html(html.pipelines_page(await _off_loop(data.pipelines, ctx, viewer)))

    # -- sign-in ---------------------------------------------------------------------------------
    def sign_in_form(request: web.Request, target: str, message: str = "", status: int = 200) -> web.Response:
        login_cookie = sessions.new_login_cookie()
        response = _html(html.sign_in_page(target, sessions.login_csrf(login_cookie), message), status)
        _set_cookie(response, request, LOGIN_COOKIE, login_cookie, LOGIN_TTL_S, "/console/login")
        return response

    async def login_page(request: web.Request) -> web.StreamResponse:
        target = safe_next(request.query.get("next"))
        session = sessions.get(request.cookies.get(SESSION_COOKIE))
        if session is not None and _session_viewer(engine, session) is not None:
            return _redirect(target)
        return sign_in_form(request, target)

    async def login(request: web.Request) -> web.StreamResponse:
        form = await request.post()
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        target = safe_next(fields.get("next"))
        if not sessions.login_csrf_ok(request.cookies.get(LOGIN_COOKIE), fields.get("csrf")):
            return sign_in_form(request, target, "The sign-in form expired or was not this server's; try again.",
                                403)
        viewer = await http_login(engine, failures, fields.get("user", ""), fields.get("password", ""))
        if isinstance(viewer, str):
            return sign_in_form(request, target, viewer, 401)
        sessions.end(request.cookies.get(SESSION_COOKIE))  # a fresh token on every sign-in (no fixation)
        token, _ = sessions.start(viewer.name)
        response = _redirect(target, 303)
        _set_cookie(response, request, SESSION_COOKIE, token, SESSION_TTL_S, "/")
        response.del_cookie(LOGIN_COOKIE, path="/console/login")
        return response

    async def logout_page(request: web.Request, viewer: data.Viewer) -> web.StreamResponse:
        session: WebSession | None = request.get("console_session")
        return _html(html.sign_out_page(viewer.name, session.csrf if session is not None else None))

    async def logout(request: web.Request, viewer: data.Viewer) -> web.StreamResponse:
        sessions.end(request.cookies.get(SESSION_COOKIE))  # the guard checked its CSRF token
        response = _redirect("/console/login", 303)
        response.del_cookie(SESSION_COOKIE, path="/")
        return response

    async def root(request: web.Request) -> web.StreamResponse:
        return _redirect("/console")

    def guard(handler: Handler) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        return _authenticated(engine, failures, sessions, handler)

    app.router.add_get("/", root)
    app.router.add_get("/console/login", login_page)
    app.router.add_post("/console/login", login)
    app.router.add_get("/console/logout", guard(logout_page))
    app.router.add_post("/console/logout", guard(logout))
    app.router.add_get("/console", guard(page_tables))
    app.router.add_get("/console/", guard(page_tables))
    app.router.add_get("/console/table/{db}/{table}", guard(page_table))
    app.router.add_get("/console/table/{db}/{table}/restore", guard(restore_page))
    app.router.add_post("/console/table/{db}/{table}/restore", guard(restore))
    app.router.add_get("/console/pipelines", guard(page_pipelines))
    app.router.add_get("/api/console/tables", guard(api_tables))
    app.router.add_get("/api/console/table/{db}/{table}", guard(api_table))
    app.router.add_get("/api/console/pipelines", guard(api_pipelines))
