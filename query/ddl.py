"""Statements that change the catalog: databases, tables, columns, partitions, properties."""

from __future__ import annotations

import dataclasses
from functools import partial

from projections.state import PartitionState, TableState
from query import unique_key
from query.context import Context, Done, SessionState, SqlFailure
from query.parser import statements as st
from query.reads import as_of_ms, live_tag
from query.table_definition import (
    SET_TYPE_UNIONS,
    PropertyCheck,
    auto_partitioning,
    build_columns,
    build_partitions,
    check_dynamic,
    check_properties,
    check_set_column,
    column_from_def,
    has_dynamic,
    partition_from_def,
    refuse_dynamic,
)
from schemas import commands as cmd
from schemas.errors import ErrorCode
from schemas.model import Column, Distribution, PartitionBound


def create_database(ctx: Context, session: SessionState, s: st.CreateDatabase) -> Done:
    if s.name.lower() == "information_schema" or ctx.projection.database_by_name(s.name):
        if s.if_not_exists:
            return Done()
        raise SqlFailure(ErrorCode.DB_CREATE_EXISTS, f"Can't create database '{s.name}'; database exists")
    ctx.propose(cmd.CreateDatabase(name=s.name))
    return Done(1)


def drop_database(ctx: Context, session: SessionState, s: st.DropDatabase) -> Done:
    if ctx.projection.database_by_name(s.name) is None:
        if s.if_exists:
            return Done()
        raise SqlFailure(ErrorCode.DB_DROP_EXISTS, f"Can't drop database '{s.name}'; database doesn't exist")
    ctx.propose(cmd.DropDatabase(name=s.name, force=s.force))
    if session.database and session.database.lower() == s.name.lower():
        session.database = None
    return Done()


def _name_taken(ctx: Context, db_id: int, name: str, *, if_not_exists: bool) -> bool:
    """Whether a CREATE of table `name` has nothing to do (IF NOT EXISTS and the name is taken); an error
    when the name is taken, by a table or a view (they share one namespace), without IF NOT EXISTS."""
    if ctx.projection.table_by_name(db_id, name) is None and ctx.projection.view_by_name(db_id, name) is None:
        return False
    if if_not_exists:
        return True
    raise SqlFailure(ErrorCode.TABLE_EXISTS_ERROR, f"Table '{name}' already exists")


def create_table(ctx: Context, session: SessionState, s: st.CreateTable) -> Done:
    _, db_name = ctx.database_id(session, s.table.db)
    db_id, _ = ctx.database_id(session, s.table.db)
    if _name_taken(ctx, db_id, s.table.name, if_not_exists=s.if_not_exists):
        return Done()
    keys_model, columns = build_columns(s)
    check = _property_check(ctx, session)
    properties = check(s.properties)
    unique_key.check_merge_on_write(keys_model, properties)
    hidden_sequence = unique_key.sequence_column(keys_model, columns, properties)
    if hidden_sequence is not None:
        columns = (*columns, hidden_sequence)
    dist = s.distribution
    buckets = (dist.buckets if dist and dist.buckets else 1)
    hash_cols = tuple(c.lower() for c in dist.columns) if dist and dist.kind == "HASH" else ()
    names = {c.name.lower() for c in columns}
    for name in hash_cols:
        if name not in names:
            raise SqlFailure(ErrorCode.BAD_FIELD_ERROR, f"Distribution column '{name}' does not exist")
    if keys_model != "DUPLICATE" and dist is not None and dist.kind == "RANDOM":
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{keys_model} KEY tables must be distributed by HASH")
    if not hash_cols and (dist is None or dist.kind == "HASH"):
        hash_cols = tuple(c.name.lower() for c in columns if c.is_key)
    kind, part_cols, partitions = build_partitions(s.partition, s.table.name, buckets, columns, check)
    by_name = {c.name.lower(): c for c in columns}
    for name in (*hash_cols, *part_cols):
        if by_name[name].type in SET_TYPE_UNIONS:  # a set value routes no row (Doris refuses it too)
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"column '{by_name[name].name}' of type "
                                                        f"{by_name[name].type} can not be a partition or "
                                                        "distribution column")
    check_dynamic(properties, kind, [by_name[c].type for c in part_cols])
    ctx.propose(cmd.CreateTable(
        db=db_name, name=s.table.name, keys_model=keys_model, columns=columns,  # type: ignore[arg-type]
        partition_kind=kind, partition_columns=part_cols, partitions=partitions,  # type: ignore[arg-type]
        distribution=Distribution(kind=dist.kind if dist else "HASH", columns=hash_cols, buckets=buckets),
        properties=properties, comment=s.comment or "", auto_partition=auto_partitioning(s.partition)))
    return Done()


