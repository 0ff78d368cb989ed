"""One client connection: mysql-mimic 3.0.5's `Connection` with its packet handling replaced where
upstream trusts the client.

Changed from upstream (the methods overridden below; the rest, including authentication plugins,
result-set writing and KILL, is upstream's):
- the login (greeting → OK) must finish within `handshake_timeout_s`; a silent or slow pre-login
  socket is answered with ER_NET_READ_INTERRUPTED and closed; before the login no packet may exceed
  64 KB;
- a failed login closes the connection: upstream wrote the error and went on to the command phase,
  so a client that ignored the error could run statements unauthenticated (as root: Strata's
  session falls back to root when no user is set);
- every packet is parsed with bounded reads (query.wire.packets); a malformed command is answered
  with an error and the connection lives on, a broken frame (oversized, out of order) closes it;
- prepared statements bind parameters as typed literals (query.wire.params) instead of splicing
  `'{value}'` into the text; statement ids start at 1; with CLIENT_DEPRECATE_EOF no EOF follows the
  parameter definitions (libmysqlclient lost the connection on it); a re-execution may omit the
  parameter types; COM_STMT_SEND_LONG_DATA never answers (not even an error, as in MySQL: an error
  is reported by the next EXECUTE); COM_STMT_RESET no longer resets the whole session;
- COM_FIELD_LIST sends one packet per column (upstream joined them into one);
- the prepare answer announces the result columns of a SELECT, as MySQL does (the session runs it
  with NULL parameters and LIMIT 0, once per text until the catalog changes: `DescribesPrepared`);
  other statements announce none;
- result sets (text and binary) carry the column definitions of query.wire.columns: MySQL type,
  length, decimals, flags and charset from the result's schema, values in MySQL's forms;
- COM_RESET_CONNECTION drops the prepared statements;
- the greeting announces CLIENT_LONG_FLAG (2-byte column flags), as every MySQL server does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC
from typing import Any, Protocol, runtime_checkable

from mysql_mimic import context, packets, types
from mysql_mimic.connection import Connection
from mysql_mimic.constants import KillKind
from mysql_mimic.errors import ErrorCode as MimicCode
from mysql_mimic.errors import MysqlError
from mysql_mimic.packets import SSLRequest
from mysql_mimic.results import ensure_result_set
from mysql_mimic.schema import com_field_list_to_show_statement
from mysql_mimic.types import Capabilities, Commands
from mysql_mimic.utils import aiterate, cooperative_iterate

from query.wire import columns
from query.wire import packets as wire
from query.wire.columns import WireColumn, WireResult, binary_row
from query.wire.errors import CodedRefusal, ConnectionFault, MalformedPacket, wire_error
from query.wire.params import bind, placeholders
from query.wire.prepared import Statement, Statements, make_prepare_ok
from query.wire.stream import ConnectionClosed, WireStream
from query.wire.text_batches import EncodedRows, RecordBatches, encode_text_rows
from schemas.errors import ErrorCode

log = logging.getLogger("strata.sql.wire")
# Before a login succeeds no packet needs more than this (a handshake response with its connect
# attributes, an auth exchange); without it every unauthenticated socket could make the server
# buffer a whole max_allowed_packet.
LOGIN_MAX_PACKET_BYTES = 1 << 16


@dataclass(frozen=True)
class WireLimits:
    max_packet_bytes: int
    handshake_timeout_s: float
    max_prepared_statements: int


@runtime_checkable
class DescribesPrepared(Protocol):
    """A session that can tell a prepared statement's result columns before it runs."""

    async def prepared_columns(self, sql: str) -> list[WireColumn]: ...


@runtime_checkable
class StreamsResults(Protocol):
    """A session that answers a SELECT with streamed rows (`WireResult.batches`) while its
    `streams_results` is set: only for a text-protocol query, whose writer knows how to send them."""

    streams_results: bool


