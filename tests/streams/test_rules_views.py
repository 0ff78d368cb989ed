"""The sequencer's decisions on views: one namespace and one id sequence with tables, OR REPLACE
keeping the view's id, Doris' errors for the wrong kind of object, and the fold surviving a reopen."""

from __future__ import annotations

from pathlib import Path

from projections.projection import Projection
from schemas import commands as cmd
from schemas import events as ev
from schemas.errors import ErrorCode
from schemas.model import Column, Distribution, ViewColumn
from tests.streams.ruleskit import fold, rejected

COLUMNS = (ViewColumn(name="k", type="INT", source="k"),)
DEFINITION = "SELECT k FROM `internal`.`d`.`t`"


def _view(name: str = "v", definition: str = DEFINITION, *, or_replace: bool = False) -> cmd.CreateView:
    return cmd.CreateView(db="d", name=name, definition=definition, columns=COLUMNS, or_replace=or_replace)


def test_a_view_takes_the_next_table_id_and_its_name(state: Projection) -> None:
    created = fold(state, _view(), 2000)
    assert isinstance(created, ev.ViewCreated) and created.view_id == 2  # the fixture's table is 1
    table = fold(state, cmd.CreateTable(db="d", name="t2", keys_model="DUPLICATE",
                                        columns=(Column(unique_id=1, name="k", type="INT", is_key=True),),
                                        partitions=(cmd.NewPartition(name="t2", buckets=1),),
                                        distribution=Distribution(columns=("k",), buckets=1)), 2001)
    assert isinstance(table, ev.TableCreated) and table.table_id == 3
    rejected(state, _view("t"), 2002, ErrorCode.TABLE_EXISTS_ERROR, "Table 't' already exists")
    rejected(state, _view("V"), 2002, ErrorCode.TABLE_EXISTS_ERROR, "Table 'V' already exists")
    rejected(state, cmd.CreateTable(db="d", name="v", keys_model="DUPLICATE",
                                    columns=(Column(unique_id=1, name="k", type="INT", is_key=True),),
                                    partitions=(cmd.NewPartition(name="v", buckets=1),),
                                    distribution=Distribution(columns=("k",), buckets=1)), 2002,
             ErrorCode.TABLE_EXISTS_ERROR, "already exists")
    rejected(state, cmd.RenameTable(table_id=1, name="v"), 2002, ErrorCode.TABLE_EXISTS_ERROR, "already exists")


def test_or_replace_and_alter_keep_the_id(state: Projection) -> None:
    fold(state, _view(), 2000)
    replaced = fold(state, _view(definition="SELECT 1 AS k", or_replace=True), 2001)
    assert isinstance(replaced, ev.ViewAltered) and replaced.view_id == 2
    altered = fold(state, cmd.AlterView(db="d", name="v", definition="SELECT 2 AS k", columns=COLUMNS), 2002)
    assert isinstance(altered, ev.ViewAltered)
    view = state.views[2]
    assert (view.definition, view.created_ts_ms, view.altered_ts_ms) == ("SELECT 2 AS k", 2000, 2002)
    rejected(state, cmd.AlterView(db="d", name="t", definition="SELECT 1", columns=COLUMNS), 2003,
             ErrorCode.WRONG_OBJECT, "'d.t' is not VIEW")


def test_drop_view_and_drop_database(state: Projection, tmp_path: Path) -> None:
    fold(state, _view(), 2000)
    fold(state, _view("w"), 2001)
    rejected(state, cmd.DropView(db="d", name="t"), 2002, ErrorCode.WRONG_OBJECT,
             "'d.t' is not VIEW. Use 'DROP TABLE d.t'.")
    rejected(state, cmd.DropView(db="d", name="nope"), 2002, ErrorCode.NO_SUCH_TABLE, "'d.nope' doesn't exist")
    fold(state, cmd.DropView(db="d", name="v"), 2002)
    assert [v.name for v in state.views.values()] == ["w"]
    state.close()
    reopened = Projection(tmp_path / "seq")  # the fold is durable: views load back from RocksDB
    assert [v.name for v in reopened.views.values()] == ["w"]
    fold(reopened, cmd.DropDatabase(name="d"), 2003)
    assert reopened.views == {}
    reopened.close()
