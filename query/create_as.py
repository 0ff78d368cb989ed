"""CREATE TABLE … AS SELECT (time-travel clauses included): the new table's columns come from the
query's result types; it is created, then filled in a second commit."""

from __future__ import annotations

import duckdb

from query import ddl
from query.context import Context, Done, SessionState, SqlFailure
from query.dml import write_rows
from query.parser import statements as st
from query.reads import bind_tables, duck_error

_DORIS_TYPES = {
    "BOOLEAN": "BOOLEAN", "TINYINT": "TINYINT", "SMALLINT": "SMALLINT", "INTEGER": "INT", "BIGINT": "BIGINT",
    "HUGEINT": "LARGEINT", "FLOAT": "FLOAT", "DOUBLE": "DOUBLE", "DATE": "DATE", "TIMESTAMP": "DATETIME",
    "VARCHAR": "STRING", "UTINYINT": "SMALLINT", "USMALLINT": "INT", "UINTEGER": "BIGINT", "UBIGINT": "LARGEINT",
}


def doris_type_or_none(duck: str) -> str | None:
    """The Doris column type of a DuckDB result type; None where Doris has no column type for it."""
    if duck.startswith("DECIMAL"):
        return duck
    if duck.startswith("TIMESTAMP"):
        return "DATETIME"
    return _DORIS_TYPES.get(duck)


def doris_type_of(duck: str) -> str:
    found = doris_type_or_none(duck)
    if found is None:
        raise SqlFailure(1235, f"CREATE TABLE AS SELECT: result type {duck} has no Doris column type")
    return found


def create_table_as(ctx: Context, session: SessionState, s: st.CreateTableAs) -> Done:
    ctx.catch_up()
    cur = ctx.cursor()
    try:
        inner = bind_tables(ctx, session, s.query.expr, cur)
        try:
            described = cur.execute(f"DESCRIBE SELECT * FROM ({inner})").fetchall()
        except duckdb.Error as exc:
            raise SqlFailure(*duck_error(exc)) from None
        columns = tuple(st.ColumnDef(name=name, type=st.ColumnType(doris_type_of(str(duck_t)))) for name, duck_t,
                        *_ in described)
        create = st.CreateTable(table=s.table, columns=columns, if_not_exists=s.if_not_exists,
                                keys_model=s.keys_model, key_columns=s.key_columns or (columns[0].name,),
                                partition=s.partition, distribution=s.distribution, properties=s.properties)
        db_id, _ = ctx.database_id(session, s.table.db)
        if s.if_not_exists and (ctx.projection.table_by_name(db_id, s.table.name) is not None
                                or ctx.projection.view_by_name(db_id, s.table.name) is not None):
            return Done()  # the table is left as it is, rows and all, as Doris does
        ddl.create_table(ctx, session, create)
        table = ctx.table(session, s.table)
        source = f"SELECT * FROM ({inner}) AS __q({', '.join(f'a{i}' for i in range(len(columns)))})"
        try:
            count = write_rows(ctx, cur, table, source, list(table.schema_now.visible_columns), source="ctas")
        except Exception:
            # The statement is one thing to the user: a table it could not fill must not stay behind
            # (FORCE, or RECOVER TABLE would bring back the empty shell).
            ddl.drop_table(ctx, session, st.DropTable(table=s.table, force=True))
            raise
    finally:
        cur.close()
    return Done(count)
