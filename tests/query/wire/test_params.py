"""Binding prepared-statement parameters as typed literals (query.wire.params). No stack needed:
each literal is read back by Strata's own parser, which the server uses on the bound text."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as s
from mysql_mimic.charset import CharacterSet
from mysql_mimic.errors import MysqlError
from sqlglot import exp

from query.parser import parse_script
from query.parser import statements as st
from query.wire.params import Text, bind, literal, placeholders

UTF8 = CharacterSet.utf8mb4


def parsed_value(sql_literal: str) -> exp.Expression:
    [statement] = parse_script(f"SELECT {sql_literal}")
    assert isinstance(statement, st.Query)
    [expression] = statement.expr.expressions
    return expression


@settings(max_examples=300, deadline=None)
@given(s.text(alphabet=s.characters(exclude_categories=["Cs"], exclude_characters="\x00")))
def test_any_string_reads_back_as_itself(text: str) -> None:
    value = parsed_value(literal(text, UTF8))
    assert isinstance(value, exp.Literal) and value.is_string and value.this == text


@pytest.mark.parametrize("text", ["nobody' OR '1'='1", "O'Brien", "\\' OR 1=1 -- ", "\\", "'; DROP TABLE t; --"])
def test_injection_strings_are_one_literal(text: str) -> None:
    value = parsed_value(literal(text, UTF8))
    assert isinstance(value, exp.Literal) and value.this == text


def test_bytes_are_text_when_they_decode_and_hex_when_not() -> None:
    assert literal(Text(b"it's"), UTF8) == "'it''s'"
    assert literal(b"\xff\x00'", UTF8) == "X'ff0027'"


@pytest.mark.parametrize(("value", "expected"), [
    (None, "NULL"), (True, "TRUE"), (-5, "-5"), (2**64 - 1, "18446744073709551615"), (1.5, "1.5e0"),
    (-2.5e-300, "-2.5e-300"),
    (Decimal("12.50"), "12.50"), (Decimal("1E+3"), "1000"), (Decimal("-0.000001"), "-0.000001"),
    (dt.date(2026, 1, 2), "CAST('2026-01-02' AS DATE)"),
    (dt.datetime(2026, 1, 2, 3, 4, 5, 600), "CAST('2026-01-02 03:04:05.000600' AS DATETIME(6))"),
    (dt.datetime(2026, 1, 2, 3, 4, 5), "CAST('2026-01-02 03:04:05' AS DATETIME)"),
    (dt.timedelta(hours=10, seconds=1), "CAST('10:00:01' AS TIME)"),
    (dt.timedelta(hours=-30), "INTERVAL '-30:00:00'"),
])
def test_typed_literals(value: Any, expected: str) -> None:
    assert literal(value, UTF8) == expected


def test_non_finite_floats_are_refused() -> None:
    with pytest.raises(MysqlError):
        literal(float("nan"), UTF8)


def test_placeholders_are_tokens_not_question_marks() -> None:
    sql = "SELECT ?, '?', \"?\", `?` /* ? */, ? -- ?\n"
    offsets = placeholders(sql)
    assert [sql[i] for i in offsets] == ["?", "?"] and len(offsets) == 2
    bound = bind(sql, offsets, ["a'b", None], UTF8)
    assert bound.startswith("SELECT  'a''b' , '?'") and " NULL " in bound


def test_bind_keeps_a_minus_from_becoming_a_comment() -> None:
    sql = "SELECT 1-?"
    [statement] = parse_script(bind(sql, placeholders(sql), [-1], UTF8))
    assert isinstance(statement, st.Query) and statement.expr.sql() == "SELECT 1 - -1"


def test_parameter_count_must_match() -> None:
    with pytest.raises(MysqlError, match="2 parameters, 1 were sent"):
        bind("SELECT ?, ?", [7, 10], [1], UTF8)


def test_a_statement_that_does_not_tokenize_fails_at_prepare() -> None:
    with pytest.raises(MysqlError) as caught:
        placeholders("SELECT ? /* open")
    assert caught.value.code == 1064 and "unterminated comment" in caught.value.msg
