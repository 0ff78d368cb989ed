"""Session values in a statement: `DATABASE()`, `USER()`, `CONNECTION_ID()`, `VERSION()`, `@@var`,
`NOW()` and the other functions whose value is the session's, not the data's.

DuckDB would answer them with its own values (`main`, `duckdb`, its version, a TIMESTAMP WITH TIME
ZONE in its own zone), so every one of them is replaced by a typed literal in the parsed statement
before it is turned into DuckDB SQL (`substitute`), in every statement that reaches DuckDB: SELECT
with or without FROM, INSERT … SELECT, UPDATE, DELETE, CREATE TABLE AS.

`FROM_UNIXTIME(n[, format])` and `UNIX_TIMESTAMP(datetime)` convert between an instant and the
session's wall clock: they are Doris functions of the data, mapped in query.functions.dates.

Time values are naive, in the session `time_zone`, one instant per statement (as MySQL's NOW()),
with the precision asked for: `NOW()` whole seconds, `NOW(3)` milliseconds, `NOW(6)` microseconds.
DuckDB has three timestamp precisions, so the literal's type carries it for the wire layer:
TIMESTAMP_S for precision 0, TIMESTAMP_MS for 1 to 3, TIMESTAMP (microseconds) for 4 to 6; the value
itself is truncated to the precision asked for. TIME values (CURTIME(p)) are DuckDB TIME
(microseconds), truncated to p digits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlglot import exp

from query.context import SessionState, SqlFailure
from query.system_variables import SERVER_VERSION
from schemas.errors import ErrorCode

MAX_PRECISION = 6
# Niladic keywords sqlglot's MySQL grammar reads as a column name when written without parentheses.
_KEYWORD_FUNCTIONS = frozenset({"CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "LOCALTIME",
                                "LOCALTIMESTAMP", "UTC_DATE", "UTC_TIME", "UTC_TIMESTAMP"})


def session_zone(session: SessionState) -> ZoneInfo | timezone:
    """The session `time_zone`: a name ('Asia/Shanghai'), an offset ('+08:00') or UTC/SYSTEM."""
    name = session.variables.get("time_zone", "UTC").strip()
    if name.upper() in ("UTC", "SYSTEM", "+00:00"):
        return UTC
    offset = re.fullmatch(r"([+-])(\d{1,2}):(\d{2})", name)
    if offset:
        sign, hours, minutes = offset.groups()
        delta = timedelta(hours=int(hours), minutes=int(minutes))
        if delta <= timedelta(hours=14):
            return timezone(-delta if sign == "-" else delta)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Unknown or incorrect time zone: '{name}'") from None


@dataclass(frozen=True)
class _Values:
    """What one statement's session functions answer; the instants are taken once, at its start."""

    database: str | None
    user: str  # name@client-address, as MySQL's USER() (tools split it at the @)
    current_user: str  # name@%, the account the login matched (Strata's users log in from any host)
    connection_id: int
    last_insert_id: int
    version: str
    session_variables: Mapping[str, Any]
    global_variables: Mapping[str, Any]
    now: datetime  # naive, session time zone
    utc_now: datetime  # naive, UTC


def _values(session: SessionState) -> _Values:
    instant = datetime.now(tz=UTC)
    variables = session.system_variables
    return _Values(database=session.database, user=f"{session.user}@{session.client_host}",
                   current_user=f"{session.user}@%", connection_id=session.connection_id,
                   last_insert_id=session.last_insert_id,
                   version=str(variables.get("version") or SERVER_VERSION), session_variables=variables,
                   global_variables=session.global_variables,
                   now=instant.astimezone(session_zone(session)).replace(tzinfo=None),
                   utc_now=instant.replace(tzinfo=None))


