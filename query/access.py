"""Who may run what: each statement's required privileges (Doris' names) checked against the
session's user before it runs, and what SHOW and information_schema list for that user.

`root` may do everything. Views are read with their definer's rights, as in Doris: reading a view
needs SELECT_PRIV on the view only, not on the tables its definition reads; its definition (SHOW
CREATE VIEW, information_schema.views) is shown to whoever may read everything it reads.
 Any other user needs, on `*.*`, `db.*` or `db.table`:
SELECT_PRIV to read (the latest state or any instant of its history), LOAD_PRIV to write rows
(INSERT, DELETE, UPDATE, TRUNCATE, routine loads, Stream Load), CREATE_PRIV / DROP_PRIV / ALTER_PRIV for DDL,
ADMIN_PRIV (on *.*) for resources, storage policies, compaction, users and grants. A statement
this module does not know is refused for non-root users: a new statement kind must say here what it needs.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from projections.state import ViewState
from projections.users import ANY, ROOT, UserRecord
from query.context import Context, Rows, SessionState, SqlFailure
from query.parser import parse_statement, table_refs
from query.parser import statements as st
from query.s3_location import resource_name
from query.s3_source import s3_calls
from query.sandbox import expressions
from schemas.errors import ErrorCode

Need = tuple[str, str, str]  # privilege, db, table ('*' for the database itself / everything)
_FREE = (st.SetVariables, st.SetNames, st.Passthrough, st.ShowServerInfo, st.ShowDatabases, st.ShowTables,
         st.ShowDynamicPartitionTables, st.ShowRoutineLoad, st.SetPassword, st.ShowGrants,
         st.ShowProcesslist, st.Kill, st.ShowProperty, st.ShowTableStatus,
         st.ShowCreateDatabase, st.ShowData, st.ShowTransaction)  # each checks the owner itself (see check)
_ADMIN = (st.CreateResource, st.AlterResource, st.DropResource, st.ShowResources, st.CreateStoragePolicy,
          st.AlterStoragePolicy, st.DropStoragePolicy, st.ShowStoragePolicy, st.AdminCompact, st.CreateUser,
          st.DropUser, st.GrantPrivileges, st.AlterUser, st.SetUserProperty,
          # Doris' node and storage introspection is for operators (ADMIN_PRIV; Doris also takes NODE_PRIV,
          # which Strata does not have).
          st.ShowCluster, st.ShowProc, st.ShowTablets, st.ShowTablet, st.AdminShowReplica,
          st.AdminShowFrontendConfig)
INFORMATION_SCHEMA = "information_schema"


def user_of(ctx: Context, session: SessionState) -> UserRecord | None:
    """The session's user; None for root."""
    if session.user.lower() == ROOT:
        return None
    found = ctx.projection.users.get(session.user.lower())
    if found is None:
        raise SqlFailure(ErrorCode.ACCESS_DENIED, f"Access denied for user '{session.user}'@'%': the user was dropped")
    return found


def _db(session: SessionState, name: st.QualifiedName) -> str:
    return name.db or session.database or ""


def _tables_read(session: SessionState, expr: exp.Expr) -> Iterator[Need]:
    # The same references, scoped the same way, as the ones the engine binds to snapshots: a name is
    # a CTE only where the CTE is in scope, so a CTE cannot hide a real table from this check.
    for ref in table_refs(expr):
        db = ref.db or session.database or ""
        if db.lower() == INFORMATION_SCHEMA:
            continue  # filtered row by row instead
        yield "SELECT_PRIV", db, ref.name


def needs(ctx: Context, session: SessionState, s: st.Statement) -> list[Need]:
    """What `s` needs: what its kind needs, and SELECT_PRIV on every table any of its expressions
    reads (a query, INSERT … SELECT, a subquery in a DELETE or UPDATE predicate or in VALUES …).
    Raises for statements with no rule (they are refused to non-root users)."""
    reads = [need for expr in expressions(s) for need in (*_tables_read(session, expr), *_resources_used(expr))]
    return list(dict.fromkeys([*_kind_needs(ctx, session, s), *reads]))


def _resources_used(expr: exp.Expr) -> Iterator[Need]:
    # Doris checks USAGE_PRIV on a resource an S3() call names; Strata grants no privileges on
    # resources, so their keys serve only users with ADMIN_PRIV. Keys given in the call need nothing.
    for call in s3_calls(expr):
        if any(isinstance(arg, exp.EQ) and arg.this.name.lower() == "resource" for arg in call.this.expressions):
            yield "ADMIN_PRIV", ANY, ANY