def create_table_like(ctx: Context, session: SessionState, s: st.CreateTableLike) -> Done:
    """CREATE TABLE t2 LIKE t1 (Doris): t1's columns, keys, partitions (as they are now), distribution,
    properties and comment, and no rows."""
    source = ctx.table(session, s.source)
    db_id, db_name = ctx.database_id(session, s.table.db)
    if _name_taken(ctx, db_id, s.table.name, if_not_exists=s.if_not_exists):
        return Done()
    partitions = tuple(cmd.NewPartition(name=p.name, bound=p.partition.bound, buckets=p.partition.buckets,
                                        properties=dict(p.partition.properties))
                       for p in sorted(source.live_partitions(), key=lambda p: p.partition_id))
    ctx.propose(cmd.CreateTable(
        db=db_name, name=s.table.name, keys_model=source.keys_model, columns=source.schema_now.columns,
        partition_kind=source.partition_kind, partition_columns=source.partition_columns,  # type: ignore[arg-type]
        partitions=partitions, distribution=source.distribution, properties=dict(source.properties),
        comment=source.comment))
    return Done()


def create_table_clone(ctx: Context, session: SessionState, s: st.CreateTableClone) -> Done:
    """CREATE TABLE t2 CLONE t [AS OF …]: t's snapshot (now, at an instant, a commit or a tag) as t2's
    first commit, sharing t's files (the recycler keeps a file while any table holds it). t2 has t's
    schema, keys, partitions and distribution as they were then, and t's properties as they are now;
    its own history starts at its creation."""
    ctx.catch_up()
    source = ctx.table(session, s.source)
    db_id, db_name = ctx.database_id(session, s.table.db)
    if _name_taken(ctx, db_id, s.table.name, if_not_exists=s.if_not_exists):
        return Done()
    ts = None
    if isinstance(s.as_of, st.AsOfTag):  # a tag keeps its snapshot whatever the time-travel window says
        ts = live_tag(source, s.as_of.name, session).ts_ms
    elif s.as_of is not None:
        ts = as_of_ms(ctx, session, source, s.as_of)
    ctx.propose(cmd.CloneTable(db=db_name, name=s.table.name, source_table_id=source.table_id, source_ts_ms=ts),
                table_id=source.table_id)
    return Done()


def _property_check(ctx: Context, session: SessionState) -> PropertyCheck:
    """Properties checked in the session's time zone, naming only storage policies that exist."""
    return partial(check_properties, session=session, policies=ctx.projection.named["storage_policy"].keys())


def drop_table(ctx: Context, session: SessionState, s: st.DropTable) -> Done:
    db_id, db = ctx.database_id(session, s.table.db)
    if ctx.projection.view_by_name(db_id, s.table.name) is not None:  # IF EXISTS does not excuse it, as in Doris
        raise SqlFailure(ErrorCode.WRONG_OBJECT,
                         f"'{db}.{s.table.name}' is not TABLE. Use 'DROP VIEW {db}.{s.table.name}'.")
    try:
        table = ctx.table(session, s.table)
    except SqlFailure:
        if s.if_exists:
            return Done()
        raise
    ctx.propose(cmd.DropTable(table_id=table.table_id, force=s.force), table_id=table.table_id)
    return Done()


def recover_table(ctx: Context, session: SessionState, s: st.RecoverTable) -> Done:
    _, db_name = ctx.database_id(session, s.table.db)
    ctx.propose(cmd.RecoverTable(db=db_name, name=s.table.name))
    return Done()


def truncate_table(ctx: Context, session: SessionState, s: st.TruncateTable) -> Done:
    table = ctx.table(session, s.table)
    partitions = ([_partition(table, name).partition_id for name in s.partitions] if s.partitions
                  else [p.partition_id for p in table.live_partitions()])
    ctx.propose(cmd.CommitDelete(table_id=table.table_id, partition_ids=tuple(partitions), predicate=None,
                                 kind="truncate", description="TRUNCATE TABLE"), table_id=table.table_id)
    return Done()


def _partition(table: TableState, name: str) -> PartitionState:
    found = table.partition_by_name(name)
    if found is None:
        raise SqlFailure(ErrorCode.UNKNOWN_PARTITION, f"Unknown partition '{name}' in table '{table.name}'")
    return found


