"""query.parser.read_cache: a query's text is parsed once and each later parse is an equal, separate
copy; statements other than queries, texts with secrets and long texts are parsed every time."""

from __future__ import annotations

from sqlglot import exp

from query.parser import parse_script
from query.parser.parser import _parse_script
from query.parser.read_cache import MAX_TEXT_CHARS, ReadCache
from query.parser.statements import Query, Statement


def _counting() -> tuple[ReadCache, list[str]]:
    parsed: list[str] = []

    def parse(sql: str) -> list[Statement]:
        parsed.append(sql)
        return _parse_script(sql)

    return ReadCache(parse), parsed


def test_a_query_is_parsed_once_and_each_hit_is_its_own_copy() -> None:
    cache, parsed = _counting()
    sql = "SELECT a, count(*) FROM t WHERE k = 7 GROUP BY a; SELECT 1"
    first = cache.parse(sql)
    second = cache.parse(sql)
    assert parsed == [sql]
    assert [s.expr for s in first if isinstance(s, Query)] == [s.expr for s in second if isinstance(s, Query)]
    assert first[0] is not second[0]
    # A handler rewriting its statement in place changes nothing for the next reader of the text.
    query = second[0]
    assert isinstance(query, Query)
    table = query.expr.find(exp.Table)
    assert table is not None
    table.replace(exp.to_table("other"))
    third = cache.parse(sql)[0]
    assert isinstance(third, Query)
    assert [t.name for t in third.expr.find_all(exp.Table)] == ["t"]
    assert len(parsed) == 1


def test_statements_other_than_queries_and_texts_with_secrets_are_not_kept() -> None:
    cache, parsed = _counting()
    for sql in ("CREATE USER 'u' IDENTIFIED BY 'pw'", "SELECT 1; INSERT INTO t VALUES (1)",
                "SELECT * FROM S3('uri' = 's3://b/f.csv', 's3.secret_key' = 'sk', 'format' = 'csv')"):
        cache.parse(sql)
        cache.parse(sql)
    assert len(parsed) == 6


def test_a_long_text_is_parsed_every_time() -> None:
    cache, parsed = _counting()
    sql = "SELECT " + ", ".join(f"c{i}" for i in range(MAX_TEXT_CHARS // 4)) + " FROM t"
    assert len(sql) > MAX_TEXT_CHARS
    cache.parse(sql)
    cache.parse(sql)
    assert len(parsed) == 2


def test_the_least_recently_used_text_leaves_first() -> None:
    parsed: list[str] = []

    def parse(sql: str) -> list[Statement]:
        parsed.append(sql)
        return _parse_script(sql)

    cache = ReadCache(parse, entries=2)
    for sql in ("SELECT 1", "SELECT 2", "SELECT 1", "SELECT 3", "SELECT 1", "SELECT 2"):
        cache.parse(sql)
    # SELECT 2 left when SELECT 3 came (SELECT 1 had just been read), so it is parsed again.
    assert parsed == ["SELECT 1", "SELECT 2", "SELECT 3", "SELECT 2"]


def test_parse_script_answers_a_repeated_query_alike() -> None:
    sql = "SELECT o_orderkey FROM orders FOR TIME AS OF '2026-01-01 00:00:00' WHERE o_orderkey = 5"
    assert [s.expr.sql() for s in parse_script(sql) if isinstance(s, Query)] == \
        [s.expr.sql() for s in parse_script(sql) if isinstance(s, Query)]