def _kind_needs(ctx: Context, session: SessionState, s: st.Statement) -> list[Need]:
    if isinstance(s, _FREE):
        return []
    if isinstance(s, _ADMIN):
        return [("ADMIN_PRIV", ANY, ANY)]
    if isinstance(s, st.Query | st.Explain):
        return []  # SELECT_PRIV on what the query reads, as for the query itself (`needs`)
    if isinstance(s, st.SelectIntoOutfile):
        return _resource_needs(s.properties)
    if isinstance(s, st.BrokerLoad):
        db = s.label.db or session.database or ""
        return [*(("LOAD_PRIV", db, d.table) for d in s.data), *_resource_needs(s.s3_properties)]
    if isinstance(s, st.ExportTable):
        return [("SELECT_PRIV", _db(session, s.table), s.table.name), *_resource_needs(s.s3_properties)]
    if isinstance(s, st.ShowLoads | st.CancelLoads):
        # Jobs are listed per database: LOAD_PRIV (loads) or SELECT_PRIV (exports) on all of it.
        return [("LOAD_PRIV" if s.kind == "LOAD" else "SELECT_PRIV", s.db or session.database or "", ANY)]
    if isinstance(s, st.Insert):
        return [("LOAD_PRIV", _db(session, s.table), s.table.name)]
    if isinstance(s, st.Delete | st.Update | st.TruncateTable):
        return [("LOAD_PRIV", _db(session, s.table), s.table.name)]
    if isinstance(s, st.CreateTable | st.CreateTableLike | st.CreateTableClone):
        extra = [("SELECT_PRIV", _db(session, s.source), s.source.name)] \
            if isinstance(s, st.CreateTableLike | st.CreateTableClone) else []
        return [("CREATE_PRIV", _db(session, s.table), ANY), *extra]
    if isinstance(s, st.CreateTableAs):
        return [("CREATE_PRIV", _db(session, s.table), ANY)]
    if isinstance(s, st.CreateView):
        return [("CREATE_PRIV", _db(session, s.view), s.view.name)]
    if isinstance(s, st.AlterView):
        return [("ALTER_PRIV", _db(session, s.view), s.view.name)]
    if isinstance(s, st.DropView):
        return [("DROP_PRIV", _db(session, s.view), s.view.name)]
    if isinstance(s, st.ShowCreateView | st.ShowCreateTable):
        name = s.view if isinstance(s, st.ShowCreateView) else s.table
        return [("SELECT_PRIV", _db(session, name), name.name), *_definition_reads(ctx, session, name)]
    if isinstance(s, st.DropTable):
        return [("DROP_PRIV", _db(session, s.table), s.table.name)]
    if isinstance(s, st.RecoverTable):
        return [("CREATE_PRIV", _db(session, s.table), ANY)]
    if isinstance(s, st.CreateTag | st.DropTag):
        return [("ALTER_PRIV", _db(session, s.table), s.table.name)]
    if isinstance(s, st.AlterTable | st.RestoreTable):
        # REPLACE WITH TABLE changes the other table too (its name, or it is dropped).
        others = [a.other for a in s.actions if isinstance(a, st.ReplaceWithTable)] if isinstance(s, st.AlterTable) \
            else []
        return [("ALTER_PRIV", _db(session, s.table), name) for name in (s.table.name, *others)]
    if isinstance(s, st.CreateDatabase):
        return [("CREATE_PRIV", s.name, ANY)]
    if isinstance(s, st.DropDatabase):
        return [("DROP_PRIV", s.name, ANY)]
    if isinstance(s, st.RecoverDatabase):
        return [("CREATE_PRIV", s.name, ANY)]
    if isinstance(s, st.Describe | st.ShowColumns | st.ShowIndex) and \
            _db(session, s.table).lower() == INFORMATION_SCHEMA:
        return []  # everyone may read information_schema's columns; its rows are filtered (`visible`)
    if isinstance(s, st.ShowCreateTable | st.ShowPartitions | st.Describe | st.ShowTimeTravel | st.ShowTags
                  | st.ShowColumns
                  | st.ShowIndex):
        return [("SELECT_PRIV", _db(session, s.table), s.table.name)]
    if isinstance(s, st.CreateRoutineLoad):
        return [("LOAD_PRIV", s.job.db or session.database or "", s.table.name)]
    if isinstance(s, st.RoutineLoadControl):
        return _job_needs(ctx, session, s.job)
    raise SqlFailure(ErrorCode.SPECIFIC_ACCESS_DENIED,
                     f"Access denied; only root may run {type(s).__name__} statements")


def _resource_needs(properties: dict[str, str]) -> list[Need]:
    """Naming a resource's keys needs ADMIN_PRIV (see `_resources_used`)."""
    return [("ADMIN_PRIV", ANY, ANY)] if resource_name(properties) is not None else []


def definition_reads(view: ViewState) -> list[Need]:
    """SELECT_PRIV on what a view's definition reads (its table names are qualified)."""
    parsed = parse_statement(view.definition)
    return [need for expr in expressions(parsed) for need in _tables_read(SessionState(), expr)]


