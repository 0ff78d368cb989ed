"""Literal rows prepared in Python (projections.literal_rows) against the DuckDB path
(projections.rows.prepare_rows) on the same rows: the same table (values, Arrow types, `__seq`,
partitions, buckets) whenever the Python path takes them, and None whenever the DuckDB path fails them."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from projections import rows
from projections.literal_rows import prepare_literal_rows
from projections.projection import Projection
from projections.state import TableState
from query.parser.literal_insert import LiteralRows, parse_literal_insert
from schemas import events as ev
from schemas.model import Column, Distribution, Partition, PartitionBound, TableSchema
from tests.projections.test_load_source import folded_table

_COLUMNS = (
    Column(unique_id=1, name="k", type="BIGINT", is_key=True, nullable=False),
    Column(unique_id=2, name="i", type="INT"),
    Column(unique_id=3, name="ti", type="TINYINT"),
    Column(unique_id=4, name="d", type="DECIMAL(6,2)"),
    Column(unique_id=5, name="dt", type="DATE"),
    Column(unique_id=6, name="ts", type="DATETIME"),
    Column(unique_id=7, name="ts3", type="DATETIME(3)"),
    Column(unique_id=8, name="s", type="VARCHAR(4)"),
    Column(unique_id=9, name="txt", type="STRING"),
    Column(unique_id=10, name="b", type="BOOLEAN"),
    Column(unique_id=11, name="f", type="DOUBLE"),
    Column(unique_id=12, name="nn", type="SMALLINT", nullable=False),
)
# Literals each column may get: some convert, some do not (the DuckDB path's errors), some this path
# leaves to DuckDB (text it would have to parse as DuckDB does).
_VALUES = {
    "k": ["1", "-5", "9223372036854775807", "'12'", "NULL", "2.5"],
    "i": ["7", "-2147483648", "2147483648", "'42'", "'x'", "NULL", "1e3"],
    "ti": ["127", "128", "-128", "NULL", "TRUE"],
    "d": ["1.5", "-1234.565", "1234.5649999999999999999999999999999",
          "1234.56", "12345.6", "-0.005", "0.015", "1.125", "3", "'2.50'", "'2.505'", "NULL", "1e2"],
    "dt": ["'2024-02-29'", "'2023-02-29'", "'20240105'", "'2024-01-05 10:00:00'", "NULL", "5"],
    "ts": ["'2024-01-05 10:11:12'", "'9999-12-31 23:59:59.9'", "'0001-01-01 00:00:00'",
           "'2024-01-05 10:11:12.5'", "'2024-01-05 23:59:59.7'", "'2024-01-05'",
           "'2024-01-05T10:11:12'", "NULL"],
    "ts3": ["'2024-01-05 10:11:12.1234'", "'2024-01-05 10:11:12.9995'", "'2024-01-05 10:11:12'", "NULL"],
    "s": ["'ab'", "'abcd'", "'abcde'", "'中文'", "'中文字'", "12", "12345", "NULL", "''"],
    "txt": ["'it''s'", "'x'", "-3", "NULL", "TRUE"],
    "b": ["TRUE", "false", "NULL", "1"],
    "f": ["1.5e0", "2", "-7", "NULL", "0.1"],
    "nn": ["1", "NULL", "40000"],
}


def _table(tmp_path: Path, *, keys_model: str = "DUPLICATE", partition_kind: str = "UNPARTITIONED",
           partition_column: str | None = None, bounds: tuple[PartitionBound, ...] = (PartitionBound(),),
           buckets: int = 1, columns: tuple[Column, ...] = _COLUMNS,
           distribution: tuple[str, ...] = ("k",)) -> TableState:
    projection = Projection(tmp_path / f"p{len(list(tmp_path.iterdir()))}")
    partitions = tuple(Partition(partition_id=10 + i, name=f"p{i}", bound=b, buckets=buckets)
                       for i, b in enumerate(bounds))
    events = [
        ev.DatabaseCreated(db_id=1, name="d"),
        ev.TableCreated(db_id=1, table_id=1, name="t", keys_model=keys_model,  # type: ignore[arg-type]
                        table_schema=TableSchema(schema_version=1, columns=columns),
                        partition_kind=partition_kind,  # type: ignore[arg-type]
                        partition_columns=(partition_column,) if partition_column else (),
                        partitions=partitions, distribution=Distribution(columns=distribution),
                        next_column_id=len(columns) + 1),
    ]
    return folded_table(projection, events)


def _literals(names: list[str], values: list[list[str]]) -> LiteralRows | None:
    """The rows as the literal INSERT path cuts them; None for a statement it leaves to the parser (a
    column mixing strings with numbers), which never reaches this path."""
    sql = f"INSERT INTO t ({', '.join(names)}) VALUES " + ", ".join("(" + ", ".join(row) + ")" for row in values)
    found = parse_literal_insert(sql)
    return None if found is None else found.rows


def _both(table: TableState, names: list[str], values: list[list[str]]) -> tuple[pa.Table | None, pa.Table | str]:
    """(the Python path's rows, the DuckDB path's rows or its error)."""
    literals = _literals(names, values)
    assert literals is not None
    targets = [c for name in names for c in table.schema_now.columns if c.name == name]
    cur = duckdb.connect()
    cur.register("v", literals.data)
    try:
        expected: pa.Table | str = rows.prepare_rows(cur, table, literals.select_sql("v"), targets)
    except (rows.RowsRejected, duckdb.Error) as exc:
        expected = f"error: {exc}"
    fast = prepare_literal_rows(table, [c.to_pylist() for c in literals.data.columns], literals.duck_types, targets,
                                duckdb.connect)
    return fast, expected


def _same(fast: pa.Table | None, expected: pa.Table | str) -> None:
    if isinstance(expected, str):
        assert fast is None, expected
    elif fast is not None:
        assert fast.schema == expected.schema
        assert fast.to_pylist() == expected.to_pylist()


_NAMES = [c.name for c in _COLUMNS]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(*(st.sampled_from(_VALUES[n]) for n in _NAMES)), min_size=1, max_size=3),
       st.sampled_from(["DUPLICATE", "UNIQUE"]))
def test_every_type_is_prepared_as_duckdb_prepares_it(tmp_path_factory: pytest.TempPathFactory,
                                                      values: list[tuple[str, ...]], keys_model: str) -> None:
    assume(_literals(_NAMES, [list(v) for v in values]) is not None)
    table = _table(tmp_path_factory.mktemp("t"), keys_model=keys_model)
    _same(*_both(table, _NAMES, [list(v) for v in values]))


def test_a_plain_row_is_taken_and_equals_the_duckdb_path(tmp_path: Path) -> None:
    table = _table(tmp_path)
    row = ["1", "7", "-128", "1.125", "'2024-02-29'", "'2024-01-05 23:59:59.7'", "'2024-01-05 10:11:12.9995'",
           "'中'", "'it''s'", "TRUE", "2", "3"]
    fast, expected = _both(table, _NAMES, [row, ["2", *["NULL"] * 10, "4"]])
    assert fast is not None and not isinstance(expected, str)
    _same(fast, expected)
    assert fast.column("c6").to_pylist()[0].isoformat() == "2024-01-06T00:00:00"  # rounded half up
    assert fast.column("__seq").to_pylist() == [0, 1]


def test_columns_left_out_take_their_null_default(tmp_path: Path) -> None:
    table = _table(tmp_path)
    fast, expected = _both(table, ["k", "nn", "s"], [["5", "1", "'x'"]])
    assert fast is not None
    _same(fast, expected)
    # A NOT NULL column left out: the DuckDB path's error.
    assert _both(table, ["k", "s"], [["5", "'x'"]])[0] is None


@pytest.mark.parametrize(("kind", "column", "bounds", "keys"), [
    ("RANGE", "dt", (PartitionBound(upper=("2024-01-01",)), PartitionBound(lower=("2024-01-01",),
                                                                             upper=("2024-03-01",))),
     ["'2023-12-31'", "'2024-01-01'", "'2024-02-29'", "'2024-03-01'", "NULL"]),
    ("RANGE", "k", (PartitionBound(lower=("-10",), upper=("0",)), PartitionBound(lower=("0",), upper=("100",))),
     ["-10", "-1", "0", "99", "100", "-11"]),
    ("RANGE", "ts", (PartitionBound(upper=("2024-01-05 10:11:12.5",)),
                     PartitionBound(lower=("2024-01-05 10:11:12.5",))),
     ["'2024-01-05 10:11:12.4'", "'2024-01-05 10:11:12.5'", "'2024-01-05 10:11:12'", "NULL"]),
    ("LIST", "s", (PartitionBound(values=(("a",), ("b",))), PartitionBound(values=((None,), ("c",))),
                   PartitionBound(is_default=True)),
     ["'a'", "'b'", "'c'", "NULL", "'z'"]),
    ("LIST", "i", (PartitionBound(values=(("1",), ("2",))), PartitionBound(values=(("3",),))),
     ["1", "2", "3", "4", "NULL"]),
])
def test_partitions_are_chosen_as_duckdb_chooses_them(tmp_path: Path, kind: str, column: str,
                                                      bounds: tuple[PartitionBound, ...], keys: list[str]) -> None:
    table = _table(tmp_path, partition_kind=kind, partition_column=column, bounds=bounds)
    taken = 0
    for key in keys:
        names = ["k", "nn"] if column == "k" else ["k", "nn", column]
        values = [key, "1"] if column == "k" else ["1", "1", key]
        fast, expected = _both(table, names, [values])
        _same(fast, expected)
        taken += fast is not None
    assert taken >= len(keys) - 2  # most keys routed here (no partition: the DuckDB path's error)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(*(st.sampled_from(_VALUES[n][:3] + ["NULL"]) for n in _NAMES)), min_size=1, max_size=4),
       st.sampled_from([("k",), ("i", "s"), ("d",), ("dt", "ts", "ts3"), ("txt", "b", "f"), ("ti",)]),
       st.sampled_from([2, 3, 7]))
def test_buckets_are_chosen_by_duckdbs_hash(tmp_path_factory: pytest.TempPathFactory, values: list[tuple[str, ...]],
                                            distribution: tuple[str, ...], buckets: int) -> None:
    assume(_literals(_NAMES, [list(v) for v in values]) is not None)
    table = _table(tmp_path_factory.mktemp("t"), buckets=buckets, distribution=distribution)
    _same(*_both(table, _NAMES, [list(v) for v in values]))


def test_rows_of_a_bucketed_table_are_taken_and_spread(tmp_path: Path) -> None:
    table = _table(tmp_path, buckets=4, distribution=("k", "s"))
    values = [[str(k), "1", f"'{k % 3}'"] for k in range(40)]
    fast, expected = _both(table, ["k", "nn", "s"], values)
    assert fast is not None
    _same(fast, expected)
    assert len(set(fast.column("__bucket").to_pylist())) == 4


def test_what_this_path_does_not_take_is_left_to_duckdb(tmp_path: Path) -> None:
    # More than one bucket with no way to hash them (no DuckDB connection; a RANDOM distribution).
    literals = _literals(["k", "nn"], [["1", "1"]])
    assert literals is not None
    bucketed = _table(tmp_path, buckets=3)
    assert prepare_literal_rows(bucketed, [c.to_pylist() for c in literals.data.columns], literals.duck_types,
                                [bucketed.schema_now.columns[0], bucketed.schema_now.columns[-1]]) is None
    assert _both(_table(tmp_path, buckets=3, distribution=()), ["k", "nn"], [["1", "1"]])[0] is None
    # A column type converted only by DuckDB, and a default other than NULL.
    floaty = (*_COLUMNS[:1], Column(unique_id=2, name="r", type="FLOAT"))
    assert _both(_table(tmp_path, columns=floaty), ["k", "r"], [["1", "2"]])[0] is None
    defaulted = (*_COLUMNS[:1], Column(unique_id=2, name="n", type="INT", default="5"))
    assert _both(_table(tmp_path, columns=defaulted), ["k"], [["1"]])[0] is None
    # Partitioned on two columns.
    two = _table(tmp_path, partition_kind="RANGE", partition_column="k", bounds=(PartitionBound(),))
    two = two.model_copy(update={"partition_columns": ("k", "i")})
    assert _both(two, ["k", "nn"], [["1", "1"]])[0] is None


@pytest.mark.parametrize("name", [n for n in _NAMES if n not in ("k", "nn")])
def test_each_literal_of_each_type_alone_and_beside_another(tmp_path: Path, name: str) -> None:
    table = _table(tmp_path)
    taken = 0
    for value in _VALUES[name]:
        for other in ("NULL", _VALUES[name][0]):
            for values in ([["1", "1", value]], [["1", "1", value], ["2", "2", other]]):
                if _literals(["k", "nn", name], values) is None:
                    continue  # strings beside numbers: the parser's statement
                fast, expected = _both(table, ["k", "nn", name], values)
                _same(fast, expected)
                taken += fast is not None
    assert taken  # the common literals of every type are prepared here


@pytest.mark.parametrize("name", [n for n in _NAMES if n not in ("k", "nn")])
def test_each_literal_of_each_type_is_bucketed_as_duckdb_buckets_it(tmp_path: Path, name: str) -> None:
    table = _table(tmp_path, buckets=5, distribution=(name,))
    taken = 0
    for value in _VALUES[name]:
        values = [["1", "1", value], ["2", "2", "NULL"]]
        if _literals(["k", "nn", name], values) is None:
            continue
        fast, expected = _both(table, ["k", "nn", name], values)
        _same(fast, expected)
        taken += fast is not None
    assert taken