def alter_table(ctx: Context, session: SessionState, s: st.AlterTable) -> Done:
    table = ctx.table(session, s.table)
    replaces = [a for a in s.actions if isinstance(a, st.ReplaceWithTable)]
    if replaces:
        if len(s.actions) > 1:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "REPLACE WITH TABLE must be the only action of its ALTER TABLE")
        return _replace_with_table(ctx, session, table, st.QualifiedName(replaces[0].other, s.table.db), replaces[0])
    # Every action is checked before the first is proposed, so a refused one leaves no other applied.
    commands: list[cmd.Command] = []
    schema_actions = [a for a in s.actions if isinstance(a, st.AddColumn | st.AddColumns | st.DropColumn
                                                         | st.ModifyColumn | st.RenameColumn)]
    if schema_actions:
        columns = list(table.schema_now.columns)
        next_id = table.next_column_id
        for change in schema_actions:
            next_id = _apply_column_action(table, columns, change, next_id)
        commands.append(cmd.ChangeSchema(table_id=table.table_id, base_schema_version=table.schema_now.schema_version,
                                         columns=tuple(columns), next_column_id=next_id,
                                         description="; ".join(_describe(a) for a in schema_actions)))
    check = _property_check(ctx, session)
    merged = dict(table.properties)  # what the table's properties become, checked whole
    dynamic_changed = False
    for action in s.actions:
        if isinstance(action, st.SetTableProperties):
            changes = check(action.properties)
            unique_key.refuse_fixed_property_change(changes)
            merged.update(changes)
            dynamic_changed = dynamic_changed or has_dynamic(changes)
            commands.append(cmd.AlterTableProperties(table_id=table.table_id, changes=dict(changes)))
        elif isinstance(action, st.AddPartition):
            commands.extend(_add_partition(table, action, check))
        elif isinstance(action, st.DropPartition):
            if table.partition_by_name(action.name) is None and action.if_exists:
                continue
            commands.append(cmd.DropPartition(table_id=table.table_id,
                                              partition_name=_partition(table, action.name).name))
        elif isinstance(action, st.ModifyPartition):
            refuse_dynamic(action.properties, "a partition (MODIFY PARTITION)")
            ids = ([p.partition_id for p in table.live_partitions()] if action.all_partitions
                   else [_partition(table, n).partition_id for n in action.partitions])
            commands.append(cmd.ModifyPartitions(table_id=table.table_id, partition_ids=tuple(ids),
                                                 changes=dict(check(action.properties))))
        elif isinstance(action, st.RenameTable):
            commands.append(cmd.RenameTable(table_id=table.table_id, name=action.new_name))
    if dynamic_changed:
        check_dynamic(merged, table.partition_kind, [_column_type(table, c) for c in table.partition_columns])
    for command in commands:
        ctx.propose(command, table_id=table.table_id)
    return Done()


def _replace_with_table(ctx: Context, session: SessionState, table: TableState, other_name: st.QualifiedName,
                        action: st.ReplaceWithTable) -> Done:
    """ALTER TABLE a REPLACE WITH TABLE b (Doris): one commit gives b the name a and a the name b
    (swap) or drops a (recoverable; FORCE then purges it). Each table keeps its id, data and history;
    time travel follows the name (projections.names): `a` read at an instant before the replace
    reads the table that was `a` then."""
    other = ctx.table(session, other_name)
    ctx.propose(cmd.ReplaceTable(table_id=table.table_id, with_table_id=other.table_id, swap=action.swap),
                table_id=table.table_id)
    if action.force and not action.swap:
        ctx.propose(cmd.DropTable(table_id=table.table_id, force=True), table_id=table.table_id)
    return Done()


def _column_type(table: TableState, name: str) -> str:
    found = table.schema_now.column(name)
    return found.type if found is not None else "VARCHAR"


def _add_partition(table: TableState, action: st.AddPartition, check: PropertyCheck) -> list[cmd.Command]:
    if table.partition_kind == "UNPARTITIONED":
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"table '{table.name}' is not partitioned")
    if table.partition_by_name(action.partition.name) is not None:
        if action.if_not_exists:
            return []
        raise SqlFailure(ErrorCode.SAME_NAME_PARTITION, f"Duplicate partition name {action.partition.name}")
    if (action.partition.kind in ("IN", "DEFAULT")) != (table.partition_kind == "LIST"):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"table '{table.name}' is {table.partition_kind} partitioned; "
                                                    f"partition {action.partition.name} does not fit it")
    lower = None
    if action.partition.kind == "LESS_THAN":
        uppers = [p.partition.bound.upper for p in table.live_partitions() if p.partition.bound.upper]
        lower = max(uppers, key=_bound_order) if uppers else None
    buckets = (action.distribution.buckets if action.distribution and action.distribution.buckets
               else table.distribution.buckets)
    keys = tuple(c for c in (table.schema_now.column(n) for n in table.partition_columns) if c is not None)
    partition = partition_from_def(action.partition, buckets, lower, keys, check)
    _check_disjoint(table, partition.name, partition.bound)
    return [cmd.AddPartition(table_id=table.table_id, partition=partition)]


