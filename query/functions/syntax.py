"""Calls with syntax of their own (CAST(x AS t), EXTRACT(unit FROM x), x = ANY (subquery) …) and the
session's values (NOW(), DATABASE() …): sqlglot's node is the answer. The session values are
replaced by literals before this layer runs (query.session_functions); they are listed here so the
layer knows them wherever a statement reaches DuckDB without that step."""

from __future__ import annotations

from query.functions.registry import Function, fn

FUNCTIONS: list[Function] = [
    fn("cast", "syntax", "cast('12' AS INT)"),
    fn("try_cast", "syntax", "try_cast('x' AS INT)"),
    fn("convert", "syntax", "convert('12', SIGNED)"),
    fn("any", "syntax", "1 = ANY (SELECT 1)"),
    fn("all", "syntax", "1 = ALL (SELECT 1)"),
    fn("some", "syntax", "1 = SOME (SELECT 1)"),
    fn("exists", "syntax", "EXISTS (SELECT 1)"),
    # The generators query.sandbox lets a FROM clause call (DuckDB's, kept for the SQL that uses them).
    fn("range", "syntax", "(SELECT count(*) FROM range(3))"),
    fn("generate_series", "syntax", "(SELECT count(*) FROM generate_series(1, 3))"),
    fn("unnest", "syntax", "(SELECT count(*) FROM unnest([1, 2]))"),
]

_SESSION = {
    "database": "database()", "schema": "schema()", "current_database": "current_database()",
    "current_schema": "current_schema()", "user": "user() IS NOT NULL", "session_user": "session_user() IS NOT NULL",
    "system_user": "system_user() IS NOT NULL", "current_user": "current_user() IS NOT NULL",
    "connection_id": "connection_id() > 0", "version": "version() IS NOT NULL",
    "current_version": "current_version() IS NOT NULL", "last_insert_id": "last_insert_id()",
    "now": "now() IS NOT NULL", "current_timestamp": "current_timestamp() IS NOT NULL",
    "localtime": "localtime() IS NOT NULL", "localtimestamp": "localtimestamp() IS NOT NULL",
    "sysdate": "sysdate() IS NOT NULL", "utc_timestamp": "utc_timestamp() IS NOT NULL",
    "curdate": "curdate() IS NOT NULL", "current_date": "current_date() IS NOT NULL",
    "utc_date": "utc_date() IS NOT NULL", "curtime": "curtime() IS NOT NULL",
    "current_time": "current_time() IS NOT NULL", "utc_time": "utc_time() IS NOT NULL",
}
FUNCTIONS += [fn(name, "session", example) for name, example in _SESSION.items()]
