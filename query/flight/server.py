"""Arrow Flight SQL on `arrow_flight_sql_port`, served from the SQL server's process: the same
engine, projection replica, logins and grants as the MySQL port (one evaluator for every
statement; Flight is only another way in and out).

A statement (CommandStatementQuery, or a prepared statement's text) runs in GetFlightInfo, as Doris
runs it there: parsed by Strata's parser and executed by `Engine.execute` as the token's user, under
its query_timeout (query.timeouts). Its rows stay in DuckDB's streaming reader until the DoGet the
answer's ticket names reads them, a record batch at a time (bounded memory); a ticket not fetched
within `UNCLAIMED_S` is closed (its cursor and file-cache pins let go). DML and DDL go through
DoPut (CommandStatementUpdate), which answers the affected row count. The CloseSession action (ADBC
sends it when a connection closes) ends the token at once — its session, prepared statements and
unread results — instead of when it has been idle for an hour: until then it would count toward the
user's max_user_connections. A token ended otherwise (KILL CONNECTION, idle, pushed out) also takes its
unread results with it. A prepared statement announces its rows' and parameters' schemas (`_describe`);
its `?` parameters come as a record batch sent with DoPut and are bound as typed literals
(query.flight.parameters). Transactions, Substrait, bulk ingest and the rest of Flight SQL are refused
as not supported.

Errors keep the SQL port's text: `ERROR <code> (<sqlstate>): <message>`; a missing privilege is
PERMISSION_DENIED, a wrong login UNAUTHENTICATED, anything else a FlightServerError.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import pyarrow as pa
import pyarrow.flight as flight
from confluent_kafka import KafkaException
from mysql_mimic.variables import SessionVariables
from prometheus_client import Counter
from sqlglot import exp

from query import timeouts
from query.context import Done, Result, Rows, SessionState, SqlFailure
from query.engine import Engine
from query.flight import catalog
from query.flight import messages as m
from query.flight.logins import FlightLogin, FlightLogins, LoginMiddlewareFactory, NoHandshake, mysql_text
from query.flight.parameter_types import markers, parameter_schema
from query.flight.parameters import FirstRun, PreparedStatement, bind_rows, prepare, statements, with_values
from query.flight.results import ArrowResult, from_rows
from query.parser import SqlError, SqlSyntaxError, parse_script
from query.parser import statements as st
from query.secret_text import mask_secrets
from schemas.errors import ErrorCode

log = logging.getLogger("strata.flight")
STATEMENTS = Counter("strata_flight_sql_statements_total", "Flight SQL statements handled", ["kind", "outcome"])
UNCLAIMED_S = 300.0  # a result whose DoGet never came is closed after this long
MAX_PENDING = 256  # results awaiting their DoGet at once (each holds a DuckDB cursor)
MAX_PENDING_PER_LOGIN = 16
# How long the rows of a prepared statement's run at CreatePreparedStatement wait for the GetFlightInfo that
# executes it (clients send it at once); later, it runs again.
FIRST_RUN_S = 1.0
# Statements that answer rows and change nothing: prepared without parameters, they run as they are prepared.
_READS: tuple[type[st.Statement], ...] = (st.Query, st.Describe, st.Explain, *(
    kind for name, kind in vars(st).items()
    if isinstance(kind, type) and issubclass(kind, st.Statement) and name.startswith(("Show", "AdminShow"))))
# arrow.flight.protocol.CloseSessionResult.Status (Flight.proto): the session is closed.
_SESSION_CLOSED = 1
_DENIED = {ErrorCode.ACCESS_DENIED, ErrorCode.TABLE_ACCESS_DENIED, ErrorCode.DB_ACCESS_DENIED,
           ErrorCode.SPECIFIC_ACCESS_DENIED, ErrorCode.KILL_DENIED}


def _refuse(code: int, message: str) -> NoReturn:
    text = mysql_text(code, message)
    if code in _DENIED:
        raise flight.FlightUnauthorizedError(text)
    # Flight's own errors only: pyarrow sends any other exception's Python traceback to the client.
    raise flight.FlightServerError(text)


def _address(peer: str | bytes) -> str:
    """gRPC's peer (`ipv4:127.0.0.1:5000`, `ipv6:[::1]:5000`) as SHOW PROCESSLIST's Host, `ip:port`."""
    text = peer.decode() if isinstance(peer, bytes) else peer
    return text.split(":", 1)[1] if text.startswith(("ipv4:", "ipv6:")) else text


def _not_supported(what: str) -> NoReturn:
    _refuse(ErrorCode.NOT_SUPPORTED_YET, f"{what} is not supported by Strata's Arrow Flight SQL")


def _without_rows(statement: st.Statement) -> st.Statement:
    """What to run to learn a reading statement's rows' schema: a SELECT under LIMIT 0 (no row is read,
    as the MySQL port describes a prepared SELECT); another reading statement (SHOW …) as it is."""
    if isinstance(statement, st.Query) and isinstance(statement.expr, exp.Query):
        return st.Query(expr=statement.expr.limit(0))
    return statement


def _refusing(result: ArrowResult) -> Iterator[pa.RecordBatch]:
    """The result's batches; a batch that fails to read (a file gone under the stream, a cast error
    met late) ends the stream with the statement's MySQL error."""
    try:
        yield from result.batches
    except SqlFailure as failure:
        _refuse(failure.code, failure.message)
    finally:
        result.close()


