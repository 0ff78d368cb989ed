"""query.streamed_rows: a result's description and its rows from one pass of DuckDB (open_result), and its
batches as the wire takes them, a small one read whole (StreamedRows)."""

from __future__ import annotations

import duckdb
import pytest

from query import streamed_rows
from query.context import SqlFailure
from query.streamed_rows import WHOLE_ROWS, StreamedRows, open_result


def _streamed(sql: str, batch_rows: int = 1000) -> StreamedRows:
    cur = duckdb.connect().cursor()
    released: list[bool] = []
    reader = cur.sql(sql).to_arrow_reader(batch_rows)
    return StreamedRows(cur, reader, lambda: released.append(True), lambda exc: SqlFailure(1105, str(exc)))


def test_a_few_rows_read_to_the_end_go_whole() -> None:
    rows = _streamed(f"SELECT range AS k FROM range({WHOLE_ROWS})")
    whole = rows.read_whole()
    assert whole is not None and sum(b.num_rows for b in whole) == WHOLE_ROWS
    assert rows.read_whole() == [] and rows.next_batch() is None  # taken once
    rows.close()


def test_an_empty_result_goes_whole() -> None:
    rows = _streamed("SELECT range AS k FROM range(10) WHERE range > 100")
    assert rows.read_whole() == []
    rows.close()


def test_a_larger_result_is_read_batch_by_batch_and_loses_nothing() -> None:
    rows = _streamed("SELECT range AS k FROM range(10000)", batch_rows=WHOLE_ROWS // 2)
    assert rows.read_whole() is None
    seen = []
    while (batch := rows.next_batch()) is not None:
        seen += batch.column(0).to_pylist()
    assert seen == list(range(10000))
    rows.close()


QUERIES = ["SELECT 1 AS a, 2 AS a, 'x' AS b",
           "SELECT [1, 2] AS l, {'x': 1} AS s, map([1], [2]) AS m, 1::HUGEINT AS h, INTERVAL 1 DAY AS i, "
           "1.5::DECIMAL(4,2) AS d, TIMESTAMP '2024-01-02 03:04:05' AS t, '{}'::JSON AS j",
           "SELECT count(*), sum(x) FROM range(3) AS r(x)"]


@pytest.fixture(params=["one_pass", "bind_first", "public_api"])
def runner(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """The ways `open_result` runs a statement: DuckDB's runner, binding first, and the public API where
    the runner is missing; the fixture's value is `bind_first`."""
    if request.param == "public_api":
        monkeypatch.setattr(streamed_rows, "_SUBMIT", None)
    else:
        assert streamed_rows._SUBMIT is not None, "this DuckDB has no statement runner: every statement binds twice"
    return request.param == "bind_first"


@pytest.mark.parametrize("sql", QUERIES)
def test_description_is_what_binding_the_statement_says(sql: str, runner: bool) -> None:
    cur = duckdb.connect().cursor()
    relation = cur.sql(sql)
    expected = list(zip(relation.columns, [str(t) for t in relation.types], strict=True))
    opened = open_result(cur, sql, 100, bind_first=runner)
    assert opened.described == expected
    assert opened.reader().read_all().num_rows == 1


@pytest.mark.parametrize("sql", QUERIES)
def test_rows_fetched_as_tuples_are_executes(sql: str, runner: bool) -> None:
    cur = duckdb.connect().cursor()
    expected = cur.execute(sql).fetchall()
    assert open_result(cur, sql, 100, bind_first=runner).fetchall() == expected


def test_a_result_bound_first_runs_once(runner: bool) -> None:
    """Bound first (as aggregates are, `query.reads.aggregates`), a result whose types cannot stream (a
    HUGEINT sum) runs once, as tuples: described by DuckDB's runner, it would have run already."""
    con = duckdb.connect()
    calls: list[int] = []

    def counted(x: int) -> int:
        calls.append(x)
        return x

    con.create_function("counted", counted, ["BIGINT"], "BIGINT")
    cur = con.cursor()
    opened = open_result(cur, "SELECT sum(counted(range)::HUGEINT) AS s FROM range(1000)", 100, bind_first=True)
    assert opened.described == [("s", "HUGEINT")]
    assert opened.fetchall() == [(499500,)]
    assert len(calls) == 1000


def test_rows_are_produced_as_read_not_before(runner: bool) -> None:
    """The statement runs as batches are taken: 50M rows cost nothing until read, and a reader closed
    early leaves the cursor free for the next statement."""
    cur = duckdb.connect().cursor()
    opened = open_result(cur, "SELECT range AS k, range * 2 AS v FROM range(50000000)", 1000, bind_first=runner)
    assert opened.described == [("k", "BIGINT"), ("v", "BIGINT")]
    reader = opened.reader()
    first = reader.read_next_batch()
    assert first.num_rows <= 2048 and first.column(0).to_pylist()[:3] == [0, 1, 2]
    reader.close()
    assert cur.execute("SELECT 42").fetchall() == [(42,)]


def test_an_error_is_duckdbs(runner: bool) -> None:
    cur = duckdb.connect().cursor()
    with pytest.raises(duckdb.CatalogException):
        open_result(cur, "SELECT * FROM no_such_table", 100, bind_first=runner)