def _literal(value: Any) -> exp.Expr:
    """A Python value as a DuckDB literal of MySQL's type for it (integers BIGINT, booleans 0/1)."""
    if value is None:
        return exp.cast(exp.null(), exp.DataType.build("VARCHAR"))
    if isinstance(value, bool | int):
        return exp.cast(exp.Literal.number(int(value)), exp.DataType.build("BIGINT"))
    if isinstance(value, float):
        return exp.cast(exp.Literal.number(value), exp.DataType.build("DOUBLE"))
    return exp.Literal.string(str(value))


def _precision(name: str, argument: exp.Expr | None) -> int:
    if argument is None:
        return 0
    if not (isinstance(argument, exp.Literal) and not argument.is_string and argument.this.isdigit()):
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"{name}(): the precision must be an integer from 0 to 6")
    precision = int(argument.this)
    if precision > MAX_PRECISION:
        raise SqlFailure(ErrorCode.TOO_BIG_PRECISION,
                         f"Too-big precision {precision} specified for '{name.lower()}'. Maximum is {MAX_PRECISION}.")
    return precision


def _truncated(moment: datetime, precision: int) -> datetime:
    step = 10 ** (MAX_PRECISION - precision)
    return moment.replace(microsecond=moment.microsecond // step * step)


def timestamp_literal(moment: datetime, precision: int) -> exp.Expr:
    """A naive DATETIME(precision) literal; its DuckDB type names the precision (module docstring)."""
    moment = _truncated(moment, precision)
    kind = "TIMESTAMP_S" if precision == 0 else "TIMESTAMP_MS" if precision <= 3 else "TIMESTAMP"
    return exp.cast(exp.Literal.string(moment.isoformat(sep=" ")), exp.DataType.build(kind, dialect="duckdb"))


def _date_literal(day: date) -> exp.Expr:
    return exp.cast(exp.Literal.string(day.isoformat()), exp.DataType.build("DATE"))


def _time_literal(moment: datetime, precision: int) -> exp.Expr:
    text = _truncated(moment, precision).time().isoformat()
    return exp.cast(exp.Literal.string(text), exp.DataType.build("TIME"))


def _variable(values: _Values, node: exp.SessionParameter) -> exp.Expr:
    name = node.name.lower()
    scope = (node.text("kind") or "SESSION").upper()
    variables = values.global_variables if scope == "GLOBAL" else values.session_variables
    if name not in variables:
        raise SqlFailure(ErrorCode.UNKNOWN_SYSTEM_VARIABLE, f"Unknown system variable '{name}'")
    return _literal(variables[name])


# A session function's name (sqlglot's class name, or the called name of an Anonymous function) →
# its value, given the statement's values and the function's first argument (a precision).
_Function = Callable[[_Values, str, exp.Expr | None], exp.Expr]


def _now(values: _Values, name: str, arg: exp.Expr | None) -> exp.Expr:
    return timestamp_literal(values.now, _precision(name, arg))


_FUNCTIONS: dict[str, _Function] = {
    "DATABASE": lambda v, n, a: _literal(v.database),
    "SCHEMA": lambda v, n, a: _literal(v.database),
    "CURRENT_SCHEMA": lambda v, n, a: _literal(v.database),
    "CURRENT_DATABASE": lambda v, n, a: _literal(v.database),
    "USER": lambda v, n, a: _literal(v.user),
    "SESSION_USER": lambda v, n, a: _literal(v.user),
    "SYSTEM_USER": lambda v, n, a: _literal(v.user),
    "CURRENT_USER": lambda v, n, a: _literal(v.current_user),
    "CONNECTION_ID": lambda v, n, a: _literal(v.connection_id),
    "VERSION": lambda v, n, a: _literal(v.version),
    "CURRENT_VERSION": lambda v, n, a: _literal(v.version),
    "LAST_INSERT_ID": lambda v, n, a: _literal(v.last_insert_id),
    "NOW": _now,
    "CURRENT_TIMESTAMP": _now,
    "LOCALTIME": _now,
    "LOCALTIMESTAMP": _now,
    "SYSDATE": _now,
    "UTC_TIMESTAMP": lambda v, n, a: timestamp_literal(v.utc_now, _precision(n, a)),
    "CURDATE": lambda v, n, a: _date_literal(v.now.date()),
    "CURRENT_DATE": lambda v, n, a: _date_literal(v.now.date()),
    "UTC_DATE": lambda v, n, a: _date_literal(v.utc_now.date()),
    "CURTIME": lambda v, n, a: _time_literal(v.now, _precision(n, a)),
    "CURRENT_TIME": lambda v, n, a: _time_literal(v.now, _precision(n, a)),
    "UTC_TIME": lambda v, n, a: _time_literal(v.utc_now, _precision(n, a)),
    "UNIX_TIMESTAMP": lambda v, n, a: _literal(int(v.utc_now.replace(tzinfo=UTC).timestamp())),
}
# sqlglot's own classes for some of them (its class name → the MySQL name above).
_CLASSES: dict[type[exp.Expr], str] = {
    exp.CurrentSchema: "DATABASE", exp.CurrentDatabase: "DATABASE", exp.CurrentUser: "CURRENT_USER",
    exp.SessionUser: "SESSION_USER", exp.CurrentVersion: "VERSION", exp.CurrentTimestamp: "CURRENT_TIMESTAMP",
    exp.Localtime: "LOCALTIME", exp.Localtimestamp: "LOCALTIMESTAMP", exp.CurrentDate: "CURRENT_DATE",
    exp.CurrentTime: "CURRENT_TIME", exp.UtcTimestamp: "UTC_TIMESTAMP", exp.UtcDate: "UTC_DATE",
    exp.UtcTime: "UTC_TIME",
}
# Functions whose session value is only the argument-less form (LAST_INSERT_ID(x) sets x; UNIX_TIMESTAMP(x)
# converts x, in query.functions.dates).
_ONLY_WITHOUT_ARGUMENTS = frozenset({"LAST_INSERT_ID", "UNIX_TIMESTAMP"})
# Functions that take one argument, the fractional-seconds precision; the others take none.
_WITH_PRECISION = frozenset({"NOW", "CURRENT_TIMESTAMP", "LOCALTIME", "LOCALTIMESTAMP", "SYSDATE",
                             "UTC_TIMESTAMP", "CURTIME", "CURRENT_TIME", "UTC_TIME"})


def _called(node: exp.Expr) -> tuple[str, list[exp.Expr]] | None:
    """(MySQL name, arguments) when `node` calls a session function."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).upper(), list(node.expressions)
    if isinstance(node, exp.Column) and not node.table and isinstance(node.this, exp.Identifier) \
            and not node.this.quoted and node.name.upper() in _KEYWORD_FUNCTIONS:
        return node.name.upper(), []
    name = _CLASSES.get(type(node))
    if name is None:
        return None
    argument = node.args.get("this")
    return name, [argument] if isinstance(argument, exp.Expr) else []


def substitute(session: SessionState, expr: exp.Expr) -> exp.Expr:
    """A copy of `expr` with every session function and `@@variable` replaced by its value."""
    values: _Values | None = None

    def replace(node: exp.Expr) -> exp.Expr:
        nonlocal values
        if isinstance(node, exp.Parameter):
            raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"user-defined variables are not supported "
                                                          f"(@{node.name})")
        # transform() does not descend into what replaces a node: the arguments are substituted first.
        if isinstance(node, exp.SessionParameter):
            values = values or _values(session)
            return _variable(values, node)
        called = _called(node)
        if called is None or called[0] not in _FUNCTIONS:
            return node
        name, arguments = called
        if name in _ONLY_WITHOUT_ARGUMENTS and arguments:
            return node
        values = values or _values(session)
        if len(arguments) > (1 if name in _WITH_PRECISION else 0):
            raise SqlFailure(ErrorCode.WRONG_PARAMCOUNT_TO_NATIVE_FCT,
                             f"Incorrect parameter count in the call to native function '{name.lower()}'")
        return _FUNCTIONS[name](values, name, arguments[0] if arguments else None)

    return expr.transform(replace)
