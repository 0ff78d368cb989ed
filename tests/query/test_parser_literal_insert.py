"""The bulk INSERT fast path (query.parser.literal_insert): which statements it takes, how it types
the literals, and that it hands the rest to the parser."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    split_rows = literal_insert._typed(*split, literal_insert._column)
    piece_rows = literal_insert._typed(*pieces, literal_insert._column)
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



_KINDS = ("int", "decimal", "string", "bool")
# What a string may hold: characters and runs that mean something outside a string.
_STRING_PIECES = [*"ab ,();'\"-#/*\n\t\x00é`", "--", "/*", "),(", "', '", "NULL"]
_SPACINGS = ["", " ", "  ", "\n", "\t ", " \r\n "]
Case = tuple[str, list[str], list[list[object]]]


def _literal(kind: str, value: object, quote: str) -> str:
    if value is None:
        return "NULL"
    if kind == "string":
        assert isinstance(value, str)
        return quote + value.replace(quote, quote * 2) + quote
    if kind == "bool":
        return "TRUE" if value else "FALSE"
    return str(value)


def _statement(kinds: list[str], rows: list[list[object]], quote: str, space: Callable[[], str], end: str) -> str:
    tuples = ["(" + ",".join(space() + _literal(k, v, quote) + space() for k, v in zip(kinds, row, strict=True)) + ")"
              for row in rows]
    return "INSERT INTO t VALUES " + (space() + "," + space()).join(tuples) + end


@st.composite
def _literal_lists(draw: st.DrawFn) -> Case:
    kinds = draw(st.lists(st.sampled_from(_KINDS), min_size=1, max_size=4))
    values = {"int": st.integers(-(2 ** 63) + 1, 2 ** 63 - 1), "bool": st.booleans(),
              "string": st.lists(st.sampled_from(_STRING_PIECES), max_size=8).map("".join),
              "decimal": st.decimals(min_value=-10 ** 6, max_value=10 ** 6, places=3, allow_nan=False)}
    rows = draw(st.lists(st.tuples(*(st.one_of(st.none(), values[k]) for k in kinds)), min_size=1, max_size=6))
    table = [list(r) for r in rows]
    sql = _statement(kinds, table, draw(st.sampled_from(["'", '"'])), lambda: draw(st.sampled_from(_SPACINGS)),
                     draw(st.sampled_from(["", ";"])))
    return sql, kinds, table


def _comes_back(case: Case) -> bool:
    """Whether the fast path took the statement; when it did, asserts each value came back as written."""
    sql, kinds, rows = case
    found = parse_literal_insert(sql)
    if found is None:
        return False
    got = found.rows.data.to_pylist()
    assert len(got) == len(rows), sql
    for row, cells in zip(rows, got, strict=True):
        for i, (kind, want) in enumerate(zip(kinds, row, strict=True)):
            have = cells[f"c{i}"]
            if want is None or kind != "decimal":
                assert have == want, (sql, i, have, want)
            else:
                assert Decimal(str(have)) == want, (sql, i, have, want)
    return True


@settings(max_examples=400, deadline=None)
@given(_literal_lists())
def test_every_literal_comes_back_as_written(case: Case) -> None:
    """Whatever the strings hold (quotes, commas, parentheses, comment marks, the stand-in character)
    and however the list is spaced, the fast path gives back each value as written, or leaves the
    statement to the parser — never another value."""
    _comes_back(case)


def test_lists_like_those_mostly_take_the_fast_path() -> None:
    """The property above is worth something only if the fast path takes such lists: random ones
    (not shrunk toward the simplest, as Hypothesis' first examples are) mostly come back through it."""
    chance = random.Random(7)
    taken = 0
    for _ in range(300):
        kinds = [chance.choice(_KINDS) for _ in range(chance.randint(1, 4))]
        make: dict[str, Callable[[], object]] = {
            "int": lambda: chance.randint(-(2 ** 63) + 1, 2 ** 63 - 1), "bool": lambda: chance.random() < 0.5,
            "decimal": lambda: Decimal(chance.randint(-10 ** 9, 10 ** 9)).scaleb(-3),
            "string": lambda: "".join(chance.choice(_STRING_PIECES) for _ in range(chance.randint(0, 8)))}
        rows = [[None if chance.random() < 0.1 else make[k]() for k in kinds] for _ in range(chance.randint(1, 6))]
        sql = _statement(kinds, rows, chance.choice("'\""), lambda: chance.choice(_SPACINGS), chance.choice(["", ";"]))
        taken += _comes_back((sql, kinds, rows))
    assert taken >= 200, taken


# Values a short list may hold, including the ones that send a list to the parser.
_SHORT_VALUES = ["1", "-7", "007", "-0", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
                 "1.5", "-0.25", ".5", "5.", "000.10", "1e3", "-2.5E-2", "NULL", "null", "TRUE", "false",
                 "'a'", "'it''s'", "''", "'12'", "'1.5'", "'NULL'", "\"dq\"", "\"say \"\"hi\"\"\"",
                 "'中文'", "'ß'", "abc", "1.2.3", "2e", "-", "'", "now()", "'a' 'b'", "x'41'", "1\u00a0"]


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 4), st.lists(st.lists(st.sampled_from(_SHORT_VALUES), min_size=1, max_size=4),
                                   min_size=1, max_size=3),
       st.sampled_from([", ", ",", " , ", ",\n"]), st.sampled_from(["", ";", " ;"]))
def test_a_short_list_is_typed_as_the_long_path_types_it(width: int, rows: list[list[str]], sep: str,
                                                         end: str) -> None:
    # Mostly rows of one width (the usual statement), sometimes ragged ones (the parser's error).
    shaped = [row[:width] + [row[-1]] * (width - len(row)) if len(rows) % 2 else row for row in rows]
    body = sep.join("(" + sep.join(row) + ")" for row in shaped) + end
    short, long = literal_insert._rows(body), literal_insert._long_rows(body)
    if long is None:
        assert short is None, body
        return
    assert short is not None, body
    assert short.duck_types == long.duck_types, body
    assert short.data.equals(long.data), body


def test_a_single_row_insert_parses_in_well_under_a_millisecond() -> None:
    sql = "INSERT INTO t VALUES (10000001, 'x', 2.5, NULL)"
    found = parse_literal_insert(sql)
    assert found is not None and found.rows.duck_types == ("BIGINT", "VARCHAR", "DECIMAL(2,1)", "VARCHAR")
    start = time.perf_counter()
    for _ in range(200):
        parse_literal_insert(sql)
    # About 0.1 ms each on a quiet machine (the vectorised path: over 1 ms); generous for a loaded one.
    assert (time.perf_counter() - start) / 200 < 0.001
