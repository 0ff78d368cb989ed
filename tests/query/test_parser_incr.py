"""Doris' incremental read `t@incr('key'='value', …)` in the parser: where it may appear, what
`table_refs` reports, and how `change_range` checks the pairs (no stack needed)."""

from __future__ import annotations

import pytest

from query.parser import (
    DIALECT,
    AsOfTag,
    AsOfTime,
    AsOfVersion,
    ChangeRange,
    IncrementalArgumentError,
    IncrementalRead,
    Query,
    SqlSyntaxError,
    change_range,
    parse_statement,
    table_refs,
)
from query.parser.refs import TableRef


def refs(sql: str) -> list[TableRef]:
    statement = parse_statement(sql)
    assert isinstance(statement, Query)
    return table_refs(statement.expr)


def test_timestamp_range_with_alias_and_database() -> None:
    [ref] = refs("SELECT c.id FROM shop.orders@incr('startTimestamp'='2026-12-01 10:00:00', "
                 "'endTimestamp'='2026-12-02 00:00:00') AS c WHERE c.id > 1")
    assert (ref.db, ref.name, ref.node.alias, ref.as_of) == ("shop", "orders", "c", None)
    assert ref.incr == IncrementalRead((("startTimestamp", "2026-12-01 10:00:00"),
                                        ("endTimestamp", "2026-12-02 00:00:00")))
    assert change_range(ref.incr) == ChangeRange(AsOfTime("2026-12-01 10:00:00"), AsOfTime("2026-12-02 00:00:00"))


def test_version_range_numbers_quoted_or_not() -> None:
    [ref] = refs("SELECT * FROM t@incr('startVersion'='3', 'endVersion'=7)")
    assert ref.incr is not None and change_range(ref.incr) == ChangeRange(AsOfVersion(3), AsOfVersion(7))


def test_end_is_optional_and_keys_ignore_case() -> None:
    [ref] = refs("SELECT * FROM t@INCR('STARTVERSION'='0')")
    assert ref.incr is not None and change_range(ref.incr) == ChangeRange(AsOfVersion(0), None)


def test_doris_snapshot_id_spelling_means_commit_numbers() -> None:
    [ref] = refs("SELECT * FROM t@incr('startSnapshotId'='1', 'endSnapshotId'='2')")
    assert ref.incr is not None and change_range(ref.incr) == ChangeRange(AsOfVersion(1), AsOfVersion(2))


def test_mixed_bounds() -> None:
    [ref] = refs("SELECT * FROM t@incr('startVersion'='2', 'endTimestamp'='2026-12-01 10:00:00')")
    assert ref.incr is not None
    assert change_range(ref.incr) == ChangeRange(AsOfVersion(2), AsOfTime("2026-12-01 10:00:00"))


def test_tag_bounds() -> None:
    [ref] = refs("SELECT * FROM t@incr('startTag'='v1', 'endTag'='v2')")
    assert ref.incr is not None and change_range(ref.incr) == ChangeRange(AsOfTag("v1"), AsOfTag("v2"))
    [ref] = refs("SELECT * FROM t@incr('starttag'='v1', 'endVersion'='9')")
    assert ref.incr is not None and change_range(ref.incr) == ChangeRange(AsOfTag("v1"), AsOfVersion(9))


def test_incr_in_joins_subqueries_and_ctes_next_to_time_travel() -> None:
    found = refs("WITH w AS (SELECT * FROM a@incr('startVersion'='1')) SELECT * FROM w "
                 "JOIN b FOR VERSION AS OF 2 ON w.k = b.k JOIN (SELECT * FROM c@incr('startVersion'='4') x) s "
                 "ON s.k = w.k, d")
    assert [(r.name, r.as_of, r.incr is not None) for r in found] == [
        ("a", None, True), ("b", AsOfVersion(2), False), ("c", None, True), ("d", None, False)]


def test_plain_references_have_no_incr() -> None:
    [ref] = refs("SELECT * FROM t FOR TIME AS OF '2026-01-01 00:00:00' x")
    assert ref.incr is None and ref.as_of == AsOfTime("2026-01-01 00:00:00")
    [ref] = refs("SELECT * FROM t AS x")
    assert ref.incr is None and ref.as_of is None


def test_session_variables_still_parse() -> None:
    statement = parse_statement("SELECT @x")
    assert isinstance(statement, Query) and table_refs(statement.expr) == []


def test_round_trips_through_the_dialect() -> None:
    statement = parse_statement("SELECT * FROM t@incr('startVersion'='1', 'endVersion'='2') AS x")
    assert isinstance(statement, Query)
    again = parse_statement(statement.expr.sql(dialect=DIALECT))
    assert isinstance(again, Query)
    [ref] = table_refs(again.expr)
    assert ref.incr == IncrementalRead((("startVersion", "1"), ("endVersion", "2"))) and ref.node.alias == "x"


@pytest.mark.parametrize("sql, fragment", [
    ("SELECT * FROM t@incr('startVersion')", "expected ="),
    ("SELECT * FROM t@incr(startVersion = '1')", "'key' = 'value'"),
    ("SELECT * FROM t@incr('startVersion' = '1' 'endVersion' = '2')", "expected , or )"),
    ("SELECT * FROM t@incr", "expected ("),
    ("SELECT * FROM t@incr('startVersion'='1') FOR VERSION AS OF 3", "cannot also have FOR"),
])
def test_malformed_syntax(sql: str, fragment: str) -> None:
    with pytest.raises(SqlSyntaxError) as caught:
        parse_statement(sql)
    assert fragment.lower() in str(caught.value).lower()


@pytest.mark.parametrize("params, fragment", [
    ((), "needs a start"),
    ((("endVersion", "3"),), "needs a start"),
    ((("beginTime", "1"),), "unknown @incr parameter 'beginTime'"),
    ((("startVersion", "1"), ("startVersion", "2")), "twice"),
    ((("startVersion", "1"), ("startTimestamp", "2026-01-01")), "one start"),
    ((("startVersion", "1"), ("endVersion", "2"), ("endTimestamp", "2026-01-01")), "one end"),
    ((("startVersion", "x"),), "commit number"),
    ((("startVersion", "-1"),), "commit number"),
    ((("startVersion", "5"), ("endVersion", "4")), "before 'startVersion'"),
    ((("startTimestamp", " "),), "empty"),
])
def test_bad_arguments(params: tuple[tuple[str, str], ...], fragment: str) -> None:
    with pytest.raises(IncrementalArgumentError) as caught:
        change_range(IncrementalRead(params))
    assert fragment.lower() in str(caught.value).lower()
