"""Binding a Flight SQL prepared statement's parameters (query.flight.parameters), without a stack: the
statements each bound row runs as, and which INSERTs take their rows in one statement."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from query.context import SqlFailure
from query.flight.parameters import ROWS_PER_INSERT, bind_rows, prepare, statements


def bound(sql: str, values: pa.Table) -> list[str]:
    prepared = prepare(sql)
    bind_rows(prepared, values)
    return statements(prepared)


ROWS = pa.table({"k": [1, 2, 3], "v": ["x", "it's", None]})


@pytest.mark.parametrize("sql", ["INSERT INTO t VALUES (?, ?)", "insert into t (k, v) values (?, upper(?)) ;"])
def test_an_insert_of_one_row_of_placeholders_takes_every_row_at_once(sql: str) -> None:
    [statement] = bound(sql, ROWS)
    assert statement.count("(") == sql.count("(") + 2 * (sql.count("upper") + 1)  # three rows, one statement
    assert "'it''s'" in statement and "NULL" in statement and not statement.rstrip().endswith(";")


@pytest.mark.parametrize("sql", [
    "INSERT INTO t VALUES (?, ?), (0, 'fixed')",  # a second row: each bound row goes with it
    "INSERT INTO t SELECT ?, ?",
    "INSERT OVERWRITE TABLE t VALUES (?, ?)",  # each run replaces the table: not one statement of every row
    "UPDATE t SET v = ? WHERE k = ?",
])
def test_other_statements_run_once_per_row(sql: str) -> None:
    assert len(bound(sql, ROWS)) == 3


def test_a_big_batch_is_cut_into_inserts_of_bounded_size() -> None:
    n = ROWS_PER_INSERT * 2 + 1
    texts = bound("INSERT INTO t VALUES (?)", pa.table({"k": list(range(n))}))
    assert len(texts) == 3 and texts[-1].endswith(f"( {n - 1} )")


def test_values_become_typed_literals() -> None:
    [text] = bound("SELECT ?, ?, ?, ?", pa.table({"a": [dt.time(1, 2, 3)], "b": [dt.date(2024, 2, 29)],
                                                 "c": [b"\xff"], "d": ["a'b"]}))
    assert text == "SELECT  CAST('01:02:03' AS TIME) ,  CAST('2024-02-29' AS DATE) ,  X'ff' ,  'a''b' "


@pytest.mark.parametrize(("sql", "values", "message"), [
    ("SELECT ? + ?", pa.table({"a": [1]}), "takes 2 parameters, 1 were bound"),
    ("SELECT ?", pa.table({}), "takes 1 parameters, none were bound"),
    ("SELECT 1", pa.table({"a": [1]}), "takes 0 parameters, 1 were bound"),
])
def test_a_binding_that_does_not_fit_is_refused(sql: str, values: pa.Table, message: str) -> None:
    prepared = prepare(sql)
    with pytest.raises(SqlFailure, match=message):
        bind_rows(prepared, values)
        statements(prepared)


def test_a_statement_that_does_not_tokenize_is_a_syntax_error() -> None:
    with pytest.raises(SqlFailure) as refused:
        prepare("SELECT 'unterminated")
    assert refused.value.code == 1064
