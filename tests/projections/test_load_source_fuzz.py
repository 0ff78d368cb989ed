"""Hostile records for routine load's parsing (`load_batch`): arbitrary bytes, arbitrary JSON values,
CSV lines with random separators, under job definitions the server would accept. Every record ends up
a row, a bad row with a reason, or unselected — never an exception — and the counts add up."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from projections.load_source import LoadedBatch, load_batch, plan_load, records_table
from projections.projection import Projection
from projections.rows import RowsRejected
from projections.state import TableState
from schemas import events as ev
from schemas.envelope import wrap_event
from schemas.model import Column, Distribution, LoadColumn, Partition, RoutineLoadSpec, TableSchema
from tests.time_bound import within

_BOUND_S = 10.0
_FIELDS = ("id", "name", "score")


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> TableState:
    projection = Projection(tmp_path_factory.mktemp("load_fuzz") / "p")
    columns = (Column(unique_id=1, name="id", type="INT", is_key=True, nullable=False),
               Column(unique_id=2, name="name", type="VARCHAR(8)"),
               Column(unique_id=3, name="score", type="DOUBLE"))
    events = [
        ev.DatabaseCreated(db_id=1, name="d"),
        ev.TableCreated(db_id=1, table_id=1, name="t", keys_model="DUPLICATE",
                        table_schema=TableSchema(schema_version=1, columns=columns), partition_kind="UNPARTITIONED",
                        partitions=(Partition(partition_id=1, name="t", buckets=2),),
                        distribution=Distribution(columns=("id",)), next_column_id=4),
    ]
    for offset, event in enumerate(events):
        projection.apply(wrap_event(event, table_id=None, commit_ts_ms=0, command_id=None), "e", 0, offset)
    projection.flush()
    found = projection.tables[1]
    projection.close()
    return found


@pytest.fixture(scope="module")
def cur() -> duckdb.DuckDBPyConnection:
    return duckdb.connect()


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8)
_FIELD_VALUE = st.one_of(st.none(), st.integers(-2**70, 2**70), st.floats(), st.booleans(), st.text(max_size=12),
                         st.sampled_from(["1", "2.5", "-0", "1e400", "NaN", "\\N", "", " 3 ", "0x10", "字字字"]), _JSON)
_OBJECT = st.fixed_dictionaries({}, optional={name: _FIELD_VALUE for name in (*_FIELDS, "s", "k", "extra")})


def _json_record(value: Any) -> bytes:
    return json.dumps(value, allow_nan=True).encode()


_JSON_RECORDS = st.one_of(
    st.none(),
    st.binary(max_size=40),
    _JSON.map(_json_record),
    _OBJECT.map(_json_record),
    st.lists(_OBJECT, max_size=3).map(_json_record),
    st.fixed_dictionaries({"data": _OBJECT}).map(_json_record),
    _OBJECT.map(lambda o: _json_record(o)[: max(1, len(_json_record(o)) // 2)]),  # cut short
)

_SEPARATORS = st.one_of(st.sampled_from([",", "\t", "|", "||", "\x01", ";", " ", "\\N", "'", '"', "%", "_", "\\"]),
                        st.text(min_size=1, max_size=3))


def _csv_record(separator: str) -> st.SearchStrategy[bytes | None]:
    line = st.lists(st.one_of(st.text(max_size=8), st.sampled_from(["\\N", "1", "2.5", "abc", ""])),
                    min_size=0, max_size=5).map(separator.join)
    return st.one_of(
        st.none(),
        st.binary(max_size=30),
        st.tuples(line, st.sampled_from(["", "\n", "\r\n", "\r"])).map(lambda t: (t[0] + t[1]).encode()),
        line.map(lambda text: text.encode("utf-16")),
    )


_WHERE = st.sampled_from([None, '"id" > 1', '"score" < 0.5 OR "name" IS NULL', '"name" LIKE \'%a%\''])


@st.composite
def _job(draw: st.DrawFn) -> tuple[RoutineLoadSpec, list[bytes | None]]:
    fmt = draw(st.sampled_from(["json", "csv"]))
    options: dict[str, Any] = {"format": fmt, "strict_mode": draw(st.booleans()), "where_sql": draw(_WHERE)}
    if draw(st.booleans()):
        # A derived column whose expression fails on some records (pinned to them, not the batch).
        options["columns"] = (LoadColumn(name="id"), LoadColumn(name="name"), LoadColumn(name="s"),
                              LoadColumn(name="score", expr="CAST(s AS DOUBLE)", expr_sql='CAST("s" AS DOUBLE)'))
    if fmt == "csv":
        options["column_separator"] = draw(_SEPARATORS)
        records = draw(st.lists(_csv_record(options["column_separator"]), max_size=12))
    else:
        options["strip_outer_array"] = draw(st.booleans())
        options["json_root"] = draw(st.sampled_from([None, None, "$.data", "$"]))
        if draw(st.booleans()):
            count = 3  # the source fields: id, name, score or (with the mapping) id, name, s
            options["jsonpaths"] = tuple(draw(st.lists(st.sampled_from(["$.id", "$.k", "$.name", "$.s", "$.score",
                                                                        "$.extra[0]", "$.a.b", '$."id"']),
                                                       min_size=count, max_size=count)))
        records = draw(st.lists(_JSON_RECORDS, max_size=12))
    spec = RoutineLoadSpec(broker_list="b", topic="t", start_offsets={0: -2}, **options)
    return spec, records


def _accepted(cur: duckdb.DuckDBPyConnection, table: TableState, spec: RoutineLoadSpec) -> Any:
    """The plan, if the server would accept the job: it plans it and runs it on an empty batch."""
    try:
        plan = plan_load(spec, table)
        load_batch(cur, table, spec, plan, records_table([], [], []))
    except (RowsRejected, duckdb.Error):
        return None
    return plan


def _check(cur: duckdb.DuckDBPyConnection, table: TableState, spec: RoutineLoadSpec,
           records: list[bytes | None]) -> LoadedBatch:
    plan = _accepted(cur, table, spec)
    assert plan is not None, f"the job would be refused: {spec}"
    offsets = list(range(len(records)))
    with within(_BOUND_S, (spec, records)):
        batch = load_batch(cur, table, spec, plan, records_table([0] * len(records), offsets, records))
    reasons = batch.bad["__reason"].to_pylist()
    assert all(isinstance(r, str) and r for r in reasons), reasons
    bad_offsets = batch.bad["__o"].to_pylist()
    row_offsets = batch.rows["__o"].to_pylist() if "__o" in batch.rows.column_names else None
    assert set(bad_offsets) <= set(offsets)
    assert batch.unselected >= 0
    if row_offsets is not None:
        assert set(row_offsets) <= set(offsets)
    if not spec.strip_outer_array:
        # One record is one row: it is loaded, bad (once) or unselected, never two of these, never lost.
        assert batch.rows.num_rows + batch.bad.num_rows + batch.unselected == len(records), (
            batch.rows.num_rows, batch.bad.num_rows, batch.unselected, len(records))
        assert max(Counter(bad_offsets).values(), default=1) == 1
        if row_offsets is not None:
            assert not set(row_offsets) & set(bad_offsets)
    # The rows that loaded are typed rows of the table: ids present, names within VARCHAR(8) bytes.
    if batch.rows.num_rows:
        ids = batch.rows["c1"].to_pylist()
        assert all(isinstance(i, int) for i in ids), ids
        assert all(n is None or len(n.encode()) <= 8 for n in batch.rows["c2"].to_pylist())
    return batch


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.filter_too_much])
@given(_job())
def test_every_record_is_a_row_a_bad_row_or_unselected(table: TableState, cur: duckdb.DuckDBPyConnection,
                                                       job: tuple[RoutineLoadSpec, list[bytes | None]]) -> None:
    spec, records = job
    assume(_accepted(cur, table, spec) is not None)
    _check(cur, table, spec, records)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.none(), st.binary(max_size=60)), min_size=1, max_size=20),
       st.sampled_from(["json", "csv"]), _SEPARATORS)
def test_arbitrary_bytes_records(table: TableState, cur: duckdb.DuckDBPyConnection, records: list[bytes | None],
                                 fmt: str, separator: str) -> None:
    spec = RoutineLoadSpec(broker_list="b", topic="t", start_offsets={0: -2}, format=fmt,  # type: ignore[arg-type]
                           column_separator=separator)
    batch = _check(cur, table, spec, records)
    if fmt == "json":
        # Bytes that are no JSON object can never become a row.
        for value, offset in zip(records, range(len(records)), strict=True):
            try:
                is_object = value is not None and isinstance(json.loads(value), dict)
            except (ValueError, RecursionError):
                is_object = False
            if not is_object:
                assert offset in batch.bad["__o"].to_pylist(), value


@pytest.mark.parametrize("separator", ["\x00", "\n", "'", "\\", "a", "1", "\u202e", "\\N"])
def test_odd_separators_split_or_explain(table: TableState, cur: duckdb.DuckDBPyConnection, separator: str) -> None:
    spec = RoutineLoadSpec(broker_list="b", topic="t", start_offsets={0: -2}, format="csv",
                           column_separator=separator)
    records: list[bytes | None] = [separator.join(["1", "ab", "2.5"]).encode(), b"", b"\xff", None,
                                   separator.join(["x"] * 7).encode()]
    if _accepted(cur, table, spec) is None:
        return  # the server refuses the job at CREATE; nothing to load
    _check(cur, table, spec, records)


def test_deeply_nested_and_huge_json_records(table: TableState, cur: duckdb.DuckDBPyConnection) -> None:
    records: list[bytes | None] = [b"[" * 50_000, b'{"id":' * 20_000 + b"1" + b"}" * 20_000,
                                   b'{"id": ' + b"9" * 5000 + b"}", b'{"id": 1, "name": "' + b"x" * 100_000 + b'"}',
                                   b'{"id": 1e999}', b'{"id": NaN}', b'{"id": 2, "id": 3}', b'{"id": 4}']
    spec = RoutineLoadSpec(broker_list="b", topic="t", start_offsets={0: -2}, strict_mode=True)
    batch = _check(cur, table, spec, records)
    assert batch.rows["c1"].to_pylist()[-1:] == [4]


def test_a_job_definition_the_server_refuses_never_reaches_records(table: TableState,
                                                                   cur: duckdb.DuckDBPyConnection) -> None:
    """The contract the tests above rely on: a definition that breaks on an empty batch is refused."""
    spec = RoutineLoadSpec(broker_list="b", topic="t", start_offsets={0: -2}, where_sql='"nope" > 1')
    assert _accepted(cur, table, spec) is None