def _check_disjoint(table: TableState, name: str, bound: PartitionBound) -> None:
    """A row must have one partition: a new range may not overlap a live one, nor a new list
    repeat a value, nor a LIST table get a second DEFAULT partition (Doris refuses all three)."""
    if bound.lower is not None and bound.upper is not None and \
            _bound_order(bound.upper) <= _bound_order(bound.lower):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"partition {name}'s range [{_text(bound.lower)}, "
                                                    f"{_text(bound.upper)}) is empty: its upper bound must be "
                                                    f"above {_text(bound.lower)}")
    for p in table.live_partitions():
        other = p.partition.bound
        if table.partition_kind == "LIST":
            if bound.is_default and other.is_default:
                raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"partition {name}: partition {p.name} already is the "
                                                            "table's DEFAULT partition")
            shared = set(bound.values) & set(other.values)
            if shared:
                shown = sorted(", ".join("NULL" if v is None else v for v in value) for value in shared)
                raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"partition {name}: values "
                                 f"{'; '.join(shown)} already belong to partition {p.name}")
            continue
        below = bound.upper is not None and other.lower is not None and \
            _bound_order(bound.upper) <= _bound_order(other.lower)
        above = other.upper is not None and bound.lower is not None and \
            _bound_order(other.upper) <= _bound_order(bound.lower)
        if not (below or above):
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                             f"partition {name}'s range [{_text(bound.lower)}, {_text(bound.upper)}) "
                             f"intersects partition {p.name}'s [{_text(other.lower)}, {_text(other.upper)})")


def _text(values: tuple[str, ...] | None) -> str:
    return ", ".join(values) if values is not None else "unbounded"


def _bound_order(bound: tuple[str, ...]) -> tuple[tuple[int, float | str], ...]:
    """Orders partition bounds numerically when they are numbers, else as text (dates sort as text)."""
    key: list[tuple[int, float | str]] = []
    for value in bound:
        try:
            key.append((0, float(value)))
        except ValueError:
            key.append((1, value))
    return tuple(key)


def _find(columns: list[Column], name: str) -> int:
    for i, c in enumerate(columns):
        if c.name.lower() == name.lower():
            return i
    raise SqlFailure(ErrorCode.BAD_FIELD_ERROR, f"Unknown column '{name}'")


def _position(columns: list[Column], position: st.ColumnPosition | None, is_key: bool) -> int:
    if position is None:
        return (max((i for i, c in enumerate(columns) if c.is_key), default=-1) + 1) if is_key else len(columns)
    if position.first:
        return 0
    assert position.after is not None
    return _find(columns, position.after) + 1


_INTEGERS = ("TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT")
_STRINGS = ("CHAR", "VARCHAR", "STRING")


def _type_parts(doris_type: str) -> tuple[str, tuple[int, ...]]:
    base, _, params = doris_type.upper().partition("(")
    return base, tuple(int(p) for p in params.rstrip(")").split(",") if p.strip())


def _widens(old: str, new: str) -> bool:
    """Whether every value of type `old` is a value of type `new`, so rows written before a
    MODIFY COLUMN read back unchanged (Doris refuses the other changes too)."""
    (ob, op), (nb, np) = _type_parts(old), _type_parts(new)
    if ob in _INTEGERS and nb in _INTEGERS:
        return _INTEGERS.index(nb) >= _INTEGERS.index(ob)
    if ob in _STRINGS and nb in ("VARCHAR", "STRING"):
        return _length(nb, np) >= _length(ob, op)
    if ob in ("DECIMAL", "DECIMALV3") and nb in ("DECIMAL", "DECIMALV3"):
        (o_precision, o_scale), (n_precision, n_scale) = _precision_scale(op), _precision_scale(np)
        return n_scale >= o_scale and n_precision - n_scale >= o_precision - o_scale
    return (ob, op) == (nb, np) or (ob, nb) in (("FLOAT", "DOUBLE"), ("DATE", "DATETIME"))


def _length(base: str, params: tuple[int, ...]) -> int:
    """Bytes a string type holds (Doris: VARCHAR defaults to 65533, CHAR to 1, STRING to 2 GB)."""
    if base == "STRING":
        return 2**31
    return params[0] if params else 65533 if base == "VARCHAR" else 1


def _precision_scale(params: tuple[int, ...]) -> tuple[int, int]:
    return (params[0] if params else 9), (params[1] if len(params) > 1 else 0)


