"""Error reporting: positions, messages, unsupported statements, script splitting."""

from __future__ import annotations

import pickle

import pytest

from query.parser import (
    CreateDatabase,
    Query,
    SqlSyntaxError,
    UnsupportedStatement,
    Use,
    parse_script,
    parse_statement,
)
from query.parser.errors import strip_ansi


def syntax_error(sql: str) -> SqlSyntaxError:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statement(sql)
    error = info.value
    assert "\x1b" not in str(error)
    return error


def test_unknown_keyword_points_at_token() -> None:
    error = syntax_error("DELETE FORM t WHERE a = 1")
    assert str(error) == "syntax error near 'FORM' at line 1, column 8: expected FROM"
    assert (error.line, error.col) == (1, 8)


def test_unknown_statement() -> None:
    error = syntax_error("SELEC * FROM t")
    assert str(error).startswith("syntax error near 'SELEC' at line 1, column 1")


def test_position_on_later_line() -> None:
    error = syntax_error("CREATE TABLE t (\n  a INT,\n  b FOO\n)")
    assert (error.line, error.col) == (3, 5)
    assert "near 'FOO'" in str(error) and "expected a column type" in str(error)


@pytest.mark.parametrize(
    ("sql", "fragment"),
    [
        ("CREATE TABLE t (a INT", "end of input"),
        ("SELECT * FROM t WHERE (a = 1", "end of input"),
        ('CREATE TABLE t (a INT) PROPERTIES ("k" "v")', "expected '=' after the property name"),
        ('CREATE TABLE t (a INT) PROPERTIES ("k" = )', "expected a property value"),
        ('CREATE TABLE t (a INT) PROPERTIES ("k" = "v" "j" = "w")', "expected ',' or ')'"),
        ('CREATE TABLE t (a INT) PROPERTIES ("k" = "1", "K" = "2")', "duplicate property 'k'"),
        ('CREATE STORAGE POLICY p PROPERTIES "k" = "v"', "expected '(' to open the property list"),
        ("SELECT * FROM t FOR TIME AS OF", "AS OF expects a quoted timestamp literal"),
        ("SELECT * FROM t FOR TIME AS OF now()", "AS OF expects a quoted timestamp literal"),
        ("SELECT * FROM t FOR VERSION AS OF 'x'", "VERSION AS OF expects an integer version"),
        ("RESTORE TABLE t TO VERSION AS OF 'x'", "expected an integer version"),
        ("CREATE TABLE t (a INT) DISTRIBUTED BY HASH(a) BUCKETS 0", "bucket count must be positive"),
        ("CREATE TABLE t (a VARCHAR(1, 2))", "too many parameters for type VARCHAR"),
        ("CREATE TABLE t (a INT NULL NOT NULL)", "NULL given twice"),
        ("USE d extra", "unexpected token after end of statement"),
        ("SHOW NONSENSE", "unknown SHOW statement"),
        ("SHOW DYNAMIC PARTITION", "unknown SHOW statement"),
        ("SHOW DYNAMIC PARTITION TABLES FROM", "expected a database name"),
        ("SHOW DYNAMIC PARTITION TABLES FROM a b", "unexpected token after end of statement"),
        ("SELECT 'unterminated", "line 1, column 8"),
        ("", "empty statement"),
        ("SELECT 1; SELECT 2", "only one statement expected"),
    ],
)
def test_malformed_input_messages(sql: str, fragment: str) -> None:
    assert fragment in str(syntax_error(sql))


def test_for_version_error_position() -> None:
    error = syntax_error("SELECT * FROM t FOR VERSION AS OF 'x'")
    assert "near ''x''" in str(error) and (error.line, error.col) == (1, 35)


def test_sqlglot_errors_have_no_ansi_codes() -> None:
    error = syntax_error("SELECT * FROM t WHERE a = = 1")
    assert error.line == 1 and error.col > 0
    assert strip_ansi("a \x1b[4mb\x1b[0m c") == "a b c"


def test_syntax_error_pickles() -> None:
    error = syntax_error("SELEC 1")
    clone = pickle.loads(pickle.dumps(error))
    assert (str(clone), clone.line, clone.col) == (str(error), error.line, error.col)


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("CREATE ROLE analyst", "CREATE ROLE is not supported"),
        ("CREATE MATERIALIZED VIEW v AS SELECT 1", "CREATE MATERIALIZED VIEW is not supported"),
        ("create index i on t (a) using inverted", "CREATE INDEX is not supported: Strata tables have no secondary "
                                                   "indexes (pandas.DataFrame.to_sql indexes its index column: pass "
                                                   "index=False)"),
        ("LOAD LABEL db.l (DATA INFILE('s3://x') INTO TABLE t) WITH BROKER b", "WITH BROKER is not supported; use "
                                                                               "WITH S3 (…)"),
        ("CANCEL ALTER TABLE COLUMN FROM t", "CANCEL ALTER is not supported"),
        ("ALTER TABLE t ADD ROLLUP r (a)", "ALTER TABLE ... ADD ROLLUP: rollups are not supported: Strata keeps "
                                           "one copy of each table; for the rollup's rows create a table with "
                                           "CREATE TABLE … AGGREGATE KEY (…) AS SELECT … GROUP BY … (or a view), "
                                           "and query it"),
        ("ADMIN SET FRONTEND CONFIG ('a' = 'b')", "ADMIN SET is not supported"),
        ("UPDATE t SET a = 1 WHERE k = 1 ORDER BY a LIMIT 1", "UPDATE with ORDER BY is not supported"),
        ("SHOW ROUTINE LOAD TASK WHERE JobName = 'j'", "SHOW ROUTINE LOAD TASK is not supported"),
    ],
)
def test_unsupported_statements(sql: str, message: str) -> None:
    with pytest.raises(UnsupportedStatement) as info:
        parse_statement(sql)
    assert str(info.value) == message


def test_script_splits_on_top_level_semicolons_only() -> None:
    statements = parse_script(
        "CREATE DATABASE d; -- a comment; not a statement\nUSE d;;\nSELECT 'a;b', `x;y` FROM t /* ; */ ;"
    )
    assert statements[:2] == [CreateDatabase("d"), Use("d")]
    assert isinstance(statements[2], Query) and len(statements) == 3
    assert parse_script("  ") == []


def test_script_error_positions_are_script_relative() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_script("USE d;\nUSE d;\nDROP TABLEX t")
    assert (info.value.line, info.value.col) == (3, 6)
