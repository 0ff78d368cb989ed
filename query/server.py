"""The SQL server: Doris SQL over the MySQL protocol on :9030 (mysql-mimic), HTTP on :8030
for `/health` and Prometheus `/metrics`, and Arrow Flight SQL on :9090 (query.flight).

Every statement is parsed by Strata's own Doris parser (mysql-mimic's sqlglot parse would reject
Doris forms before we saw them). Every SELECT, with or without FROM, runs on the engine (one
evaluator: DuckDB in its sandbox, session values from query.session_functions); only client
housekeeping (SET, SET NAMES, SET TRANSACTION) is handed back to mysql-mimic, which keeps the
session's variables; SHOW VARIABLES is the engine's (query.server_info), so its LIKE/WHERE filter.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import re
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import tzinfo
from typing import Any

import pyarrow as pa
from aiohttp import web
from confluent_kafka import KafkaException
from mysql_mimic import Session
from mysql_mimic.connection import Connection
from mysql_mimic.errors import MysqlError
from mysql_mimic.types import str_len
from mysql_mimic.variables import GlobalVariables, SessionVariables
from prometheus_client import CONTENT_TYPE_LATEST, Counter, Gauge, Histogram, generate_latest
from sqlglot import exp

from projections.checkpoints import Manifest
from query import cluster, group_commit, timeouts
from query.auth import StrataIdentityProvider
from query.connections import StrataControl
from query.console.routes import add_routes as console_routes
from query.console.routes import admin_only
from query.context import Done, Rows, SessionState, SqlFailure, StatementGuard
from query.doris_variables import DORIS_VARIABLES
from query.engine import Engine
from query.flight import server as flight_server
from query.parser import SqlError, SqlSyntaxError, parse_script, table_refs
from query.parser import statements as st
from query.reads import session_zone
from query.secret_text import mask_secrets
from query.start import LOG_FORMAT, replica_name
from query.stream_load.routes import add_routes as stream_load_routes
from query.system_variables import MYSQL_VARIABLES, SYNONYMS
from query.wire import WireLimits, WireServer
from query.wire.columns import WireColumn, WireResult, describe
from schemas.config import ConfigError, settings, strata_version
from schemas.errors import ErrorCode
from storage import arrow_memory, cache_metrics

log = logging.getLogger("strata.sql")

STATEMENTS = Counter("strata_sql_statements_total", "statements handled", ["kind", "outcome"])
LATENCY = Histogram("strata_sql_statement_seconds", "statement latency", ["kind"])
APPLIED = Gauge("strata_sql_projection_events_applied", "events the replica has applied")
ARROW_POOL = Gauge("strata_sql_arrow_memory_pool", "the Arrow memory pool in use (1, by backend)", ["backend"])
ARROW_BYTES = Gauge("strata_sql_arrow_allocated_bytes", "bytes Arrow's default memory pool holds")
DECODE_ERRORS = Gauge("strata_sql_projection_decode_errors", "undecodable events skipped by the replica")
APPLY_ERRORS = Gauge("strata_sql_projection_apply_errors", "events the replica's fold could not apply (skipped)")

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Statements mysql-mimic answers itself, like a MySQL server would.
_MIMIC = (st.SetVariables, st.SetNames, st.Passthrough)
# Statements up to this size parse in well under a millisecond: on the event loop, which is cheaper
# than two thread hand-offs; longer ones are parsed on a worker thread.
_INLINE_PARSE_CHARS = 2048
# Prepared statements described per connection (`prepared_columns`): an application's working set
# of statement texts, while a pool of hundreds of connections still holds little.
_DESCRIBED_PER_CONNECTION = 64


def _delegates(statement: st.Statement) -> bool:
    # Never a SELECT: those all go to the engine (its sandbox and access checks included).
    return isinstance(statement, _MIMIC)


def _client_error(code: int, message: str) -> MysqlError:
    """MariaDB's Connector/C (the `mariadb` CLI, and drivers built on it) keeps error codes 2000-2999
    and 5000-5999 for its own client errors and reports a server error coded there as "Received
    malformed packet"; Doris' own codes (5001 label already used, 5063, 5089 …) go out as Doris sends
    most errors: 1105 with the code in the text."""
    if 2000 <= code < 3000 or 5000 <= code < 6000:
        return MysqlError(f"errCode = {code}, detailMessage = {message}", ErrorCode.UNKNOWN_ERROR)  # type: ignore[arg-type]
    return MysqlError(message, code)  # type: ignore[arg-type]


def _group_commit_mode(value: Any) -> str:
    """`SET group_commit = …` is checked when set, like Doris, so a typo fails the SET itself."""
    mode = str(value).strip().strip("'\"").lower()
    if mode not in group_commit.MODES:
        raise MysqlError(f"Variable 'group_commit' can't be set to the value of '{value}' "
                         f"(one of {', '.join(group_commit.MODES)})", ErrorCode.WRONG_VALUE_FOR_VAR)  # type: ignore[arg-type]
    return mode


# mysql-mimic answers SET, SHOW VARIABLES and @@… from this schema; Strata's own variables join it.
_OWN_VARIABLES: dict[str, tuple[Any, Any, bool]] = {"group_commit": (_group_commit_mode, "off_mode", True),
                                                     **timeouts.VARIABLES}
_VARIABLES = {**MYSQL_VARIABLES, **DORIS_VARIABLES, **_OWN_VARIABLES}


def _session_variables() -> SessionVariables:
    """A session's MySQL system variables (`@@x`), with the server's defaults."""
    return SessionVariables(GlobalVariables(_VARIABLES))


class StrataSession(Session):
    def __init__(self, engine: Engine) -> None:
        super().__init__(_session_variables())
        self.engine = engine
        # @@x in a statement reads mysql-mimic's variables (query.session_functions), in either scope.
        self.state = SessionState(system_variables=self.variables, global_variables=self.variables.global_variables)
        # The count and AUTO_INCREMENT insert id of the last statement answered with an OK; see `init`.
        self._affected_rows = 0
        self._insert_id = 0
        self._info = ""  # the info text of the last statement answered with an OK; see `init`
        self._sql = ""
        self._parsed: list[exp.Expression] | None = None  # mimic's parse of the statement, made off the loop
        # `prepared_columns` answers by statement text, database and user: (catalog generation when
        # described, whether it reads a table, columns); least recently used first.
        self._described: OrderedDict[tuple[str, str | None, str], tuple[int, bool, list[WireColumn]]] = OrderedDict()
        # Set by the connection while it runs a text-protocol query (query.wire.connection's
        # StreamsResults): a lone SELECT's rows may then be streamed (query.streamed_rows).
        self.streams_results = False

    async def init(self, connection: Connection) -> None:
        """mysql-mimic builds the Connection itself and writes a statement's OK packet with
        `connection.ok()`, which knows no count; so the session, which does know it, lends it to
        that call. Explicit counts (`ok_or_eof(affected_rows=…)` after a result set) are kept."""
        await super().init(connection)
        # A database named in the handshake reaches only mimic's `self.database`; the engine must know
        # it too. It was checked before the handshake's OK (query.login_policy via query.connections).
        self.state.database = self.database
        self.state.user = self.username or "root"
        self.state.connection_id = connection.connection_id
        info = self.engine.ctx.sessions.get(connection.connection_id)
        if info is not None and info.host:
            self.state.client_host = info.host.rsplit(":", 1)[0]  # 'ip:port' (query.connections)
        plain_ok = connection.ok

        def ok(**kwargs: Any) -> bytes:
            if "affected_rows" in kwargs:
                return plain_ok(**kwargs)
            kwargs["affected_rows"], self._affected_rows = self._affected_rows, 0
            kwargs["last_insert_id"], self._insert_id = self._insert_id, 0
            info, self._info = self._info, ""
            # The statement's info text (Doris' `{'label':…, 'status':…, 'txnId':…}` after an INSERT)
            # ends the OK packet, which mimic does not write; length-encoded, as MySQL's net_send_ok
            # stores it whatever the client's capabilities (libmariadb reads it so).
            return plain_ok(**kwargs) + (str_len(info.encode()) if info else b"")

        connection.ok = ok  # type: ignore[method-assign]

    async def use(self, database: str) -> None:
        await self._run(st.Use(db=database))

    async def reset(self) -> None:
        # COM_CHANGE_USER resets the variables (time_zone among them), which descriptions depend on.
        self._described.clear()
        await super().reset()

    async def schema(self) -> dict[str, Any]:
        return {}

    async def handle_query(self, sql: str, attrs: dict[str, str]) -> Any:
        loop = asyncio.get_running_loop()
        inline = len(sql) <= _INLINE_PARSE_CHARS
        try:
            # Parsing a multi-MB statement takes seconds: off the event loop, which serves every client.
            statements = parse_script(sql) if inline else await loop.run_in_executor(None, parse_script, sql)
        except SqlSyntaxError as exc:
            STATEMENTS.labels("parse", "error").inc()
            raise MysqlError(mask_secrets(_ANSI.sub("", exc.message)), ErrorCode.PARSE_ERROR) from None  # type: ignore[arg-type]
        except SqlError as exc:
            STATEMENTS.labels("parse", "unsupported").inc()
            raise MysqlError(mask_secrets(_ANSI.sub("", str(exc))), ErrorCode.NOT_SUPPORTED_YET) from None  # type: ignore[arg-type]
        result: Any = None
        self._affected_rows, self._insert_id, self._info = 0, 0, ""
        # SHOW PROCESSLIST's Info; a multi-MB statement is scanned off the event loop, as it is parsed.
        self._sql = mask_secrets(sql) if inline else await loop.run_in_executor(None, mask_secrets, sql)
        # Only a lone statement's rows are streamed: a script answers with its last result only.
        stream = self.streams_results and len(statements) == 1 and self.engine.ctx.config.sql_stream_results
        for statement in statements:
            if _delegates(statement) and len(statements) == 1:
                try:
                    # mysql-mimic parses the text again with sqlglot; that too runs off the loop (`_parse`).
                    self._parsed = None if inline else await loop.run_in_executor(None, super()._parse, sql)
                    result = await super().handle_query(sql, attrs)
                except MysqlError:
                    raise
                except Exception as exc:  # noqa: BLE001 - mimic's evaluator may not know a function
                    raise MysqlError(_ANSI.sub("", str(exc)), ErrorCode.NOT_SUPPORTED_YET) from None  # type: ignore[arg-type]
                finally:
                    # A SET may change what a described SELECT reads: @@x, the time_zone its times are
                    # described in. Rare next to PREPAREs, so every description is simply forgotten.
                    self._described.clear()
                self._copy_variables()
            else:
                result = await self._run(statement, stream=stream)
        return result

    async def prepared_columns(self, sql: str) -> list[WireColumn]:
        """The result columns of a prepared statement (its parameters NULL), for COM_STMT_PREPARE's
        answer: MySQL announces them there, and libmysqlclient and Connector/J size their result
        bindings and getMetaData() from them. A lone SELECT runs with LIMIT 0 through `_run`, so the
        same engine, access checks and sandbox as any statement; anything else, or a SELECT that
        fails so, announces none, and its EXECUTE answer describes its columns (clients accept that).

        Running it costs about as much as the SELECT itself, and clients prepare the same text again
        and again (a cursor per call), so a description is kept per connection, keyed by the text,
        the database and the user, and used while the projection's `catalog_generation` is the one
        it was made at: any DDL, grant or user change, on this server or folded from another, makes
        it stale. A SELECT of a table still waits for the replica to hold the log as of now first,
        as running it would (read-your-writes across servers). Failures are not kept: they may
        depend on data (FOR VERSION AS OF a commit not made yet)."""
        key = (sql, self.state.database, self.state.user)
        kept = self._described.get(key)
        if kept is not None and kept[1]:
            try:
                await asyncio.get_running_loop().run_in_executor(None, self.engine.ctx.catch_up)
            except (SqlFailure, KafkaException):
                return []  # the replica is not catching up (Kafka away): the SELECT itself would fail so
        if kept is not None and kept[0] == self.engine.ctx.projection.catalog_generation:
            self._described.move_to_end(key)
            return kept[2]
        # Read before describing: a change folded meanwhile leaves the entry stale, never wrong.
        generation = self.engine.ctx.projection.catalog_generation
        described = await self._describe(sql)
        if described is not None:
            self._described[key] = (generation, *described)
            self._described.move_to_end(key)
            if len(self._described) > _DESCRIBED_PER_CONNECTION:
                self._described.popitem(last=False)
        return [] if described is None else described[1]

    async def _describe(self, sql: str) -> tuple[bool, list[WireColumn]] | None:
        """(whether it reads a table, its result columns) of a prepared statement; None when a
        SELECT failed."""
        try:
            statements = await asyncio.get_running_loop().run_in_executor(None, parse_script, sql)
        except SqlError:
            return False, []
        if len(statements) != 1 or not isinstance(statements[0], st.Query) or \
                not isinstance(statements[0].expr, exp.Query):
            return False, []
        expr = statements[0].expr
        self._sql = mask_secrets(sql)
        try:
            result = await self._run(st.Query(expr=expr.limit(0)))
        except MysqlError:
            return None
        return bool(table_refs(expr)), result.columns if isinstance(result, WireResult) else []

    def _parse(self, sql: str) -> list[exp.Expression]:
        parsed, self._parsed = self._parsed, None
        return parsed if parsed is not None else super()._parse(sql)

    def _set_variable(self, setitem: exp.SetItem) -> None:
        """Doris writes `SET group_commit = async_mode` with a bare word, which mysql-mimic refuses as a
        "complex expression"; for Strata's own variables the word is taken as the string. mysql-mimic
        knows ON, OFF and DEFAULT only in capitals; MySQL in any case (`SET autocommit = on`)."""
        assignment = setitem.this
        right = assignment.right if isinstance(assignment, exp.EQ) else None
        bare = isinstance(right, exp.Var) or (isinstance(right, exp.Column) and not right.table)
        if bare and right is not None and assignment.left.name.lower() in _OWN_VARIABLES:
            setitem = setitem.copy()
            setitem.this.set("expression", exp.Literal.string(right.name))
        elif bare and right is not None and right.name.upper() in ("ON", "OFF", "DEFAULT"):
            setitem = setitem.copy()
            setitem.this.set("expression", exp.var(right.name.upper()))
        name = assignment.left.name.lower()
        schema = self.variables.schema.get(name)
        if schema is not None and not schema[2]:
            raise MysqlError(f"Variable '{name}' is a read only variable", ErrorCode.INCORRECT_GLOBAL_LOCAL_VAR)  # type: ignore[arg-type]
        try:
            super()._set_variable(setitem)
        except (ValueError, TypeError):  # the variable's type refused the value
            value = right.name if isinstance(right, exp.Literal) else right.sql(dialect="mysql") if right else ""
            raise MysqlError(f"Variable '{name}' can't be set to the value of '{value}'",
                             ErrorCode.WRONG_VALUE_FOR_VAR) from None  # type: ignore[arg-type]
        self._mirror(name)

    def _set_transaction(self, item: exp.SetItem) -> None:
        super()._set_transaction(item)
        self._mirror("transaction_isolation")
        self._mirror("transaction_read_only")

    def _mirror(self, name: str) -> None:
        """tx_isolation and transaction_isolation (tx_read_only, transaction_read_only) are one setting."""
        synonym = SYNONYMS.get(name.lower())
        if synonym is not None:
            self.variables.set(synonym, self.variables.get(name.lower()))

    def _copy_variables(self) -> None:
        """The engine reads the session's variables from its SessionState, not from mysql-mimic."""
        self.state.variables["time_zone"] = str(self.variables.get("time_zone") or "UTC")
        self.state.variables["group_commit"] = str(self.variables.get("group_commit") or "off_mode")
        for name in timeouts.SESSION_VARIABLES:
            self.state.variables[name] = str(self.variables.get(name))

    def _zone(self) -> tzinfo:
        try:
            return session_zone(self.state)
        except SqlFailure as failure:
            raise MysqlError(failure.message, failure.code) from None  # type: ignore[arg-type]

    async def _run(self, statement: st.Statement, stream: bool = False) -> Any:
        """The statement's answer: a WireResult (rows streamed when `stream` and the engine can), or
        None after an OK-type statement."""
        kind = type(statement).__name__
        started = time.perf_counter()
        # query_timeout / insert_timeout and KILL QUERY cancel the statement through its guard.
        self._copy_variables()
        guard = self.state.guard = StatementGuard()
        limit_s, timed_out = timeouts.limit_of(statement, self.state.variables,
                                               self.engine.ctx.projection.users.get(self.state.user.lower()))
        timer = asyncio.get_running_loop().call_later(limit_s, guard.cancel, timed_out)
        sessions = self.engine.ctx.sessions
        sessions.started(self.state.connection_id, self._sql, guard, self.state.database)
        self.state.stream_results = stream
        try:
            result = await asyncio.get_running_loop().run_in_executor(None, self.engine.execute, self.state,
                                                                      statement)
        except SqlFailure as failure:
            STATEMENTS.labels(kind, "error").inc()
            raise _client_error(failure.code, failure.message) from None
        except KafkaException as exc:
            # The broker is down or restarting: not a bug, and the client should hear it plainly.
            log.warning("statement %s failed: Kafka unreachable: %s", kind, exc)
            STATEMENTS.labels(kind, "error").inc()
            error: Any = exc.args[0] if exc.args else None
            detail = error.name() if hasattr(error, "name") else str(exc)
            raise MysqlError(f"{kind} failed: the commit log (Kafka) is unreachable ({detail}); retry once it is "
                             "back (a write retried WITH LABEL is applied once)", ErrorCode.UNKNOWN_ERROR) from None  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - a bug must cost one statement, not the connection
            log.exception("statement %s failed", kind)
            STATEMENTS.labels(kind, "internal_error").inc()
            raise MysqlError(f"internal error in {kind}: {exc}", ErrorCode.UNKNOWN_ERROR) from None  # type: ignore[arg-type]
        finally:
            self.state.stream_results = False
            timer.cancel()
            guard.finish()
            self.state.guard = None
            sessions.finished(self.state.connection_id, self.state.database)
            LATENCY.labels(kind).observe(time.perf_counter() - started)
        STATEMENTS.labels(kind, "ok").inc()
        # USE sets it, DROP DATABASE of the current one clears it; SELECT DATABASE() reads mimic's copy.
        self.database = self.state.database
        if isinstance(result, Rows):
            # Described from the executor's types (query.wire.columns); times in the session's zone.
            try:
                return WireResult(result.rows, describe(result.columns, result.types, result.rows, self._zone()),
                                  result.batches)
            except BaseException:
                if result.batches is not None:
                    result.batches.close()
                raise
        assert isinstance(result, Done)
        self._affected_rows, self._insert_id = result.affected_rows, result.last_insert_id
        self._info = result.info
        return None


