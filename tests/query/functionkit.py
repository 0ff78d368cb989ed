"""Helpers for the function-family tests (tests/query/test_functions_*.py): a value as the text a
MySQL client shows for it, which is what Doris' docs and regression .out files print."""

from __future__ import annotations

from typing import Any

from tests.query.sqlkit import Conn, rows


def shown(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode()
    return str(value)


def text(conn: Conn, expression: str) -> str | None:
    """`SELECT expression` (no FROM) as the client shows its one value."""
    found = rows(conn, f"SELECT {expression}")
    assert len(found) == 1 and len(found[0]) == 1, found
    return shown(found[0][0])


def check(conn: Conn, cases: list[tuple[str, str | None]]) -> None:
    """Every (expression, Doris' answer) pair, reporting all mismatches at once."""
    wrong = [(e, want, got) for e, want in cases if (got := text(conn, e)) != want]
    assert not wrong, "\n".join(f"{e}: Doris {want!r}, Strata {got!r}" for e, want, got in wrong)
