"""The bulk INSERT fast path (query.parser.literal_insert): which statements it takes, how it types
the literals, and that it hands the rest to the parser."""

from __future__ import annotations

import time

import pytest

from query.parser import Insert, parse_statement
from query.parser.literal_insert import parse_literal_insert
from query.parser.parser import parse_script


def test_literals_become_typed_columns() -> None:
    found = parse_literal_insert(
        "insert into db.`my t` (a, `b c`, d, e, f, g) values (1, 'x''y', \"say \"\"hi\"\"\", 1.25, -0.5e1, TRUE), "
        "(NULL, '(1, 2)', 'it''s', 10.5, 3, false);")
    assert found is not None
    assert (found.db, found.table, found.columns) == ("db", "my t", ("a", "b c", "d", "e", "f", "g"))
    assert found.rows.duck_types == ("BIGINT", "VARCHAR", "VARCHAR", "DECIMAL(4,2)", "DOUBLE", "BOOLEAN")
    assert found.rows.data.to_pylist() == [
        {"c0": 1, "c1": "x'y", "c2": 'say "hi"', "c3": "1.25", "c4": -5.0, "c5": True},
        {"c0": None, "c1": "(1, 2)", "c2": "it's", "c3": "10.5", "c4": 3.0, "c5": False}]


@pytest.mark.parametrize("sql", [
    "INSERT INTO t VALUES (1, now())",  # a function
    "INSERT INTO t VALUES (1 + 1)",  # an expression
    "INSERT INTO t VALUES (1, 'a\\nb')",  # an escape sequence: the parser's rules
    "INSERT INTO t VALUES (1) -- note",  # a comment
    "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)",  # two statements
    "INSERT INTO t VALUES (1), (2, 3)",  # widths differ: the parser path's error
    "INSERT INTO t VALUES (1), ('a')",  # strings mixed with numbers: DuckDB's typing
    "INSERT INTO t VALUES (12345678901234567890)",  # beyond BIGINT
    "INSERT INTO t WITH LABEL l VALUES (1)",
    "INSERT INTO t PARTITION (p1) VALUES (1)",
    "INSERT OVERWRITE TABLE t VALUES (1)",
    "INSERT INTO t SELECT 1",
    "INSERT INTO t VALUES (1),",
    "INSERT INTO t VALUES (1, abc)",  # a name
    "INSERT INTO t VALUES (1 2)",  # two values without a comma
    "INSERT INTO t VALUES (1, , 2)",  # an empty slot
    "INSERT INTO t VALUES ((1), 2)",  # a parenthesised value
    "INSERT INTO t VALUES (1, 'a)",  # a quote never closed
    "INSERT INTO t VALUES (1, 2), (3, 4) (5, 6)",  # tuples without a comma
    "INSERT INTO t VALUES (1, 2); (3, 4)",
    "INSERT INTO t VALUES (1, 1.2.3)",  # no number
    "INSERT INTO t VALUES (1, -)",
    "INSERT INTO t VALUES (1, 2e)",
])
def test_anything_else_takes_the_parser(sql: str) -> None:
    assert parse_literal_insert(sql) is None


def test_tuples_of_one_width_with_a_closing_semicolon() -> None:
    found = parse_literal_insert("INSERT INTO t VALUES (1,'a'),(2 , 'b' ) ,\n(-3,'c');")
    assert found is not None and found.rows.data.to_pylist() == [
        {"c0": 1, "c1": "a"}, {"c0": 2, "c1": "b"}, {"c0": -3, "c1": "c"}]
    decimals = parse_literal_insert("INSERT INTO t VALUES (-0.5), (007.25), (NULL), (12.)")
    assert decimals is not None and decimals.rows.duck_types == ("DECIMAL(4,2)",)


def test_the_statement_is_the_parsers_insert() -> None:
    sql = "INSERT INTO d.t (k, v) VALUES (1, 'a'), (2, 'b')"
    [fast] = parse_script(sql)
    slow = parse_statement(sql + " /* the parser */")
    assert isinstance(fast, Insert) and isinstance(slow, Insert) and fast.literal_rows is not None
    assert (fast.table, fast.columns, fast.label, fast.partitions) == (slow.table, slow.columns, slow.label,
                                                                       slow.partitions)
    assert slow.literal_rows is None


@pytest.mark.parametrize("tail", [" /* parser */", ", (1, now(), 2.5)", " ON DUPLICATE KEY UPDATE a = 1", "'"])
def test_a_long_list_that_fails_at_its_end_fails_at_once(tail: str) -> None:
    # Numbers of many digits and long strings: a pattern that could split them two ways backtracked
    # through every split (100 rows cost over a minute, holding the GIL: the whole server stopped).
    sql = "INSERT INTO t VALUES " + ",".join(f"({i}123456, '{'x' * 40}', 1234.5678e12, NULL)"
                                             for i in range(20_000)) + tail
    started = time.perf_counter()
    assert parse_literal_insert(sql) is None
    assert time.perf_counter() - started < 5