class _Pending:
    """Results between their GetFlightInfo and their DoGet, by statement handle; a ticket is good
    only for the login that ran its statement."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._results: dict[bytes, tuple[float, str, ArrowResult]] = {}  # handle → (made at, token, result)

    def _close_where(self, doomed: Callable[[float, str], bool]) -> None:
        """Takes out the results `doomed(made at, token)` picks and closes them (their DuckDB cursors and
        file-cache pins) outside the lock: a close may wait for a batch being read."""
        with self._lock:
            handles = [h for h, (at, owner, _) in self._results.items() if doomed(at, owner)]
            taken = [self._results.pop(h)[2] for h in handles]
        for result in taken:
            result.close()

    def expire(self) -> None:
        """Closes the results left unclaimed for `UNCLAIMED_S`."""
        now = time.monotonic()
        self._close_where(lambda at, _owner: now - at > UNCLAIMED_S)

    def add(self, token: str, result: ArrowResult) -> bytes:
        handle = self.offer(token, result)
        if handle is None:
            raise flight.FlightUnavailableError("too many results are waiting for their DoGet "
                                                f"({MAX_PENDING_PER_LOGIN} a login, {MAX_PENDING} in all); "
                                                "fetch them before running more")
        return handle

    def offer(self, token: str, result: ArrowResult) -> bytes | None:
        """`add`, or None (the result closed) when the login or the server holds too many already."""
        self.expire()
        handle = secrets.token_bytes(16)
        now = time.monotonic()
        with self._lock:
            mine = sum(1 for _, owner, _ in self._results.values() if owner == token)
            full = len(self._results) >= MAX_PENDING or mine >= MAX_PENDING_PER_LOGIN
            if not full:
                self._results[handle] = (now, token, result)
        if full:
            result.close()
            return None
        return handle

    def take(self, token: str, handle: bytes) -> ArrowResult:
        with self._lock:
            found = self._results.get(handle)
            if found is not None and found[1] == token:
                del self._results[handle]
            else:
                found = None
        if found is None:
            raise flight.FlightServerError("the ticket is unknown, already fetched or expired: run the statement again")
        return found[2]

    def drop(self, token: str) -> None:
        """Closes the results of a login that ended."""
        self._close_where(lambda _at, owner: owner == token)

    def close(self) -> None:
        self._close_where(lambda _at, _owner: True)


class StrataFlightServer(flight.FlightServerBase):
    def __init__(self, engine: Engine, location: str, loop: asyncio.AbstractEventLoop,
                 variables: Callable[[], SessionVariables]) -> None:
        self.engine = engine
        self._pending = _Pending()
        self.logins = FlightLogins(engine, loop, variables, ended=self._pending.drop)
        super().__init__(location, auth_handler=NoHandshake(),
                         middleware={"login": LoginMiddlewareFactory(self.logins)})
        self._stopped = threading.Event()
        threading.Thread(target=self._reap, name="flight-unclaimed", daemon=True).start()

    def _reap(self) -> None:
        while not self._stopped.wait(UNCLAIMED_S / 10):
            self._pending.expire()
            self.logins.expire()

    # -- statements ----------------------------------------------------------------------------
    def _login(self, context: flight.ServerCallContext) -> FlightLogin:
        middleware = context.get_middleware("login")
        if middleware is None:
            raise flight.FlightUnauthenticatedError("not logged in")
        login: FlightLogin = middleware.login
        self.engine.ctx.sessions.locate(login.connection_id, _address(context.peer()))
        return login

    def _execute(self, login: FlightLogin, sql: str, kind: str) -> Result:
        """One statement, run as the MySQL port runs it (the same parser and engine), its SELECT
        rows left streaming."""
        return self._run(login, self._statement(sql, kind), sql, kind)

    @staticmethod
    def _statement(sql: str, kind: str) -> st.Statement:
        """The one statement `sql` holds, parsed as the MySQL port parses it."""
        try:
            statements = parse_script(sql)
        except SqlSyntaxError as exc:
            STATEMENTS.labels(kind, "error").inc()
            _refuse(ErrorCode.PARSE_ERROR, mask_secrets(exc.message))
        except SqlError as exc:
            STATEMENTS.labels(kind, "error").inc()
            _refuse(ErrorCode.NOT_SUPPORTED_YET, mask_secrets(str(exc)))
        if len(statements) != 1:
            STATEMENTS.labels(kind, "error").inc()
            _refuse(ErrorCode.NOT_SUPPORTED_YET, "send one statement per Flight SQL command")
        return statements[0]

    def _run(self, login: FlightLogin, statement: st.Statement, sql: str, kind: str) -> Result:
        session = login.session
        with login.lock:
            login.statements_run += 1
            session.arrow_results = True
            try:
                result = timeouts.run_limited(self._tracked(login, sql), session, statement,
                                              self.logins.user(login))
            except SqlFailure as failure:
                STATEMENTS.labels(kind, "error").inc()
                _refuse(failure.code, failure.message)
            except KafkaException as exc:
                STATEMENTS.labels(kind, "error").inc()
                _refuse(ErrorCode.UNKNOWN_ERROR, f"the commit log (Kafka) is unreachable ({exc}); retry once it "
                                                 "is back")
            except Exception as exc:  # noqa: BLE001 - a bug costs one statement, not the server
                log.exception("Flight SQL statement failed")
                STATEMENTS.labels(kind, "internal_error").inc()
                _refuse(ErrorCode.UNKNOWN_ERROR, f"internal error: {exc}")
            finally:
                session.arrow_results = False
        STATEMENTS.labels(kind, "ok").inc()
        return result

    def _tracked(self, login: FlightLogin, sql: str) -> Callable[[SessionState, st.Statement], Result]:
        """The engine's `execute`, shown in SHOW PROCESSLIST while it runs and stopped by KILL
        through the statement's guard (run_limited makes it), as on the MySQL port."""
        sessions = self.engine.ctx.sessions

        def execute(session: SessionState, statement: st.Statement) -> Result:
            assert session.guard is not None
            sessions.started(login.connection_id, sql, session.guard, session.database)
            try:
                return self.engine.execute(session, statement)
            finally:
                sessions.finished(login.connection_id, session.database)

        return execute

    def _run_sql(self, login: FlightLogin) -> Callable[[str], pa.Table]:
        """A metadata command's SQL, run as the caller and read whole (its answers are small)."""

        def run(sql: str) -> pa.Table:
            answer = self._answer(self._execute(login, sql, "metadata"))
            return pa.Table.from_batches(list(answer.batches), answer.schema)

        return run

    def _info(self, login: FlightLogin, descriptor: flight.FlightDescriptor, result: ArrowResult) -> flight.FlightInfo:
        handle = self._pending.add(login.token, result)
        ticket = flight.Ticket(m.pack(m.TICKET_STATEMENT_QUERY, m.message((1, handle))))
        return flight.FlightInfo(result.schema, descriptor, [flight.FlightEndpoint(ticket, [])], -1, -1)

    def _describe(self, login: FlightLogin, prepared: PreparedStatement) -> None:
        """Learns what the prepared statement's rows look like (`dataset_schema`): the Flight SQL JDBC
        driver takes a statement announced without them for an update. A statement that only reads and
        takes no parameters is run now, and its rows are kept for the GetFlightInfo that comes next —
        ADBC and the JDBC driver prepare every statement they run, so it runs once, not twice; they are
        used if that call comes within `FIRST_RUN_S` with no other statement of the login in between, as
        if the statement had been executed a moment sooner. One with parameters runs with them NULL, a
        SELECT under LIMIT 0 (`_without_rows`); other statements have no rows."""
        if prepared.parameters:
            marked = self._statement(with_values(prepared, markers(prepared.parameters)), "prepare")
            prepared.parameter_schema = parameter_schema(marked, prepared.parameters, prepared.row_slots,
                                                         lambda sql: self._schema(login, sql))
        statement = self._statement(with_values(prepared, [None] * prepared.parameters), "prepare")
        if not isinstance(statement, _READS):
            return
        if not prepared.parameters:
            result = self._answer(self._run(login, statement, prepared.sql, "prepared_query"))
            prepared.dataset_schema = result.schema
            handle = self._pending.offer(login.token, result)
            if handle is not None:
                prepared.first_run = FirstRun(handle, time.monotonic(), login.statements_run)
        else:
            prepared.dataset_schema = self._rows_schema(login, _without_rows(statement), prepared.sql)

    def _rows_schema(self, login: FlightLogin, statement: st.Statement, sql: str) -> pa.Schema:
        """The schema of a statement's rows, run as the login (a LIMIT 0 query, or a statement that only
        reads: nothing changes), its rows left unread."""
        result = self._answer(self._run(login, statement, sql, "prepare"))
        result.close()
        return result.schema

    def _schema(self, login: FlightLogin, sql: str) -> pa.Schema:
        return self._rows_schema(login, self._statement(sql, "prepare"), sql)

    def _first_run(self, login: FlightLogin, prepared: PreparedStatement) -> ArrowResult | None:
        """The rows of the prepared statement's run when it was prepared, if still good (`_describe`);
        a first run too old, or with other statements after it, is closed."""
        with login.lock:
            first, prepared.first_run = prepared.first_run, None
            fresh = first is not None and first.after == login.statements_run and \
                time.monotonic() - first.at < FIRST_RUN_S
        if first is None:
            return None
        try:
            result = self._pending.take(login.token, first.handle)
        except flight.FlightServerError:
            return None  # closed meanwhile (the login's results went with its end, or expired)
        if fresh:
            return result
        result.close()
        return None

    def _close_first_run(self, login: FlightLogin, prepared: PreparedStatement) -> None:
        first = self._first_run(login, prepared)
        if first is not None:
            first.close()

    @staticmethod
    def _prepared(login: FlightLogin, command: m.Command) -> PreparedStatement:
        with login.lock:
            found = login.prepared.get(command.bytes(1) or b"")
        if found is None:
            raise flight.FlightServerError("the prepared statement is unknown or closed")
        return found

    def _parameters(self, reader: flight.MetadataRecordBatchReader) -> pa.Table:
        """The parameter batches a DoPut sends, refused past `sql_max_packet_bytes` (the MySQL port's
        max_allowed_packet, which a statement and its parameters cannot exceed there either)."""
        limit = self.engine.ctx.config.sql_max_packet_bytes
        batches: list[pa.RecordBatch] = []
        size = 0
        while True:
            try:
                chunk = reader.read_chunk()
            except StopIteration:
                return pa.Table.from_batches(batches, reader.schema)
            if chunk.data is None:
                continue
            size += chunk.data.nbytes
            if size > limit:
                _refuse(ErrorCode.NET_PACKET_TOO_LARGE, f"the parameters bound exceed {limit} bytes "
                                                        "(max_allowed_packet, sql_max_packet_bytes)")
            batches.append(chunk.data)

    @staticmethod
    def _bound(login: FlightLogin, prepared: PreparedStatement, values: pa.Table | None = None) -> list[str]:
        """The statements a prepared statement runs, one per bound row of parameters (`values`, when
        given, bound first)."""
        try:
            with login.lock:
                if values is not None:
                    bind_rows(prepared, values)
                return statements(prepared)
        except SqlFailure as failure:
            _refuse(failure.code, failure.message)

    def _command(self, data: bytes) -> m.Command:
        try:
            return m.unpack(data)
        except m.MessageError as exc:
            raise flight.FlightServerError(f"not a Flight SQL command: {exc}") from None

    # -- Flight RPCs ---------------------------------------------------------------------------
    def get_flight_info(self, context: flight.ServerCallContext,
                        descriptor: flight.FlightDescriptor) -> flight.FlightInfo:
        if descriptor.descriptor_type != flight.DescriptorType.CMD:
            _not_supported("a path descriptor")
        login = self._login(context)
        command = self._command(descriptor.command)
        if command.name == m.STATEMENT_QUERY:
            if command.bytes(2):
                _not_supported("a transaction")
            return self._info(login, descriptor, self._answer(self._execute(login, command.text(1) or "", "query")))
        if command.name == m.PREPARED_STATEMENT_QUERY:
            prepared = self._prepared(login, command)
            first = self._first_run(login, prepared)
            if first is not None:
                return self._info(login, descriptor, first)
            texts = self._bound(login, prepared)
            if len(texts) != 1:
                _not_supported("a query with more than one row of parameters (bind one row, or run it once per row)")
            return self._info(login, descriptor, self._answer(self._execute(login, texts[0], "prepared_query")))
        tables = {
            m.GET_CATALOGS: lambda: catalog.catalogs(),
            m.GET_DB_SCHEMAS: lambda: catalog.db_schemas(command, self._run_sql(login)),
            m.GET_TABLES: lambda: catalog.tables(command, self._run_sql(login)),
            m.GET_TABLE_TYPES: lambda: catalog.table_types(),
            m.GET_PRIMARY_KEYS: lambda: catalog.primary_keys(command, self._run_sql(login)),
            m.GET_IMPORTED_KEYS: catalog.foreign_keys,
            m.GET_EXPORTED_KEYS: catalog.foreign_keys,
            m.GET_CROSS_REFERENCE: catalog.foreign_keys,
            m.GET_SQL_INFO: lambda: catalog.sql_info(command),
            m.GET_XDBC_TYPE_INFO: lambda: catalog.xdbc_type_info(command),
        }
        make = tables.get(command.name)
        if make is None:
            _not_supported(command.name)
        table = make()
        return self._info(login, descriptor, ArrowResult(table.schema, iter(table.to_batches())))

    @staticmethod
    def _answer(result: Result) -> ArrowResult:
        if isinstance(result, Rows):
            return from_rows(result)
        # A statement without rows (USE, DDL, DML sent as a query): an empty answer, as Doris gives.
        return ArrowResult(pa.schema([]), iter(()))

    def do_get(self, context: flight.ServerCallContext, ticket: flight.Ticket) -> flight.FlightDataStream:
        login = self._login(context)
        command = self._command(ticket.ticket)
        if command.name != m.TICKET_STATEMENT_QUERY:
            _not_supported(f"DoGet of {command.name}")
        result = self._pending.take(login.token, command.bytes(1) or b"")
        return flight.GeneratorStream(result.schema, _refusing(result))

    def do_put(self, context: flight.ServerCallContext, descriptor: flight.FlightDescriptor,
               reader: flight.MetadataRecordBatchReader, writer: flight.FlightMetadataWriter) -> None:
        login = self._login(context)
        command = self._command(descriptor.command)
        if command.name == m.STATEMENT_UPDATE:
            if command.bytes(2):
                _not_supported("a transaction")
            texts = [command.text(1) or ""]
        elif command.name == m.PREPARED_STATEMENT_UPDATE:
            # The parameters come in this call: the statement runs once per row (ADBC's executemany).
            prepared = self._prepared(login, command)
            self._close_first_run(login, prepared)
            texts = self._bound(login, prepared, self._parameters(reader))
        elif command.name == m.PREPARED_STATEMENT_QUERY:
            # Bound for the GetFlightInfo that runs the query; no DoPutPreparedStatementResult (the handle
            # stays the same), which clients take as a server keeping the parameters with the statement.
            self._bound(login, self._prepared(login, command), self._parameters(reader))
            return
        else:
            _not_supported(f"DoPut of {command.name}")
        affected = 0
        for sql in texts:
            result = self._execute(login, sql, "update")
            if isinstance(result, Rows):
                from_rows(result).close()
                _not_supported("a query sent as an update (CommandStatementUpdate); send it as a query")
            assert isinstance(result, Done)
            affected += result.affected_rows
        writer.write(pa.py_buffer(m.message((1, affected))))

    def list_actions(self, context: flight.ServerCallContext) -> list[tuple[str, str]]:
        return [("CreatePreparedStatement", "prepare a statement (`?` parameters bound with DoPut)"),
                ("ClosePreparedStatement", "close a prepared statement"),
                ("CloseSession", "log out: end this token's session, prepared statements and unread results")]

    def do_action(self, context: flight.ServerCallContext, action: flight.Action) -> Iterator[bytes]:
        login = self._login(context)
        if action.type == "CreatePreparedStatement":
            command = self._command(action.body.to_pybytes())
            if command.bytes(2):
                _not_supported("a transaction")
            handle = secrets.token_bytes(16)
            try:
                prepared = prepare(command.text(1) or "")
            except SqlFailure as failure:
                _refuse(failure.code, failure.message)
            limit = self.engine.ctx.config.sql_max_prepared_statements
            with login.lock:
                if len(login.prepared) >= limit:
                    raise flight.FlightUnavailableError(f"{limit} prepared statements are open on this login "
                                                        "(sql_max_prepared_statements): close some")
            self._describe(login, prepared)
            with login.lock:
                login.prepared[handle] = prepared
            schemas = (prepared.dataset_schema, prepared.parameter_schema)
            serialized = [None if schema is None else schema.serialize().to_pybytes() for schema in schemas]
            return iter([m.pack(m.CREATE_PREPARED_STATEMENT_RESULT, m.message(
                (1, handle), (2, serialized[0]), (3, serialized[1])))])
        if action.type == "ClosePreparedStatement":
            command = self._command(action.body.to_pybytes())
            with login.lock:
                closed = login.prepared.pop(command.bytes(1) or b"", None)
            if closed is not None:
                self._close_first_run(login, closed)
            return iter([])
        if action.type == "CloseSession":
            # A Flight action, not a Flight SQL one: its body (CloseSessionRequest, empty) and its result
            # (CloseSessionResult) are plain messages, not packed in an Any.
            self.logins.forget(login.token)  # its unread results are closed with it (`_Pending.drop`)
            return iter([m.message((1, _SESSION_CLOSED))])
        _not_supported(f"the action '{action.type}'")

    def get_schema(self, context: flight.ServerCallContext, descriptor: flight.FlightDescriptor) -> Any:
        """A statement's rows' schema without its rows (ADBC's `adbc_execute_schema`): a SELECT runs under
        LIMIT 0, another reading statement runs (it changes nothing); DML and DDL have no rows and do not
        run. A prepared statement answers what it announced."""
        if descriptor.descriptor_type != flight.DescriptorType.CMD:
            _not_supported("a path descriptor")
        login = self._login(context)
        command = self._command(descriptor.command)
        if command.name == m.PREPARED_STATEMENT_QUERY:
            return flight.SchemaResult(self._prepared(login, command).dataset_schema or pa.schema([]))
        if command.name != m.STATEMENT_QUERY:
            _not_supported(f"GetSchema of {command.name}")
        sql = command.text(1) or ""
        statement = self._statement(sql, "schema")
        if not isinstance(statement, _READS):
            return flight.SchemaResult(pa.schema([]))
        return flight.SchemaResult(self._rows_schema(login, _without_rows(statement), sql))

    def close_results(self) -> None:
        self._stopped.set()
        self._pending.close()


def start(engine: Engine, host: str, port: int, loop: asyncio.AbstractEventLoop,
          variables: Callable[[], SessionVariables]) -> StrataFlightServer:
    """The Flight SQL server, listening (gRPC serves it on its own threads) until `shutdown()`.
    `variables` makes a login's MySQL system variables, as the SQL port's sessions have them (`@@x`)."""
    return StrataFlightServer(engine, f"grpc://{host}:{port}", loop, variables)
