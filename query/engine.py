"""The statement engine of a query server: its projection replica, and one handler per statement.

Protocol-free (the MySQL server and tests both drive it): `execute(session, statement)` returns
rows or an OK, or raises `SqlFailure` with a MySQL error code.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from projections.checkpoints import Manifest
from projections.remote import open_locator
from projections.replica import Replica
from query import (
    access,
    broker_load,
    bulk_jobs,
    cluster,
    ddl,
    dml,
    dynamic_partition,
    explain,
    export,
    frontend_config,
    identifiers,
    mysql_semantics,
    outfile,
    proc,
    processlist,
    routine_load,
    server_info,
    show,
    show_storage,
    tags,
    tiering,
    time_travel,
    transactions,
    user_properties,
    users,
    views,
)
from query.context import Context, Done, Result, Rows, SessionState, SqlFailure, set_running_guard
from query.create_as import create_table_as
from query.login_policy import LoginPolicy
from query.metadata_count import counts_whole_table, metadata_count
from query.parser import statements as st
from query.reads import run_query
from query.sandbox import check_statement
from schemas.config import Settings
from schemas.errors import ErrorCode
from storage.object_store import RemoteUnavailable, ResourceError
from storage.sandbox import sandboxed_connection

log = logging.getLogger(__name__)


def _use(ctx: Context, session: SessionState, s: st.Use) -> Done:
    if s.db.lower() != "information_schema":
        ctx.database_id(session, s.db)
    session.database = s.db
    return Done()


def _query(ctx: Context, session: SessionState, s: st.Query) -> Rows:
    expr = mysql_semantics.rewrite(s.expr)
    if session.arrow_results or not counts_whole_table(expr):  # a Flight SQL client takes Arrow batches
        return run_query(ctx, session, expr)
    counted = ctx.read_fenced(lambda: metadata_count(ctx, session, expr))
    return counted if counted is not None else run_query(ctx, session, expr, caught_up=True)


_HANDLERS: dict[type, Callable[[Context, SessionState, Any], Result]] = {
    st.Query: _query,
    st.Use: _use,
    st.CreateDatabase: ddl.create_database,
    st.DropDatabase: ddl.drop_database,
    st.CreateTable: ddl.create_table,
    st.CreateTableAs: create_table_as,
    st.CreateTableLike: ddl.create_table_like,
    st.CreateTableClone: ddl.create_table_clone,
    st.DropTable: ddl.drop_table,
    st.CreateView: views.create_view,
    st.AlterView: views.alter_view,
    st.DropView: views.drop_view,
    st.ShowCreateView: views.show_create_view,
    st.RecoverTable: ddl.recover_table,
    st.TruncateTable: ddl.truncate_table,
    st.AlterTable: ddl.alter_table,
    st.Insert: dml.insert,
    st.Delete: dml.delete,
    st.Update: dml.update,
    st.ShowDatabases: show.show_databases,
    st.ShowTables: show.show_tables,
    st.ShowCreateTable: show.show_create_table,
    st.ShowCreateDatabase: show.show_create_database,
    st.ShowColumns: show.show_columns,
    st.ShowIndex: show.show_index,
    st.ShowTableStatus: show.show_table_status,
    st.ShowServerInfo: server_info.show_server_info,
    st.ShowPartitions: show.show_partitions,
    st.ShowDynamicPartitionTables: dynamic_partition.show_dynamic_partition_tables,
    st.Describe: show.describe,
    st.ShowTimeTravel: time_travel.show_time_travel,
    st.RestoreTable: time_travel.restore_table,
    st.AdminCompact: time_travel.admin_compact,
    st.CreateTag: tags.create_tag,
    st.DropTag: tags.drop_tag,
    st.ShowTags: tags.show_tags,
    st.CreateResource: tiering.create_resource,
    st.AlterResource: tiering.alter_resource,
    st.DropResource: tiering.drop_resource,
    st.ShowResources: tiering.show_resources,
    st.CreateStoragePolicy: tiering.create_storage_policy,
    st.AlterStoragePolicy: tiering.alter_storage_policy,
    st.DropStoragePolicy: tiering.drop_storage_policy,
    st.ShowStoragePolicy: tiering.show_storage_policy,
    st.CreateRoutineLoad: routine_load.create_routine_load,
    st.RoutineLoadControl: routine_load.control_routine_load,
    st.ShowRoutineLoad: routine_load.show_routine_load,
    st.CreateUser: users.create_user,
    st.DropUser: users.drop_user,
    st.SetPassword: users.set_password,
    st.GrantPrivileges: users.grant,
    st.ShowGrants: users.show_grants,
    st.AlterUser: users.alter_user,
    st.SetUserProperty: user_properties.set_user_property,
    st.ShowProperty: user_properties.show_property,
    st.ShowProcesslist: processlist.show_processlist,
    st.Kill: processlist.kill,
    st.AdminShowFrontendConfig: frontend_config.admin_show_frontend_config,
    st.AdminShowReplica: show_storage.admin_show_replica,
    st.BrokerLoad: broker_load.create_broker_load,
    st.CancelLoads: bulk_jobs.cancel_loads,
    st.Explain: explain.explain,
    st.ExportTable: export.create_export,
    st.SelectIntoOutfile: outfile.select_into_outfile,
    st.ShowCluster: cluster.show_cluster,
    st.ShowData: show_storage.show_data,
    st.ShowLoads: bulk_jobs.show_loads,
    st.ShowProc: proc.show_proc,
    st.ShowTablet: show_storage.show_tablet,
    st.ShowTablets: show_storage.show_tablets,
    st.ShowTransaction: transactions.show_transaction,
}


class Engine:
    def __init__(self, config: Settings, name: str, *, restoring: Future[Manifest | None] | None = None) -> None:
        """`restoring`: the restore of this server's replica from a checkpoint, begun at startup
        (`query.start`)."""
        self.name = name
        replica = Replica.open(config, config.state_dir / name, name, restoring=restoring)
        locator, stores = open_locator(config, replica.projection, name)
        for tier in locator.tiers.names():
            locator.tiers.root(tier).mkdir(parents=True, exist_ok=True)
        locator.cache.root.mkdir(parents=True, exist_ok=True)
        # DuckDB may read only where the snapshots' rowset paths point: the tiers and this server's cache.
        duck = sandboxed_connection([*(locator.tiers.root(t) for t in locator.tiers.names()), locator.cache.root])
        self.ctx = Context(config=config, projection=replica.projection, follower=replica.follower,
                           proposer=replica.proposer, locator=locator, stores=stores, duck=duck, name=name)
        # Logins on the SQL port and the HTTP API share one lockout count per user (query.login_policy).
        projection = replica.projection
        bulk_jobs.runner(self.ctx)  # resumes this server's unfinished Broker Load and EXPORT jobs
        self.login_policy = LoginPolicy(lambda user: projection.users.get(user.lower()),
                                        lambda db: projection.database_by_name(db) is not None, self.ctx.sessions)

    def execute(self, session: SessionState, statement: st.Statement) -> Result:
        """A statement its guard cancelled (query_timeout, KILL) fails with that reason, whatever the
        interrupted DuckDB call raised; one cancelled while it waited for a thread does not start."""
        guard = session.guard
        set_running_guard(guard)
        try:
            if guard is not None:
                guard.check()
            return self._execute(session, statement)
        except Exception:
            if guard is not None and guard.failure is not None:
                raise guard.failure from None
            raise
        finally:
            set_running_guard(None)
            if guard is not None:
                guard.finish()

    def _execute(self, session: SessionState, statement: st.Statement) -> Result:
        handler = _HANDLERS.get(type(statement))
        if handler is None:
            raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"{type(statement).__name__} is not supported yet")
        try:
            check_statement(statement)  # before anything else: no grant allows what the sandbox refuses
            access.check(self.ctx, session, statement)
            identifiers.check(statement)  # Doris' naming rules for what the statement creates
            with self.ctx.locator.statement():
                result = handler(self.ctx, session, statement)
            return access.filter_rows(self.ctx, session, statement, result) if isinstance(result, Rows) else result
        except RemoteUnavailable as exc:
            raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"{exc}; the data is cooled to resource '{exc.resource}' "
                                                      "and not in this server's file cache") from None
        except ResourceError as exc:
            raise SqlFailure(ErrorCode.UNKNOWN_ERROR, str(exc)) from None

    def healthy(self) -> bool:
        thread = self.ctx.follower._thread
        return thread is not None and thread.is_alive()

    def close(self) -> None:
        if self.ctx.group_commits is not None:
            self.ctx.group_commits.close()  # pending batches commit before the replica stops
        if self.ctx.bulk_jobs is not None:
            self.ctx.bulk_jobs.stop()  # a job cut short resumes from the log at the next start
        self.ctx.follower.stop()
        self.ctx.projection.close()