def _http_app(engine: Engine) -> web.Application:
    async def health(request: web.Request) -> web.Response:
        ok = engine.healthy()
        # started_ms and version: what SHOW FRONTENDS on another SQL server reports of this one.
        return web.json_response({"status": "ok" if ok else "degraded", "replica": engine.name,
                                  "applied_events": engine.ctx.follower.applied_events,
                                  "started_ms": cluster.STARTED_MS, "version": strata_version(),
                                  "arrow_flight_sql_port": engine.ctx.config.arrow_flight_sql_port or None},
                                 status=200 if ok else 503)

    async def metrics(request: web.Request) -> web.Response:
        APPLIED.set(engine.ctx.follower.applied_events)
        DECODE_ERRORS.set(engine.ctx.follower.decode_errors)
        APPLY_ERRORS.set(engine.ctx.follower.apply_errors)
        cache_metrics.publish(engine.ctx.locator.cache)
        return web.Response(body=generate_latest(), content_type=CONTENT_TYPE_LATEST.split(";")[0])

    async def file_cache(request: web.Request) -> web.Response:
        # Doris BE's `/api/file_cache?op=clear`: benchmarks and operators start from a cold cache.
        if request.query.get("op") != "clear":
            return web.json_response({"status": "error", "msg": "op must be clear"}, status=400)
        cleared = engine.ctx.locator.cache.clear()
        return web.json_response({"status": "ok", "cleared_files": cleared})

    app = web.Application()
    # Every endpoint that changes server state needs an admin login (query.console.routes.admin_only).
    app.router.add_post("/api/file_cache", admin_only(engine, file_cache))
    app.router.add_get("/health", health)
    app.router.add_get("/metrics", metrics)
    console_routes(app, engine)  # /console (HTML) and /api/console/… (JSON), SQL logins
    stream_load_routes(app, engine)  # Doris Stream Load: /api/{db}/{table}/_stream_load, 2PC, error logs
    return app