def _modified(table: TableState, old: Column, d: st.ColumnDef) -> Column:
    new = column_from_def(d, old.unique_id)
    if (new.auto_increment is None) != (old.auto_increment is None):
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"Can not add or remove AUTO_INCREMENT on column '{old.name}'")
    new = new.model_copy(update={"is_key": old.is_key, "aggregation": new.aggregation or old.aggregation,
                                 "auto_increment": old.auto_increment})
    check_set_column(new, table.keys_model)
    if not _widens(old.type, new.type):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Can not change column '{old.name}' from {old.type} to "
                                                    f"{new.type}: only widening changes keep existing rows")
    if old.nullable and not new.nullable:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Can not change column '{old.name}' from NULL to NOT NULL")
    if new.aggregation != old.aggregation:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Can not change the aggregation type of column '{old.name}' "
                                                    f"from {old.aggregation} to {new.aggregation}")
    if new.type != old.type and old.name.lower() in _layout_columns(table):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Can not change the type of column '{old.name}': it is a "
                                                    "partition or distribution column")
    return new


def _layout_columns(table: TableState) -> set[str]:
    """Columns rows are routed by; partitions and buckets refer to them by name."""
    return {c.lower() for c in (*table.partition_columns, *table.distribution.columns)}


def _apply_column_action(table: TableState, columns: list[Column], action: object, next_id: int) -> int:
    keys_model = table.keys_model
    if isinstance(action, st.AddColumns):
        for d in action.columns:
            next_id = _apply_column_action(table, columns, st.AddColumn(d), next_id)
        return next_id
    if isinstance(action, st.AddColumn):
        d = action.column
        if any(c.name.lower() == d.name.lower() for c in columns):
            raise SqlFailure(ErrorCode.DUP_FIELDNAME, f"Duplicate column name '{d.name}'")
        if d.auto_increment is not None:
            # The counter starts with the table; existing rows would have no values.
            raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, "Can not add an AUTO_INCREMENT column to an existing table")
        if keys_model == "AGGREGATE" and not d.is_key and not d.agg:
            # Doris: a column added to an Aggregate Key table without an aggregation type is a key
            # column (after the last key). Existing rows all take its default, so they merge as before.
            d = dataclasses.replace(d, is_key=True)
        if not d.nullable and d.default is None:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Column '{d.name}' is NOT NULL and has no DEFAULT, so "
                                                        "existing rows would have no value")
        column = column_from_def(d, next_id)
        check_set_column(column, keys_model)
        columns.insert(_position(columns, action.position, column.is_key), column)
        return next_id + 1
    if isinstance(action, st.DropColumn):
        i = _find(columns, action.name)
        unique_key.refuse_sequence_column_change(table, columns[i], "drop")
        if columns[i].is_key:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Can not drop key column '{columns[i].name}'")
        if columns[i].name.lower() in _layout_columns(table):
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Can not drop column '{columns[i].name}': it is a "
                                                        "partition or distribution column")
        if len(columns) == 1:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "Can not drop the only column of a table")
        del columns[i]
        return next_id
    if isinstance(action, st.ModifyColumn):
        i = _find(columns, action.column.name)
        unique_key.refuse_sequence_column_change(table, columns[i], "modify")
        new = _modified(table, columns[i], action.column)
        del columns[i]
        columns.insert(i if action.position is None else _position(columns, action.position, new.is_key), new)
        return next_id
    if isinstance(action, st.RenameColumn):
        i = _find(columns, action.old)
        unique_key.refuse_sequence_column_change(table, columns[i], "rename")
        unique_key.check_column_name(action.new)
        if any(c.name.lower() == action.new.lower() for c in columns):
            raise SqlFailure(ErrorCode.DUP_FIELDNAME, f"Duplicate column name '{action.new}'")
        if columns[i].name.lower() in _layout_columns(table):
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Can not rename column '{columns[i].name}': it is a "
                                                        "partition or distribution column")
        columns[i] = columns[i].model_copy(update={"name": action.new})
        return next_id
    raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"{type(action).__name__} is not supported")


def _describe(action: object) -> str:
    if isinstance(action, st.AddColumn):
        return f"ADD COLUMN {action.column.name}"
    if isinstance(action, st.AddColumns):
        return "ADD COLUMN " + ", ".join(c.name for c in action.columns)
    if isinstance(action, st.DropColumn):
        return f"DROP COLUMN {action.name}"
    if isinstance(action, st.ModifyColumn):
        return f"MODIFY COLUMN {action.column.name} {action.column.type}"
    if isinstance(action, st.RenameColumn):
        return f"RENAME COLUMN {action.old} {action.new}"
    return type(action).__name__
