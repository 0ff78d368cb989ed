"""The statement engine of a query server: its projection replica, and one handler per statement.

Protocol-free (the MySQL server and tests both drive it): `execute(session, statement)` returns
rows or an OK, or raises `SqlFailure` with a MySQL error code.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import duckdb

from projections.remote import open_locator
from projections.replica import Replica
from query import access, ddl, dml, dynamic_partition, routine_load, show, tiering, time_travel, users
from query.context import Context, Done, Result, Rows, SessionState, SqlFailure
from query.create_as import create_table_as
from query.parser import statements as st
from query.reads import run_query
from schemas.config import Settings
from schemas.errors import ErrorCode
from storage.object_store import RemoteUnavailable, ResourceError

log = logging.getLogger(__name__)


def _use(ctx: Context, session: SessionState, s: st.Use) -> Done:
    if s.db.lower() != "information_schema":
        ctx.database_id(session, s.db)
    session.database = s.db
    return Done()


def _query(ctx: Context, session: SessionState, s: st.Query) -> Rows:
    return run_query(ctx, session, s.expr)


_HANDLERS: dict[type, Callable[[Context, SessionState, Any], Result]] = {
    st.Query: _query,
    st.Use: _use,
    st.CreateDatabase: ddl.create_database,
    st.DropDatabase: ddl.drop_database,
    st.CreateTable: ddl.create_table,
    st.CreateTableAs: create_table_as,
    st.DropTable: ddl.drop_table,
    st.RecoverTable: ddl.recover_table,
    st.TruncateTable: ddl.truncate_table,
    st.AlterTable: ddl.alter_table,
    st.Insert: dml.insert,
    st.Delete: dml.delete,
    st.Update: dml.update,
    st.ShowDatabases: show.show_databases,
    st.ShowTables: show.show_tables,
    st.ShowCreateTable: show.show_create_table,
    st.ShowPartitions: show.show_partitions,
    st.ShowDynamicPartitionTables: dynamic_partition.show_dynamic_partition_tables,
    st.Describe: show.describe,
    st.ShowTimeTravel: time_travel.show_time_travel,
    st.RestoreTable: time_travel.restore_table,
    st.AdminCompact: time_travel.admin_compact,
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
}


class Engine:
    def __init__(self, config: Settings, name: str) -> None:
        self.name = name
        replica = Replica.open(config, config.state_dir / name, name)
        locator, stores = open_locator(config, replica.projection, name)
        for tier in locator.tiers.names():
            locator.tiers.root(tier).mkdir(parents=True, exist_ok=True)
        self.ctx = Context(config=config, projection=replica.projection, follower=replica.follower,
                           proposer=replica.proposer, locator=locator, stores=stores, duck=duckdb.connect(),
                           name=name)

    def execute(self, session: SessionState, statement: st.Statement) -> Result:
        handler = _HANDLERS.get(type(statement))
        if handler is None:
            raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"{type(statement).__name__} is not supported yet")
        try:
            access.check(self.ctx, session, statement)
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
        self.ctx.follower.stop()
        self.ctx.projection.close()
