"""The bulk INSERT fast path (query.parser.literal_insert): which statements it takes, how it types
the literals, and that it hands the rest to the parser."""

from __future__ import annotations

import time

import pytest

from query.parser import Insert, literal_insert, parse_statement
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


# Lists the split path (one quote character, Arrow's CSV reader) takes: strings holding the list's own
# punctuation, empty strings, any spacing between tokens.
SPLIT_LISTS = [
    "(1, 'a, b', 'x(y)z'), (2, '), (', ''), (3, 'say \"hi\"', ' '), (-4, 'NULL', 'null')",
    "(1,'line\nbreak','tab\there'),(2 ,\t'cr\r\nlf' ,'  spaced  ' ) ,\n\n ( 3 , ';', '--no comment')",
    "(NULL, 'a', 1.5), (7, NULL, -.25), (8, '', 10.)",
    "(TRUE, 1e3, '2024-01-01 10:00:00'), (false, -2.5E-3, '2024-02-29'), (NULL, 0, NULL);",
    "(1, '#', '/*'), (2, 'é — ü', '\"q\"')",
    '(1, "dq"), (2, "(a, b)")',  # no single quote: '"' quotes the strings
]


@pytest.mark.parametrize("values", SPLIT_LISTS)
def test_the_split_and_the_pieces_cut_agree(values: str) -> None:
    quote = "'" if "'" in values or '"' not in values else '"'
    split, pieces = literal_insert._split_columns(values, quote), literal_insert._pieces_columns(values)
    assert split is not None and pieces is not None
    split_rows, piece_rows = literal_insert._typed(*split), literal_insert._typed(*pieces)
    assert split_rows is not None and piece_rows is not None
    assert split_rows.duck_types == piece_rows.duck_types
    assert split_rows.data.to_pylist() == piece_rows.data.to_pylist()


def test_split_strings_keep_every_character() -> None:
    found = parse_literal_insert("INSERT INTO t VALUES " + SPLIT_LISTS[0])
    assert found is not None and found.rows.data.to_pylist() == [
        {"c0": 1, "c1": "a, b", "c2": "x(y)z"}, {"c0": 2, "c1": "), (", "c2": ""},
        {"c0": 3, "c1": 'say "hi"', "c2": " "}, {"c0": -4, "c1": "NULL", "c2": "null"}]
    spaced = parse_literal_insert("INSERT INTO t VALUES " + SPLIT_LISTS[1])
    assert spaced is not None and [r["c1"] for r in spaced.rows.data.to_pylist()] == [
        "line\nbreak", "cr\r\nlf", ";"]


@pytest.mark.parametrize("values", [
    "(1, 'a' 'b')", "(1, 'a''b')",  # strings side by side (MySQL joins them), a doubled quote: the pieces cut's
    "(1, 'a'x)", "(1, x'41')", "(1, b'01')", "(1, N'abc')", "(1, _utf8mb4'abc')",  # introducers, hex, bits
    "(1, DATE '2024-01-01')", "(1, TIMESTAMP '2024-01-01 00:00:00')",
    "(1, 'a') /* it's */", "(1, 'a') # it's", "(1, 'a'), -- it's\n(2, 'b')",  # comments, with quotes
    "(1, 'a'); DELETE FROM t", "(1, 'a') ON DUPLICATE KEY UPDATE v = 'b'", "(1, 'a') AS new",
    "(1, 'a'), (2, 'b', 'c')", "(1, 'a'), (2)", "(1, 'a'),", "(1, 'a') (2, 'b')", "(1, 'a'),,(2, 'b')",
    "(1, 'a), (2, 'b')", "(- 1, 'a')", "(1, 'a' || 'b')", "(1, CONCAT('a', 'b'))",
    "(1, 'a\x00b')",  # a stand-in character in a string: the pieces path keeps it
])
def test_anything_unusual_leaves_the_split_path(values: str) -> None:
    assert literal_insert._split_columns(values, "'") is None


def test_an_empty_tuple_takes_the_parser() -> None:
    assert parse_literal_insert("INSERT INTO t VALUES ()") is None  # MySQL's every column's default


def test_a_stand_in_character_in_a_string_still_takes_a_fast_path() -> None:
    found = parse_literal_insert("INSERT INTO t VALUES (1, 'a\x00b')")
    assert found is not None and found.rows.data.to_pylist() == [{"c0": 1, "c1": "a\x00b"}]
