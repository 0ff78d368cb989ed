"""Statements that change the catalog: databases, tables, columns, partitions, properties."""

from __future__ import annotations

from query.context import Context, Done, SessionState, SqlFailure
from query.parser import statements as st
from query.table_definition import (
    build_columns,
    build_partitions,
    check_properties,
    column_from_def,
    partition_from_def,
)
from schemas import commands as cmd
from schemas.errors import ErrorCode
from schemas.model import Column, Distribution


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


def create_table(ctx: Context, session: SessionState, s: st.CreateTable) -> Done:
    _, db_name = ctx.database_id(session, s.table.db)
    db_id, _ = ctx.database_id(session, s.table.db)
    if ctx.projection.table_by_name(db_id, s.table.name) is not None:
        if s.if_not_exists:
            return Done()
        raise SqlFailure(ErrorCode.TABLE_EXISTS_ERROR, f"Table '{s.table.name}' already exists")
    keys_model, columns = build_columns(s)
    properties = check_properties(s.properties)
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
    kind, part_cols, partitions = build_partitions(s.partition, s.table.name, buckets, columns)
    ctx.propose(cmd.CreateTable(
        db=db_name, name=s.table.name, keys_model=keys_model, columns=columns,  # type: ignore[arg-type]
        partition_kind=kind, partition_columns=part_cols, partitions=partitions,  # type: ignore[arg-type]
        distribution=Distribution(kind=dist.kind if dist else "HASH", columns=hash_cols, buckets=buckets),
        properties=properties, comment=s.comment or ""))
    return Done()


def drop_table(ctx: Context, session: SessionState, s: st.DropTable) -> Done:
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


def _partition(table, name: str):  # type: ignore[no-untyped-def]
    found = table.partition_by_name(name)
    if found is None:
        raise SqlFailure(ErrorCode.UNKNOWN_PARTITION, f"Unknown partition '{name}' in table '{table.name}'")
    return found


def alter_table(ctx: Context, session: SessionState, s: st.AlterTable) -> Done:
    table = ctx.table(session, s.table)
    schema_actions = [a for a in s.actions if isinstance(a, st.AddColumn | st.AddColumns | st.DropColumn
                                                         | st.ModifyColumn | st.RenameColumn)]
    if schema_actions:
        columns = list(table.schema_now.columns)
        next_id = table.next_column_id
        descriptions = []
        for action in schema_actions:
            next_id = _apply_column_action(table.keys_model, columns, action, next_id)
            descriptions.append(_describe(action))
        ctx.propose(cmd.ChangeSchema(table_id=table.table_id, base_schema_version=table.schema_now.schema_version,
                                     columns=tuple(columns), next_column_id=next_id,
                                     description="; ".join(descriptions)), table_id=table.table_id)
    for action in s.actions:
        if isinstance(action, st.SetTableProperties):
            changes = check_properties(action.properties)
            ctx.propose(cmd.AlterTableProperties(table_id=table.table_id, changes=dict(changes)),
                        table_id=table.table_id)
        elif isinstance(action, st.AddPartition):
            _add_partition(ctx, table, action)
        elif isinstance(action, st.DropPartition):
            if table.partition_by_name(action.name) is None and action.if_exists:
                continue
            ctx.propose(cmd.DropPartition(table_id=table.table_id, partition_name=action.name),
                        table_id=table.table_id)
        elif isinstance(action, st.ModifyPartition):
            ids = ([p.partition_id for p in table.live_partitions()] if action.all_partitions
                   else [_partition(table, n).partition_id for n in action.partitions])
            ctx.propose(cmd.ModifyPartitions(table_id=table.table_id, partition_ids=tuple(ids),
                                             changes=dict(check_properties(action.properties))),
                        table_id=table.table_id)
        elif isinstance(action, st.RenameTable):
            ctx.propose(cmd.RenameTable(table_id=table.table_id, name=action.new_name), table_id=table.table_id)
    return Done()


def _add_partition(ctx: Context, table, action: st.AddPartition) -> None:  # type: ignore[no-untyped-def]
    if table.partition_kind == "UNPARTITIONED":
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"table '{table.name}' is not partitioned")
    if table.partition_by_name(action.partition.name) is not None:
        if action.if_not_exists:
            return
        raise SqlFailure(ErrorCode.SAME_NAME_PARTITION, f"Duplicate partition name {action.partition.name}")
    lower = None
    if action.partition.kind == "LESS_THAN":
        uppers = [p.partition.bound.upper for p in table.live_partitions() if p.partition.bound.upper]
        lower = max(uppers, key=_bound_order) if uppers else None
    buckets = (action.distribution.buckets if action.distribution and action.distribution.buckets
               else table.distribution.buckets)
    ctx.propose(cmd.AddPartition(table_id=table.table_id, partition=partition_from_def(
        action.partition, buckets, lower)), table_id=table.table_id)


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


def _apply_column_action(keys_model: str, columns: list[Column], action: object, next_id: int) -> int:
    if isinstance(action, st.AddColumns):
        for d in action.columns:
            next_id = _apply_column_action(keys_model, columns, st.AddColumn(d), next_id)
        return next_id
    if isinstance(action, st.AddColumn):
        d = action.column
        if any(c.name.lower() == d.name.lower() for c in columns):
            raise SqlFailure(ErrorCode.DUP_FIELDNAME, f"Duplicate column name '{d.name}'")
        if keys_model == "AGGREGATE" and not d.is_key and not d.agg:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Value column '{d.name}' of an AGGREGATE KEY table must "
                                                        "have an aggregation type")
        if not d.nullable and d.default is None:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Column '{d.name}' is NOT NULL and has no DEFAULT, so "
                                                        "existing rows would have no value")
        column = column_from_def(d, next_id)
        columns.insert(_position(columns, action.position, column.is_key), column)
        return next_id + 1
    if isinstance(action, st.DropColumn):
        i = _find(columns, action.name)
        if columns[i].is_key:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Can not drop key column '{columns[i].name}'")
        if len(columns) == 1:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "Can not drop the only column of a table")
        del columns[i]
        return next_id
    if isinstance(action, st.ModifyColumn):
        i = _find(columns, action.column.name)
        old = columns[i]
        new = column_from_def(action.column, old.unique_id)
        new = new.model_copy(update={"is_key": old.is_key, "aggregation": new.aggregation or old.aggregation})
        del columns[i]
        columns.insert(i if action.position is None else _position(columns, action.position, new.is_key), new)
        return next_id
    if isinstance(action, st.RenameColumn):
        i = _find(columns, action.old)
        if any(c.name.lower() == action.new.lower() for c in columns):
            raise SqlFailure(ErrorCode.DUP_FIELDNAME, f"Duplicate column name '{action.new}'")
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
