"""Stream Load's HTTP endpoints on the SQL server's HTTP port, as Doris FE/BE serve them:

- `PUT /api/{db}/{table}/_stream_load`: HTTP Basic auth with a SQL login that holds LOAD_PRIV on
  the table; the body (after `Expect: 100-continue`, which aiohttp answers) is streamed to a spool
  file, then loaded on a worker thread (query.stream_load.job). Served here directly, so
  `curl --location-trusted` needs no redirect.
- `PUT /api/{db}/_stream_load_2pc`: commit or abort a prepared load (`txn_id`, `txn_operation`).
- `GET /api/_load_error_log?file=…`: the rows a load rejected (its reply's ErrorURL).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Callable
from functools import partial
from pathlib import Path
from typing import Any

from aiohttp import web

from projections.state import TableState
from query.auth import FailedLogins
from query.console import data
from query.console.routes import REALM, credentials, http_login
from query.context import SqlFailure
from query.engine import Engine
from query.spool import prune_orphans, spool_file
from query.stream_load import error_log, job, transactions
from query.stream_load.reply import failed
from query.stream_load.request import BadRequest, parse_request

log = logging.getLogger("strata.stream_load")
_SPOOL_CHUNK = 1 << 20
# How often each SQL server aborts prepared loads past their deadline (transactions.sweep).
SWEEP_INTERVAL_S = 2.0




async def _off_loop(fn: Callable[..., Any], *args: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(None, partial(fn, *args))


def _unauthorized(message: str) -> web.Response:
    return web.json_response({"status": "FAILED", "msg": message}, status=401, headers={"WWW-Authenticate": REALM})


async def _spool(request: web.Request, path: Path) -> int:
    """The body into `path` a chunk at a time (never whole in memory); returns its size."""
    size = 0
    with open(path, "wb") as out:
        async for chunk in request.content.iter_chunked(_SPOOL_CHUNK):
            out.write(chunk)
            size += len(chunk)
    return size


def _table(engine: Engine, db: str, name: str) -> TableState:
    ctx = engine.ctx
    ctx.catch_up()
    database = ctx.projection.database_by_name(db)
    if database is None:
        raise BadRequest(f"Unknown database '{db}'")
    found = ctx.projection.table_by_name(database.db_id, name)
    if found is None:
        raise BadRequest(f"Unknown table '{name}' in database '{db}'")
    return found


def _may_load(viewer: data.Viewer, db: str, table: str) -> bool:
    """LOAD_PRIV on the table, the privilege INSERT needs (query.access)."""
    return viewer.user is None or viewer.user.may("LOAD_PRIV", db, table)


def add_routes(app: web.Application, engine: Engine) -> None:
    failures = FailedLogins()

    async def login(request: web.Request) -> data.Viewer | web.Response:
        given = credentials(request)
        if given is None:
            return _unauthorized("no valid Basic authorization: sign in with a SQL user")
        viewer = await http_login(engine, failures, *given)
        return _unauthorized(viewer) if isinstance(viewer, str) else viewer

    async def stream_load(request: web.Request) -> web.StreamResponse:
        db, name = request.match_info["db"], request.match_info["table"]
        label = request.headers.get("label", "")
        viewer = await login(request)
        if isinstance(viewer, web.Response):
            return viewer
        if not _may_load(viewer, db, name):
            return _unauthorized(f"Access denied; user '{viewer.name}' needs LOAD_PRIV on {db}.{name}")
        try:
            table = await _off_loop(_table, engine, db, name)
            load = parse_request(request.headers, table)
        except (BadRequest, SqlFailure) as exc:
            message = exc.message if isinstance(exc, SqlFailure) else str(exc)
            return web.json_response(failed(label, f"[ANALYSIS_ERROR]{message}").as_json())
        path = spool_file(engine.ctx.config.home, ".body")
        try:
            size = await _spool(request, path)
            base_url = f"{request.scheme}://{request.host}"
            reply = await _off_loop(job.run, engine.ctx, table, load, path, size, base_url)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        return web.json_response(reply.as_json())

    async def two_phase(request: web.Request) -> web.StreamResponse:
        viewer = await login(request)
        if isinstance(viewer, web.Response):
            return viewer
        answer = await _off_loop(transactions.finish_request, engine.ctx, viewer, request.match_info["db"],
                                 dict(request.headers))
        return web.json_response(answer)

    async def error_rows(request: web.Request) -> web.StreamResponse:
        # Like Doris BE's, no login: the file name is an unguessable token handed only to the loader.
        path = error_log.path_of(engine.ctx.config.home, request.query.get("file", ""))
        if path is None:
            return web.Response(status=404, text="no such error log\n")
        # Served from the file a piece at a time: a log of millions of rejected rows is never read whole.
        return web.FileResponse(path, headers={"Content-Type": "text/plain; charset=utf-8"})

    async def sweeper(app: web.Application) -> AsyncIterator[None]:
        # What a SQL server killed mid-load spooled: nothing reads it any more.
        await _off_loop(prune_orphans, engine.ctx.config.home)

        async def loop() -> None:
            while True:
                await asyncio.sleep(SWEEP_INTERVAL_S)
                try:
                    await _off_loop(transactions.sweep, engine.ctx)
                except Exception:  # noqa: BLE001 - Kafka away, a bug: the next round tries again
                    log.exception("sweeping expired prepared stream loads failed")
        task = asyncio.create_task(loop())
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    app.cleanup_ctx.append(sweeper)
    for path in ("/api/{db}/{table}/_stream_load", "/api/{db}/{table}/_stream_load/"):
        app.router.add_put(path, stream_load)
    app.router.add_put("/api/{db}/_stream_load_2pc", two_phase)
    app.router.add_get("/api/_load_error_log", error_rows)
