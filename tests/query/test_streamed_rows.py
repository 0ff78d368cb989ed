"""query.streamed_rows.StreamedRows: a result's batches as the wire takes them; a small one read whole."""

from __future__ import annotations

import duckdb

from query.context import SqlFailure
from query.streamed_rows import WHOLE_ROWS, StreamedRows


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
