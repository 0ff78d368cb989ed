"""Routine-load record parsing without Kafka: JSON and CSV records into typed rows, bad records
with their reason, the COLUMNS mapping and the WHERE filter."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from projections.load_source import load_batch, plan_load, records_table
from projections.projection import Projection
from projections.rows import RowsRejected
from projections.state import TableState
from schemas import events as ev
from schemas.envelope import wrap_event
from schemas.events import Event
from schemas.model import Column, Distribution, KeysModel, LoadColumn, Partition, RoutineLoadSpec, TableSchema
from storage.paths import HIDDEN_DELETE_SIGN


def _table(tmp_path: Path, keys_model: KeysModel = "DUPLICATE") -> TableState:
    projection = Projection(tmp_path / "p")
    columns = (Column(unique_id=1, name="id", type="INT", is_key=True, nullable=False),
               Column(unique_id=2, name="name", type="VARCHAR(8)"),
               Column(unique_id=3, name="score", type="DOUBLE"))
    events = [
        ev.DatabaseCreated(db_id=1, name="d"),
        ev.TableCreated(db_id=1, table_id=1, name="t", keys_model=keys_model,
                        table_schema=TableSchema(schema_version=1, columns=columns), partition_kind="UNPARTITIONED",
                        partitions=(Partition(partition_id=1, name="t", buckets=2),),
                        distribution=Distribution(columns=("id",)), next_column_id=4),
    ]
    return folded_table(projection, events)


def folded_table(projection: Projection, events: list[Event]) -> TableState:
    """Table 1 of `projection` once `events` are folded into it (the projection is closed)."""
    for offset, event in enumerate(events):
        projection.apply(wrap_event(event, table_id=None, commit_ts_ms=0, command_id=None), "e", 0, offset)
    projection.flush()
    table = projection.tables[1]
    projection.close()
    return table


def _spec(**kw: object) -> RoutineLoadSpec:
    return RoutineLoadSpec(broker_list="b", topic="t", start_offsets={0: -2}, **kw)  # type: ignore[arg-type]


def _run(table: TableState, spec: RoutineLoadSpec, values: list[bytes | None]):  # noqa: ANN202
    cur = duckdb.connect()
    return load_batch(cur, table, spec, plan_load(spec, table),
                      records_table([0] * len(values), list(range(len(values))), values))


def _rows(batch) -> list[tuple]:  # noqa: ANN001
    return sorted(zip(batch.rows["c1"].to_pylist(), batch.rows["c2"].to_pylist(), batch.rows["c3"].to_pylist(),
                      strict=True))


def test_json_records_become_rows_and_bad_ones_carry_their_reason(tmp_path: Path) -> None:
    table = _table(tmp_path)
    batch = _run(table, _spec(strict_mode=True), [
        b'{"id": 1, "name": "a", "score": 1.5}', b'{"id": "2", "name": null}', b'{"id": oops', b"[1, 2]",
        b"\xff\xfe", None, b'{"id": "x"}', b'{"name": "b"}', b'{"id": 3, "name": "waytoolongname"}'])
    assert _rows(batch) == [(1, "a", 1.5), (2, None, None)]
    reasons = dict(zip(batch.bad["__o"].to_pylist(), batch.bad["__reason"].to_pylist(), strict=True))
    assert reasons == {
        2: "the record is not valid JSON", 3: "the record is a JSON array, not an object",
        4: "the record is not valid UTF-8", 5: "the record is empty (a tombstone)",
        6: "Incorrect value for column 'id' of type INT", 7: "Column 'id' cannot be null",
        8: "Data too long for column 'name' (VARCHAR(8), counted in bytes)"}
    assert set(batch.rows["__bucket"].to_pylist()) <= {0, 1}


def test_without_strict_mode_a_value_that_does_not_convert_is_null(tmp_path: Path) -> None:
    table = _table(tmp_path)
    batch = _run(table, _spec(), [b'{"id": 1, "score": "high"}'])
    assert _rows(batch) == [(1, None, None)] and batch.bad.num_rows == 0


def test_csv_records_with_nulls_and_a_wrong_column_count(tmp_path: Path) -> None:
    table = _table(tmp_path)
    batch = _run(table, _spec(format="csv", column_separator=","), [b"1,a,2.5\n", b"2,\\N,\\N", b"3,b", b"4,c,1,9"])
    assert _rows(batch) == [(1, "a", 2.5), (2, None, None)]
    assert batch.bad["__reason"].to_pylist() == [
        "the record has 2 columns separated by ',', the job expects 3",
        "the record has 4 columns separated by ',', the job expects 3"]


def test_columns_mapping_jsonpaths_and_where(tmp_path: Path) -> None:
    table = _table(tmp_path)
    spec = _spec(columns=(LoadColumn(name="id"), LoadColumn(name="raw"),
                          LoadColumn(name="score", expr="raw * 2", expr_sql='CAST("raw" AS DOUBLE) * 2')),
                 jsonpaths=("$.k", "$.v.x"), where_sql='"id" > 1')
    batch = _run(table, spec, [b'{"k": 1, "v": {"x": 1}}', b'{"k": 2, "v": {"x": 5}}', b'{"k": 3}'])
    assert _rows(batch) == [(2, None, 10.0), (3, None, None)]
    assert batch.unselected == 1


def test_strip_outer_array_makes_many_rows_of_one_record(tmp_path: Path) -> None:
    table = _table(tmp_path)
    batch = _run(table, _spec(strip_outer_array=True), [b'[{"id": 1}, {"id": 2}, 7]', b'{"id": 3}', b"[]"])
    assert _rows(batch) == [(1, None, None), (2, None, None)]
    assert sorted(batch.bad["__reason"].to_pylist()) == [
        "an element of the outer array is a JSON ubigint, not an object",
        "strip_outer_array is set but the record is a JSON object"]


def test_an_expression_that_fails_on_one_record_spares_the_others(tmp_path: Path) -> None:
    table = _table(tmp_path)
    spec = _spec(columns=(LoadColumn(name="id"), LoadColumn(name="s"),
                          LoadColumn(name="score", expr="CAST(s AS DOUBLE)", expr_sql='CAST("s" AS DOUBLE)')))
    batch = _run(table, spec, [b'{"id": 1, "s": "1.5"}', b'{"id": 2, "s": "abc"}', b'{"id": 3, "s": "2"}'])
    assert _rows(batch) == [(1, None, 1.5), (3, None, 2.0)]
    assert batch.bad["__o"].to_pylist() == [1]
    assert "COLUMNS or WHERE failed" in batch.bad["__reason"][0].as_py()


def test_a_mapping_that_names_no_such_column_is_refused(tmp_path: Path) -> None:
    table = _table(tmp_path)
    with pytest.raises(RowsRejected, match="Unknown column 'nope'"):
        plan_load(_spec(columns=(LoadColumn(name="id"), LoadColumn(name="nope", expr="1", expr_sql="1"))), table)
    with pytest.raises(RowsRejected, match="doesn't have a default value"):
        plan_load(_spec(columns=(LoadColumn(name="name"),)), table)
    with pytest.raises(RowsRejected, match="jsonpaths has 1 paths"):
        plan_load(_spec(jsonpaths=("$.a",)), table)


def test_a_delete_sign_field_deletes_keys_of_a_unique_table(tmp_path: Path) -> None:
    # CDC through a routine load: the records carry __DORIS_DELETE_SIGN__ (1: the key goes), as
    # Doris' hidden column; before, the field was silently dropped and every record upserted.
    table = _table(tmp_path, "UNIQUE")
    spec = _spec(columns=(LoadColumn(name="id"), LoadColumn(name="name"), LoadColumn(name="__DORIS_DELETE_SIGN__")))
    batch = _run(table, spec, [b'{"id": 1, "name": "a", "__DORIS_DELETE_SIGN__": 0}',
                               b'{"id": 2, "name": "b", "__DORIS_DELETE_SIGN__": 1}', b'{"id": 3, "name": "c"}'])
    signs = dict(zip(batch.rows["c1"].to_pylist(), batch.rows[HIDDEN_DELETE_SIGN].to_pylist(), strict=True))
    assert signs == {1: False, 2: True, 3: False}
    with pytest.raises(RowsRejected, match="only a UNIQUE KEY table takes deletes"):
        plan_load(spec, _table(tmp_path / "dup"))
