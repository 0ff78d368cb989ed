"""The parser must fail only with SqlSyntaxError / UnsupportedStatement, whatever it is given."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from query.parser import SqlSyntaxError, UnsupportedStatement, parse_script, parse_statement

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
        try:
            parse(sql)
        except _OK as error:
            assert "\x1b" not in str(error)


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
