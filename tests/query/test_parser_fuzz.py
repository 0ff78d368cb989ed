"""The parser must fail only with SqlSyntaxError / UnsupportedStatement, whatever it is given, and
within a time bound: hostile text (NUL, control characters, lone surrogates, unterminated quotes and
comments, deep nesting, kilobytes of input) never yields another exception or a hang."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from query.parser import SqlSyntaxError, Statement, UnsupportedStatement, parse_script, parse_statement
from tests.time_bound import within

# Per example: generous for a loaded CI machine, far below a hang.
_BOUND_S = 5.0

_TOKENS = [
    *"SELECT FROM WHERE FOR TIME VERSION SYSTEM_TIME TIMESTAMP AS OF CREATE TABLE DATABASE ALTER ADD DROP "
    "MODIFY RENAME COLUMN PARTITION PARTITIONS VALUES LESS THAN MAXVALUE IN BY HASH RANDOM BUCKETS AUTO "
    "DISTRIBUTED PROPERTIES KEY DUPLICATE UNIQUE AGGREGATE SUM REPLACE NULL NOT DEFAULT COMMENT INSERT INTO "
    "WITH LABEL UPDATE SET DELETE TRUNCATE SHOW TABLES USE DESC RESTORE TO RECOVER ADMIN COMPACT TYPE "
    "RESOURCE STORAGE POLICY USING ROUTINE LOAD ON COLUMNS TERMINATED KAFKA PAUSE RESUME STOP ALL NAMES "
    "GLOBAL SESSION VARIABLES LIKE JOIN UNION GROUP ORDER LIMIT INT VARCHAR LARGEINT DATETIME DECIMAL "
    "IF EXISTS FORCE FIRST AFTER t db a b".split(),
    *"( ) [ ] , ; . = * + - < > @@ @ ` '".split(),
    "'2024-01-01'",
    '"k"',
    "`q`",
    "1",
    "42",
    "3.5",
    "-- c\n",
    "/* x */",
]

_OK = (SqlSyntaxError, UnsupportedStatement)


def _check(sql: str) -> None:
    for parse in (parse_statement, parse_script):
        with within(_BOUND_S, sql):
            try:
                result = parse(sql)
            except _OK as error:
                assert "\x1b" not in str(error)
                assert isinstance(str(error), str) and str(error)
                if isinstance(error, SqlSyntaxError):
                    assert error.line >= 1 and error.col >= 1, error
                continue
        statements = result if isinstance(result, list) else [result]
        assert all(isinstance(s, Statement) for s in statements), result


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=60))
def test_random_text(sql: str) -> None:
    _check(sql)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_TOKENS), max_size=25))
def test_token_soup(tokens: list[str]) -> None:
    _check(" ".join(tokens))


_PREFIXES = [
    "SELECT * FROM t FOR TIME AS OF '2024-01-01' a JOIN t FOR VERSION AS OF 2 b ON a.k = b.k",
    "CREATE TABLE t (k INT KEY, v BIGINT SUM) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
    'ALTER TABLE t MODIFY PARTITION (p1, p2) SET ("a" = "b")',
    'CREATE ROUTINE LOAD j ON t COLUMNS(a, b = a + 1), WHERE a > 1 FROM KAFKA ("x" = "y")',
    "INSERT INTO t WITH LABEL l (a) VALUES (1)",
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_PREFIXES), st.data())
def test_truncated_and_mutated_valid_statements(sql: str, data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(sql)))
    insert = data.draw(st.sampled_from(_TOKENS))
    _check(sql[:cut])
    _check(f"{sql[:cut]} {insert} {sql[cut:]}")


# Characters a client can put on the wire that a parser may not expect.
_HOSTILE_CHARS = st.sampled_from([
    "\x00", "\x01", "\x1b[31m", "\t", "\r", "\n", "\x0b", "\x0c", "\x7f", "\u00a0", "\u200b", "\u202e",
    "\ufeff", "\ud800", "\udfff", "\U0001f600", "é", "字", "\\", "\\'", "'", '"', "`", "''", "``", "--", "#",
    "/*", "*/", ";", "../", "/", "%", "_", "$", "?", ":", "@@", "{", "}", "|", "^", "~", "!", "&&", "||",
])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_HOSTILE_CHARS, st.sampled_from(_TOKENS)), max_size=30))
def test_hostile_characters_among_tokens(parts: list[str]) -> None:
    _check(" ".join(parts))
    _check("".join(parts))


_IDENT = st.one_of(
    st.text(max_size=12),
    st.text(alphabet=st.sampled_from("a/\\.`'\"\x00 é字-_;"), max_size=12),
    st.sampled_from(["../etc", "..", ".", "a/b", "a\\b", "x" * 400, "SELECT", "`", "a`b", "", " "]),
)
_LITERAL = st.one_of(st.text(max_size=12), st.integers(), st.floats(allow_nan=True), st.just("9" * 5000))
_TEMPLATES = [
    "CREATE DATABASE {q}{i}{q}",
    "USE {q}{i}{q}",
    "DROP TABLE IF EXISTS {q}{i}{q}.{q}{j}{q} FORCE",
    "CREATE TABLE {q}{i}{q} ({q}{j}{q} INT, v VARCHAR(10)) DUPLICATE KEY({q}{j}{q}) "
    "DISTRIBUTED BY HASH({q}{j}{q}) BUCKETS {n}",
    "CREATE TABLE t (k INT) PARTITION BY RANGE(k) (PARTITION {q}{i}{q} VALUES LESS THAN ({l})) "
    "DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ('{i}' = '{j}')",
    "ALTER TABLE {q}{i}{q} ADD COLUMN {q}{j}{q} INT DEFAULT '{l}'",
    "ALTER TABLE t RENAME COLUMN {q}{i}{q} {q}{j}{q}",
    "INSERT INTO {q}{i}{q} ({q}{j}{q}) VALUES ('{l}'), ({l})",
    "SELECT {q}{j}{q}, '{l}' FROM {q}{i}{q} FOR TIME AS OF '{l}' WHERE {q}{j}{q} = {l}",
    "SELECT * FROM t FOR VERSION AS OF {l}",
    "SELECT * FROM {q}{i}{q}@incr('startVersion'='{l}', 'endTimestamp'='{j}')",
    "DELETE FROM {q}{i}{q} PARTITION ({q}{j}{q}) WHERE k = '{l}'",
    "SHOW PARTITIONS FROM {q}{i}{q}",
    "RESTORE TABLE {q}{i}{q} TO TIME AS OF '{l}'",
    "ADMIN COMPACT TABLE {q}{i}{q} PARTITION {q}{j}{q} WHERE TYPE = '{l}'",
    "CREATE ROUTINE LOAD {q}{i}{q}.{q}{j}{q} ON t COLUMNS TERMINATED BY '{l}' FROM KAFKA ('{i}' = '{j}')",
    'CREATE STORAGE POLICY {q}{i}{q} PROPERTIES ("storage_resource" = "{j}", "cooldown_ttl" = "{l}")',
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_TEMPLATES), _IDENT, _IDENT, _LITERAL, st.sampled_from(["", "`", '"', "'"]),
       st.integers(-5, 10**20))
def test_statement_shapes_with_hostile_names_and_literals(template: str, i: str, j: str, literal: object,
                                                          quote: str, n: int) -> None:
    _check(template.format(i=i, j=j, l=literal, q=quote, n=n))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 3000), st.sampled_from(["(", "((SELECT ", "[", "-", "NOT ", "CASE WHEN ", "a.", "'", "/*",
                                              "(1 + ", "ARRAY(", "@@"]),
       st.sampled_from(["SELECT ", "SELECT * FROM t WHERE ", "", "INSERT INTO t VALUES ("]))
def test_deep_nesting_and_long_repetition(depth: int, unit: str, head: str) -> None:
    _check(head + unit * depth + "1")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(min_size=2000, max_size=8000))
def test_kilobytes_of_random_text(sql: str) -> None:
    _check(sql)