def _close_later(pending: asyncio.Future[Any] | None, batches: RecordBatches) -> None:
    """Closes a stream given up on (the client went away, KILL, an error): a batch still being read
    is interrupted and the stream closed once its thread is done with it, off the event loop."""
    def close(_: object = None) -> None:
        if pending is not None and not pending.cancelled():
            pending.exception()  # retrieved, so asyncio does not log it as never retrieved
        asyncio.get_running_loop().run_in_executor(None, batches.close)

    if pending is None or pending.done():
        close()
        return
    batches.interrupt()
    pending.add_done_callback(close)


class LoginFailed(Exception):
    """Authentication was refused and the client told so; the connection ends here."""


class WireConnection(Connection):
    stream: WireStream  # type: ignore[assignment]

    def __init__(self, *args: Any, limits: WireLimits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # CLIENT_LONG_FLAG: column flags are 2 bytes. Without it Connector/J reads 1 byte of flags and
        # takes the other (NUM_FLAG's) as the column's decimals: every number had scale 128.
        self.server_capabilities |= Capabilities.CLIENT_LONG_FLAG
        self.limits = limits
        self.statements = Statements(limits.max_prepared_statements)

    def error(self, **kwargs: Any) -> bytes:
        """An error packet; a login refusal that carries its own code (unknown or forbidden database,
        locked account, too many connections) is sent with it instead of mysql-mimic's 1045."""
        if isinstance(kwargs.get("msg"), CodedRefusal):
            kwargs["code"] = kwargs["msg"].code
        return super().error(**kwargs)

    # -- connection phase ------------------------------------------------------------------------
    async def _start(self) -> None:
        context.connection_id.set(self.connection_id)
        self.stream.max_packet_bytes = min(LOGIN_MAX_PACKET_BYTES, self.limits.max_packet_bytes)
        try:
            async with asyncio.timeout(self.limits.handshake_timeout_s):
                await self.connection_phase()
        except (ConnectionClosed, LoginFailed):
            return
        except TimeoutError:
            log.info("connection %s: no login within %.1f s, closed", self.connection_id,
                     self.limits.handshake_timeout_s)
            await self._send_error(f"Got timeout reading communication packets (no login within "
                                   f"{self.limits.handshake_timeout_s:g} s)", ErrorCode.NET_READ_INTERRUPTED)
            return
        except MysqlError as exc:
            log.info("connection %s: bad handshake: %s", self.connection_id, exc.msg)
            await self._send_error(exc.msg, exc.code)
            return
        except Exception as exc:  # noqa: BLE001 - e.g. query.login_policy's refusals, answered as upstream does
            log.info("connection %s: handshake failed: %s", self.connection_id, exc)
            await self._send_error(exc, MimicCode.HANDSHAKE_ERROR)
            return
        self.stream.max_packet_bytes = self.limits.max_packet_bytes
        await self.session.init(self)
        try:
            await self.command_phase()
        except asyncio.CancelledError:
            if self._kill == KillKind.CONNECTION:  # type: ignore[has-type]  # set by upstream's kill()
                log.info("connection %s killed", self.connection_id)
                await self._send_error("Session was killed", MimicCode.SESSION_WAS_KILLED)
                self._kill = None
            else:
                raise
        finally:
            await self.session.close()

    async def _send_error(self, msg: Any, code: int) -> None:
        """Best effort: the client may already be gone."""
        try:
            await self.stream.write(self.error(msg=msg, code=code))
        except (ConnectionError, RuntimeError):
            pass

    async def connection_phase(self) -> None:
        plugin = self.identity_provider.get_default_plugin()
        auth_data, auth_state = await plugin.start()
        assert isinstance(auth_data, bytes)
        self.handshake_auth_data = auth_data
        self.handshake_auth_plugin = plugin.name
        await self.stream.write(packets.make_handshake_v10(
            capabilities=self.server_capabilities, server_charset=self.server_charset,
            server_version=str(self.session.variables.get("version")), connection_id=self.connection_id,
            auth_data=auth_data, status_flags=self.status_flags, auth_plugin_name=plugin.name))
        response = wire.parse_handshake_response(self.server_capabilities, await self.stream.read())
        if isinstance(response, SSLRequest):
            if self.ssl is None:
                raise wire_error("Bad handshake: TLS was requested but this server has none", ErrorCode.HANDSHAKE_ERROR)
            await self.stream.start_tls(self.ssl)
            response = wire.parse_handshake_response(self.server_capabilities, await self.stream.read())
            if isinstance(response, SSLRequest):
                raise MalformedPacket("a second SSL request")
        self.capabilities = response.capabilities
        self.max_packet_size = response.max_packet_size
        self.session.variables.set("character_set_client", response.client_charset.name)
        self.session.database = response.database
        self.client_plugin_name = response.client_plugin
        self.client_connect_attrs = response.connect_attrs
        self.zstd_compression_level = response.zstd_compression_level
        self.session.variables.set("external_user", response.username, force=True)
        await self.authenticate(auth_state=auth_state, server_plugin=plugin, username=response.username,
                                client_plugin_name=response.client_plugin, auth_response=response.auth_response,
                                connect_attrs=response.connect_attrs)
        self.stream.reset_seq()

    async def authenticate(self, *args: Any, **kwargs: Any) -> None:
        """Upstream's, which answers OK or an error; on an error the connection must end."""
        self.session.username = None
        await super().authenticate(*args, **kwargs)
        if self.session.username is None:
            raise LoginFailed()

    # -- command phase ---------------------------------------------------------------------------
    async def command_phase(self) -> None:
        handlers = {
            Commands.COM_QUERY: self.handle_query,
            Commands.COM_STMT_PREPARE: self.handle_stmt_prepare,
            Commands.COM_STMT_SEND_LONG_DATA: self.handle_stmt_send_long_data,
            Commands.COM_STMT_EXECUTE: self.handle_stmt_execute,
            Commands.COM_STMT_FETCH: self.handle_stmt_fetch,
            Commands.COM_STMT_RESET: self.handle_stmt_reset,
            Commands.COM_STMT_CLOSE: self.handle_stmt_close,
            Commands.COM_PING: self.handle_ping,
            Commands.COM_CHANGE_USER: self.handle_change_user,
            Commands.COM_RESET_CONNECTION: self.handle_reset_connection,
            Commands.COM_DEBUG: self.handle_debug,
            Commands.COM_INIT_DB: self.handle_init_db,
            Commands.COM_FIELD_LIST: self.handle_field_list,
        }
        while True:
            try:
                data = await self.stream.read()
            except ConnectionClosed:
                return
            except ConnectionFault as fault:
                log.info("connection %s closed: %s", self.connection_id, fault.msg)
                await self._send_error(fault.msg, fault.code)
                return
            try:
                if not data:
                    raise MalformedPacket("an empty command packet")
                if data[0] == Commands.COM_QUIT:
                    return
                handler = handlers.get(data[0])  # type: ignore[call-overload]
                if handler is None:
                    raise wire_error(f"Unknown command 0x{data[0]:02X}", ErrorCode.UNKNOWN_COM_ERROR)
                await handler(data[1:])
            except LoginFailed:
                return  # a refused COM_CHANGE_USER: MySQL closes the connection too
            except MysqlError as exc:
                await self.stream.write(self.error(msg=exc.msg, code=exc.code))
            except asyncio.CancelledError:
                if self._kill == KillKind.QUERY:
                    if self._task is not None:
                        self._task.uncancel()
                    await self.stream.write(self.error(msg="Query was killed", code=MimicCode.SESSION_WAS_KILLED))
                    self._kill = None
                else:
                    raise
            except Exception as exc:  # noqa: BLE001 - one command's bug must not end the connection
                log.exception("connection %s: command 0x%02X failed", self.connection_id, data[0] if data else 0)
                await self.stream.write(self.error(msg=f"internal error: {exc}", code=MimicCode.UNKNOWN_ERROR))
            finally:
                self.stream.reset_seq()

    async def handle_reset_connection(self, data: bytes) -> None:
        self.statements.clear()
        await self.stream.write(self.ok())

    async def handle_change_user(self, data: bytes) -> None:
        change = wire.parse_com_change_user(self.capabilities, self.client_charset, data)
        self.session.database = change.database or None
        self.session.variables.set("external_user", change.username, force=True)
        if change.client_charset:
            self.session.variables.set("character_set_client", change.client_charset.name)
        if change.connect_attrs:
            self.client_connect_attrs = change.connect_attrs
        await self.authenticate(username=change.username, auth_response=change.auth_response,
                                client_plugin_name=change.client_plugin, connect_attrs=change.connect_attrs)
        self.statements.clear()
        await self.session.reset()

    async def handle_init_db(self, data: bytes) -> None:
        await self.session.use(wire.parse_com_init_db(self.client_charset, data))
        await self.stream.write(self.ok())

    async def handle_field_list(self, data: bytes) -> None:
        table, wildcard = wire.parse_com_field_list(self.client_charset, data)
        sql = com_field_list_to_show_statement(packets.ComFieldList(table=table, wildcard=wildcard))
        result = await self.query(sql=sql, query_attrs={})
        async for row in aiterate(result.rows):
            await self.stream.write(packets.make_column_definition_41(
                server_charset=self.server_charset, table=table, name=row[0], is_com_field_list=True,
                default=row[4]), drain=False)
        await self.stream.write(self.ok_or_eof())

    async def query(self, sql: str, query_attrs: dict[str, str]) -> WireResult:  # type: ignore[override]
        """The session's answer as a WireResult: the engine's results come described by their types
        (query.wire.columns); mysql-mimic's own answers (SET, SHOW VARIABLES) are described here from
        their values, so every result set goes out through the same column definitions."""
        result = await self.session.handle_query(sql, query_attrs)
        if isinstance(result, WireResult):
            return result
        mimic = await ensure_result_set(result)
        rows = [row async for row in aiterate(mimic.rows)]
        return WireResult(rows, columns.describe([c.name for c in mimic.columns], None, rows, UTC))

    async def handle_query(self, data: bytes) -> None:
        query = wire.parse_com_query(self.capabilities, self.client_charset, data)
        # Only here (the text protocol) may a result be streamed; COM_STMT_EXECUTE's binary rows
        # and COM_FIELD_LIST read theirs whole.
        # What isinstance(…, StreamsResults) checks, without typing's Protocol check (tens of
        # microseconds a statement, on the event loop).
        streams = hasattr(self.session, "streams_results")
        if streams:
            self.session.streams_results = True
        try:
            result_set = await self.query(query.sql, query.attrs)
        finally:
            if streams:
                self.session.streams_results = False
        if not result_set:
            await self.stream.write(self.ok())
            return
        await self.write_text_resultset(result_set)

    def _column_definitions(self, result_set: WireResult) -> list[bytes]:
        """The column count and one definition per column."""
        out = [packets.make_column_count(capabilities=self.capabilities, column_count=len(result_set.columns))]
        out.extend(column.definition() for column in result_set.columns)
        return out

    async def write_text_resultset(self, result_set: WireResult) -> None:  # type: ignore[override]
        """Upstream's, with the column definitions of query.wire.columns (type, length, decimals,
        flags, charset) and the columns' own text encoders."""
        batches = result_set.batches
        try:
            self.stream.write_many(self._column_definitions(result_set))
            if not self.deprecate_eof():
                self.stream.write_many([self.eof()])
        except BaseException:
            if batches is not None:
                _close_later(None, batches)
            raise
        if batches is not None:
            count = await self._stream_text_rows(batches, result_set.columns)  # closes them, whatever happens
        else:
            count = await self._write_text_rows(result_set.rows, result_set.columns)
        await self.stream.write(self.ok_or_eof(affected_rows=count), drain=False)
        await self.stream.drain()

    async def _write_text_rows(self, rows: Sequence[Sequence[Any]], columns: list[WireColumn]) -> int:
        batch = 10_000
        for start in range(0, len(rows), batch):
            self.stream.write_text_rows(rows[start:start + batch], columns)
            if start + batch < len(rows):
                await self.stream.drain()
        return len(rows)

    async def _stream_text_rows(self, batches: RecordBatches, columns: list[WireColumn]) -> int:
        """Rows read and encoded a batch at a time on a worker thread, the next batch while the
        socket takes the last: memory stays a couple of batches whatever the result's size, and the
        event loop only hands bytes to the socket."""
        loop = asyncio.get_running_loop()
        whole = batches.read_whole()
        if whole is not None:  # a few rows, all read: encoded here, no worker thread involved
            try:
                count = 0
                for batch in whole:
                    packets = encode_text_rows(batch, columns, self.stream.seq.value)
                    await self.stream.write_framed(packets.data, packets.next_seq)
                    count += packets.rows
                return count
            finally:
                batches.close()

        def encode(seq: int) -> EncodedRows | None:
            batch = batches.next_batch()
            return None if batch is None else encode_text_rows(batch, columns, seq)

        count = 0
        pending = loop.run_in_executor(None, encode, self.stream.seq.value)
        try:
            while True:
                try:
                    encoded = await pending
                except Exception as exc:
                    code, message = getattr(exc, "code", None), getattr(exc, "message", None)
                    if code is None or message is None:
                        raise
                    raise MysqlError(message, code) from None  # after the rows sent: MySQL's ERR mid-result
                if encoded is None:
                    break
                pending = loop.run_in_executor(None, encode, encoded.next_seq)
                await self.stream.write_framed(encoded.data, encoded.next_seq)
                count += encoded.rows
        except BaseException:
            _close_later(pending, batches)
            raise
        await loop.run_in_executor(None, batches.close)
        return count

    # -- prepared statements ---------------------------------------------------------------------
    async def handle_stmt_prepare(self, data: bytes) -> None:
        sql = wire.decode_text(self.client_charset, data, "statement")
        # Tokenizing a big statement takes a while: not on the event loop.
        offsets = await asyncio.get_running_loop().run_in_executor(None, placeholders, sql)
        stmt = self.statements.add(sql, offsets)
        result_columns: list[WireColumn] = []
        if isinstance(self.session, DescribesPrepared):
            result_columns = await self.session.prepared_columns(
                bind(sql, offsets, [None] * len(offsets), self.client_charset))
        out = [make_prepare_ok(stmt, len(result_columns))]
        if stmt.num_params:
            out.extend(packets.make_column_definition_41(server_charset=self.server_charset, name="?")
                       for _ in range(stmt.num_params))
            if not self.deprecate_eof():
                out.append(self.eof())
        if result_columns:
            out.extend(column.definition() for column in result_columns)
            if not self.deprecate_eof():
                out.append(self.eof())
        for packet in out:
            await self.stream.write(packet, drain=False)
        await self.stream.drain()

    async def handle_stmt_send_long_data(self, data: bytes) -> None:
        try:
            stmt_id, param_id, chunk = wire.parse_com_stmt_send_long_data(data)
        except MalformedPacket:
            return  # COM_STMT_SEND_LONG_DATA has no response, not even an error
        stmt = self.statements.find(stmt_id)
        if stmt is not None:
            stmt.add_long_data(param_id, chunk, self.limits.max_packet_bytes)

    async def handle_stmt_execute(self, data: bytes) -> None:
        head = wire.parse_com_stmt_execute(data)
        stmt = self.statements.get(head.stmt_id, "mysqld_stmt_execute")
        try:
            sql, attrs = self._bind(stmt, head)
        finally:
            stmt.long_data.clear()
            stmt.long_data_bytes = 0
        result_set = await self.query(sql, attrs)
        if not result_set:
            await self.stream.write(self.ok())
            return
        await self._write_binary_resultset(stmt, result_set, head.use_cursor)

    def _bind(self, stmt: Statement, head: wire.Execute) -> tuple[str, dict[str, str]]:
        if stmt.long_data_error is not None:
            error, stmt.long_data_error = stmt.long_data_error, None
            raise wire_error(f"Incorrect arguments to mysqld_stmt_execute: {error}", ErrorCode.WRONG_ARGUMENTS)
        r = head.reader
        count = stmt.num_params
        attrs_possible = Capabilities.CLIENT_QUERY_ATTRIBUTES in self.capabilities
        if attrs_possible and (count > 0 or head.parameter_count_available):
            count = r.uint_len("parameter count")
            if count < stmt.num_params:
                raise wire_error(f"Incorrect arguments to mysqld_stmt_execute: the statement takes "
                                 f"{stmt.num_params} parameters, {count} were sent", ErrorCode.WRONG_ARGUMENTS)
        values: list[Any] = []
        attrs: dict[str, str] = {}
        if count:
            params, values = wire.read_params(self.capabilities, self.client_charset, r, count,
                                              stmt.params, stmt.long_data)
            stmt.params = params
            extra = zip(params[stmt.num_params:], values[stmt.num_params:], strict=True)
            attrs = {p.name: wire.attr_text(v) for p, v in extra if p.name}
            values = values[: stmt.num_params]
        return bind(stmt.sql, stmt.placeholders, values, self.client_charset), attrs

    async def _write_binary_resultset(self, stmt: Statement, result_set: WireResult, use_cursor: bool) -> None:
        self.stream.write_many(self._column_definitions(result_set))

        async def rows() -> AsyncIterator[bytes]:
            async for row in cooperative_iterate(aiterate(result_set.rows)):
                yield binary_row(row, result_set.columns)

        if use_cursor:
            stmt.cursor = rows()
            await self.stream.write(self.ok_or_eof(flags=types.ServerStatus.SERVER_STATUS_CURSOR_EXISTS))
            return
        if not self.deprecate_eof():
            await self.stream.write(self.eof(), drain=False)
        async for row in rows():
            await self.stream.write(row, drain=False)
        await self.stream.write(self.ok_or_eof())

    async def handle_stmt_fetch(self, data: bytes) -> None:
        stmt_id, num_rows = wire.parse_com_stmt_fetch(data)
        stmt = self.statements.get(stmt_id, "mysqld_stmt_fetch")
        if stmt.cursor is None:
            raise wire_error(f"The statement ({stmt_id}) has no open cursor", ErrorCode.UNKNOWN_STMT_HANDLER)
        count = 0
        if num_rows:
            async for packet in stmt.cursor:
                await self.stream.write(packet, drain=False)
                count += 1
                if count >= num_rows:
                    break
        done = count < num_rows
        if done:
            stmt.cursor = None
        status = types.ServerStatus
        flags = status.SERVER_STATUS_LAST_ROW_SENT if done else status.SERVER_STATUS_CURSOR_EXISTS
        await self.stream.write(self.ok_or_eof(flags=flags))

    async def handle_stmt_reset(self, data: bytes) -> None:
        stmt = self.statements.get(wire.parse_stmt_id(data), "mysqld_stmt_reset")
        stmt.reset()
        await self.stream.write(self.ok())

    async def handle_stmt_close(self, data: bytes) -> None:
        try:
            self.statements.close(wire.parse_stmt_id(data))
        except MalformedPacket:
            pass  # COM_STMT_CLOSE has no response, not even an error
