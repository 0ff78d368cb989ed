"""String functions against Doris' answers. Expected values are the examples of Doris' docs,
https://doris.apache.org/docs/sql-manual/sql-functions/scalar-functions/string-functions/<name>
(the page named in each comment), and of MySQL's manual where Doris follows it."""

from __future__ import annotations

from tests.query.functionkit import check
from tests.query.sqlkit import Conn


def test_lengths_count_bytes_and_characters(conn: Conn) -> None:
    check(conn, [
        ("length('abc')", "3"), ("length('中国')", "6"),  # length: bytes
        ("length('Zoë')", "4"), ("octet_length('Zoë')", "4"),
        ("char_length('abc')", "3"), ("char_length('中国')", "2"),  # char-length
        ("character_length('Zoë')", "3"),
    ])


def test_regexp(conn: Conn) -> None:
    check(conn, [
        # regexp-extract
        ("regexp_extract('AbCdE', '([[:lower:]]+)C([[:lower:]]+)', 1)", "b"),
        ("regexp_extract('AbCdE', '([[:lower:]]+)C([[:lower:]]+)', 2)", "d"),
        ("regexp_extract('abc123def', '([a-z]+)([0-9]+)', 2)", "123"),
        ("regexp_extract('a-b-c', '([a-z])-', 1)", "a"),
        # regexp-extract-all
        ("regexp_extract_all('x=a3&x=18abc&x=2&y=3&x=4', 'x=([0-9]+)([a-z]+)')", "['18']"),
        # regexp-replace, regexp-replace-one
        ("regexp_replace('a b c', ' ', '-')", "a-b-c"),
        ("regexp_replace_one('a b c', ' ', '-')", "a-b c"),
    ])


def test_splitting_and_searching(conn: Conn) -> None:
    check(conn, [
        ("split_part('hello world', ' ', 1)", "hello"), ("split_part('abca', 'a', 1)", ""),  # split-part
        ("substring_index('hello world', ' ', 1)", "hello"),  # substring-index
        ("substring_index('hello world', ' ', -1)", "world"),
        ("substring_index('hello world', ' ', 0)", ""),
        ("instr('abc', 'b')", "2"), ("instr('abc', 'd')", "0"),  # instr
        ("locate('bar', 'foobarbar')", "4"), ("locate('xbar', 'foobar')", "0"),  # locate
        ("locate('bar', 'foobarbar', 5)", "7"),
        ("find_in_set('b', 'a,b,c')", "2"),  # find-in-set
    ])


def test_padding_and_concatenation(conn: Conn) -> None:
    check(conn, [
        ("lpad('hi', 5, 'xy')", "xyxhi"), ("lpad('hi', 1, 'xy')", "h"),  # lpad
        ("rpad('hi', 5, 'xy')", "hixyx"), ("rpad('hi', 1, 'xy')", "h"),  # rpad
        ("concat('a', 'b')", "ab"), ("concat('a', NULL, 'c')", None),  # concat
        ("concat_ws('or', 'd', 'is')", "doris"), ("concat_ws(NULL, 'd', 'is')", None),  # concat-ws
        ("concat_ws('or', 'd', NULL, 'is')", "doris"),
    ])


def test_formatting_urls_and_masks(conn: Conn) -> None:
    check(conn, [
        ("money_format(17014116)", "17,014,116.00"), ("money_format(1123.456)", "1,123.46"),  # money-format
        ("money_format(1123.4)", "1,123.40"),
        ("parse_url('https://doris.apache.org/', 'HOST')", "doris.apache.org"),  # parse-url
        ("parse_url('https://doris.apache.org/', 'PROTOCOL')", "https"),
        ("parse_url('http://a.com/p/q?k1=v1&k2=v2#r', 'QUERY', 'k2')", "v2"),
        ("parse_url('http://a.com/p/q?k1=v1&k2=v2#r', 'PATH')", "/p/q"),
        ("url_decode('https%3A%2F%2Fdoris.apache.org%2Fdocs')", "https://doris.apache.org/docs"),  # url-decode
        ("mask('abc123XYZ')", "xxxnnnXXX"), ("mask('abc123XYZ', '*', '#', '$')", "###$$$***"),  # mask
        ("hex('1')", "31"), ("hex(12)", "C"),  # hex (numeric-functions)
    ])


def test_numbers_are_taken_as_their_text(conn: Conn) -> None:
    # Connector/J's getColumns sends UPPER(CASE … THEN 10 … END); MySQL and Doris read the number as text.
    check(conn, [("upper(CASE WHEN 1 = 1 THEN 10 END)", "10"), ("lcase(12)", "12"), ("length(123)", "3")])