async def serve(restoring: Future[Manifest | None] | None = None) -> None:
    """`restoring`: this server's checkpoint restore, begun before its modules were loaded (`query.start`)."""
    config = settings()
    engine = Engine(config, name=replica_name(config), restoring=restoring)
    presence = cluster.sql_server_presence(config)  # SHOW FRONTENDS of the other SQL servers lists this one
    presence.start()
    if not config.root_password.get_secret_value():
        log.warning("root has no password: anyone who reaches %s:%d is root. Set STRATA_ROOT_PASSWORD "
                    "anywhere but a local stack", config.sql_host, config.sql_port)
    def auth_string(name: str) -> str | None:
        found = engine.ctx.projection.users.get(name.lower())
        return None if found is None else found.auth_string

    control = StrataControl(engine.ctx.sessions, engine.login_policy, config.qe_max_connection)
    identities = StrataIdentityProvider(auth_string, config.root_password.get_secret_value(), engine.ctx.stores.box,
                                        gate=control)
    # Statements run on these threads (run_in_executor(None, …)); the default pool has only cores + 4.
    asyncio.get_running_loop().set_default_executor(
        ThreadPoolExecutor(config.sql_worker_threads, thread_name_prefix="sql-statement"))
    limits = WireLimits(config.sql_max_packet_bytes, config.sql_handshake_timeout_s, config.sql_max_prepared_statements)
    server = WireServer(session_factory=lambda: StrataSession(engine), identity_provider=identities,
                        control=control, limits=limits)
    runner = web.AppRunner(_http_app(engine))
    await runner.setup()
    await web.TCPSite(runner, config.sql_host, config.http_port).start()
    log.info("SQL on %s:%d, HTTP on %s:%d", config.sql_host, config.sql_port, config.sql_host, config.http_port)
    # Arrow Flight SQL in this process (gRPC's own threads): the same engine, replica, logins and
    # grants as the SQL port, and no second replica of the projections to keep in memory and in step.
    flight = None
    if config.arrow_flight_sql_port:
        flight = flight_server.start(engine, config.sql_host, config.arrow_flight_sql_port,
                                     asyncio.get_running_loop(), _session_variables)
        log.info("Arrow Flight SQL on %s:%d", config.sql_host, config.arrow_flight_sql_port)
    # A full garbage collection stops every thread, the event loop too, for as long as it takes to
    # walk every tracked object; what startup built (modules, catalog, sqlglot's tables) lives for
    # good, so it is moved out of the collector's sight once instead of being walked every time.
    gc.collect()
    gc.freeze()
    try:
        await server.serve_forever(host=config.sql_host, port=config.sql_port)
    finally:
        presence.stop()  # a clean leave: the others stop listing this server at once
        if flight is not None:
            flight.close_results()
            flight.shutdown()


def main(restoring: Future[Manifest | None] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    ARROW_POOL.labels(arrow_memory.use_system_pool()).set(1)  # before any statement allocates (see the module)
    ARROW_BYTES.set_function(lambda: pa.default_memory_pool().bytes_allocated())
    try:
        asyncio.run(serve(restoring))
    except ConfigError as exc:
        raise SystemExit(f"strata sql: {exc}") from None
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