def _definition_reads(ctx: Context, session: SessionState, name: st.QualifiedName) -> list[Need]:
    db = ctx.projection.database_by_name(_db(session, name))
    view = ctx.projection.view_by_name(db.db_id, name.name) if db is not None else None
    return definition_reads(view) if view is not None else []


def may_see_definition(ctx: Context, session: SessionState, view: ViewState) -> bool:
    """Whether the session's user may read a view's definition: it may read everything the view reads."""
    user = user_of(ctx, session)
    return user is None or all(user.may(*need) for need in definition_reads(view))


def _job_needs(ctx: Context, session: SessionState, job: st.QualifiedName | None) -> list[Need]:
    if job is None:  # PAUSE|RESUME ALL: every job of the database
        return [("LOAD_PRIV", session.database or "", ANY)]
    db_id, db_name = ctx.database_id(session, job.db)
    found = ctx.projection.routine_load(db_id, job.name)
    table = ctx.projection.tables.get(found.table_id) if found else None
    return [("LOAD_PRIV", db_name, table.name if table else ANY)]


def check(ctx: Context, session: SessionState, s: st.Statement) -> None:
    user = user_of(ctx, session)
    if user is None:
        return
    if isinstance(s, st.Use | st.ShowCreateDatabase):
        name = s.db if isinstance(s, st.Use) else s.name
        if name.lower() != INFORMATION_SCHEMA and not user.sees_database(name):
            raise SqlFailure(ErrorCode.DB_ACCESS_DENIED,
                             f"Access denied for user '{user.name}'@'%' to database '{name}'")
        return
    if isinstance(s, st.SetPassword) and s.user is not None and s.user.name.lower() != user.name.lower():
        raise SqlFailure(ErrorCode.SPECIFIC_ACCESS_DENIED, "Access denied; you need ADMIN_PRIV to set another "
                                                           "user's password")
    if isinstance(s, st.ShowProperty) and s.user is not None and s.user.lower() != user.name.lower():
        if not user.may("ADMIN_PRIV"):
            raise SqlFailure(ErrorCode.SPECIFIC_ACCESS_DENIED, "Access denied; you need ADMIN_PRIV to see other "
                                                               "users' properties")
        return
    if isinstance(s, st.ShowGrants) and (s.all or (s.user is not None and s.user.name.lower() != user.name.lower())):
        if not user.may("ADMIN_PRIV"):
            raise SqlFailure(ErrorCode.SPECIFIC_ACCESS_DENIED, "Access denied; you need ADMIN_PRIV to see other "
                                                               "users' grants")
        return
    for privilege, db, table in needs(ctx, session, s):
        if not user.may(privilege, db, table):
            where = f"{db}.{table}" if table != ANY else f"{db or '*'}.*"
            code = ErrorCode.SPECIFIC_ACCESS_DENIED if privilege == "ADMIN_PRIV" else ErrorCode.TABLE_ACCESS_DENIED
            raise SqlFailure(code, f"Access denied; user '{user.name}'@'%' needs {privilege} on {where}")


def filter_rows(ctx: Context, session: SessionState, s: st.Statement, result: Rows) -> Rows:
    """SHOW output for a non-root user: only the databases, tables and jobs it may see."""
    user = user_of(ctx, session)
    if user is None:
        return result
    if isinstance(s, st.ShowDatabases):
        keep = [r for r in result.rows if str(r[0]).lower() == INFORMATION_SCHEMA or user.sees_database(str(r[0]))]
    elif isinstance(s, st.ShowTables | st.ShowTableStatus):
        db = s.db or session.database or ""
        keep = [r for r in result.rows if user.sees_table(db, str(r[0]))]
    elif isinstance(s, st.ShowDynamicPartitionTables):
        db = s.db or session.database or ""
        keep = [r for r in result.rows if user.sees_table(db, str(r[0]))]
    elif isinstance(s, st.ShowRoutineLoad):
        at = {name: i for i, name in enumerate(result.columns)}
        keep = [r for r in result.rows if user.may("LOAD_PRIV", str(r[at["DbName"]]), str(r[at["TableName"]]))]
    else:
        return result
    return Rows(result.columns, keep)


def visible(ctx: Context, session: SessionState, data: pa.Table) -> pa.Table:
    """An information_schema table with only the rows about what the session's user may see."""
    user = user_of(ctx, session)
    if user is None:
        return data
    names = data.column_names
    if "TABLE_SCHEMA" in names and "TABLE_NAME" in names:
        mask = [db.lower() == INFORMATION_SCHEMA or user.sees_table(db, t)
                for db, t in zip(data["TABLE_SCHEMA"].to_pylist(), data["TABLE_NAME"].to_pylist(), strict=True)]
    elif "SCHEMA_NAME" in names:
        mask = [db.lower() == INFORMATION_SCHEMA or user.sees_database(db) for db in data["SCHEMA_NAME"].to_pylist()]
    else:
        return data
    return data.filter(pc.equal(pa.array(mask, pa.bool_()), True))
