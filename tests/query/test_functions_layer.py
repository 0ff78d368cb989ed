"""The function layer as a whole (query.functions): every registered function answers the same with
and without FROM, over a derived table and over a real table; an unknown function is error 1105
naming it, never DuckDB's function of that name."""

from __future__ import annotations

from pathlib import Path

import pytest

from query.functions import FUNCTIONS
from tests.query.functionkit import shown
from tests.query.sqlkit import Conn, fails, rows, run

# Their value changes between two statements (a clock, a random number, the connection).
_VOLATILE = {"rand", "random", "now", "current_timestamp", "localtime", "localtimestamp", "sysdate",
             "utc_timestamp", "curtime", "current_time", "utc_time", "unix_timestamp"}


def _one(conn: Conn, sql: str) -> str | None:
    found = rows(conn, sql)
    assert len(found) == 1, (sql, found)
    return shown(found[0][0])


def test_every_function_answers_the_same_with_and_without_from(conn: Conn, db: str) -> None:
    run(conn, "CREATE TABLE one_row (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO one_row VALUES (1)")
    differing = []
    for entry in FUNCTIONS.values():
        if entry.name in _VOLATILE:
            continue
        bare = _one(conn, f"SELECT {entry.example}")
        for source in ("(SELECT 1) t", "one_row"):
            framed = _one(conn, f"SELECT {entry.example} FROM {source}")
            if framed != bare:
                differing.append(f"{entry.example} FROM {source}: {framed!r}, without FROM {bare!r}")
    assert not differing, "\n".join(differing)


@pytest.mark.parametrize("sql, name", [
    ("SELECT foo(1)", "foo"),
    ("SELECT list_value(1, 2)", "list_value"),  # a DuckDB function, not Doris'
    ("SELECT k FROM (SELECT 1 k) t WHERE strlen('a') = 1", "strlen"),
])
def test_an_unknown_function_is_error_1105_naming_it(conn: Conn, sql: str, name: str) -> None:
    message = fails(conn, sql, 1105, f"Can not found function '{name}'")
    assert "duckdb" not in message.lower()


def test_a_wrong_argument_count_is_error_1105(conn: Conn) -> None:
    fails(conn, "SELECT split_part('a')", 1105, "split_part", "arity")


def test_the_readme_lists_every_supported_function() -> None:
    """The README's table is `python -m query.functions`' output; regenerate it when the registry changes."""
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    missing = [name for name in FUNCTIONS if f"`{name}`" not in readme]
    assert not missing, f"README lacks {missing}; paste `python -m query.functions` into its Functions section"
