"""Doris-only statements sqlglot does not know: catalog, SHOW, time travel, tiering, routine load."""

from __future__ import annotations

from typing import Literal

from sqlglot import exp
from sqlglot.tokens import TokenType

from query.parser import loads, users
from query.parser.cursor import Cursor
from query.parser.dialect import TIME_TRAVEL_TIME_WORDS, VERSION_KIND
from query.parser.dml import parse_query, partition_names
from query.parser.errors import UnsupportedStatement
from query.parser.lexing import tokenize
from query.parser.statements import (
    AdminCompact,
    AdminShowFrontendConfig,
    AdminShowReplica,
    AlterResource,
    AlterStoragePolicy,
    AsOf,
    AsOfTag,
    AsOfTime,
    AsOfVersion,
    CreateDatabase,
    CreateResource,
    CreateRoutineLoad,
    CreateStoragePolicy,
    Describe,
    DropDatabase,
    DropResource,
    DropStoragePolicy,
    DropTable,
    Explain,
    Kill,
    LoadColumn,
    Moment,
    Passthrough,
    QualifiedName,
    RecoverDatabase,
    RecoverTable,
    RestoreTable,
    RoutineLoadControl,
    SetAssignment,
    SetNames,
    SetVariables,
    ShowCluster,
    ShowColumns,
    ShowCreateDatabase,
    ShowCreateTable,
    ShowCreateView,
    ShowData,
    ShowDatabases,
    ShowDynamicPartitionTables,
    ShowIndex,
    ShowPartitions,
    ShowProc,
    ShowProcesslist,
    ShowProperty,
    ShowResources,
    ShowRoutineLoad,
    ShowServerInfo,
    ShowStoragePolicy,
    ShowTables,
    ShowTableStatus,
    ShowTablet,
    ShowTablets,
    ShowTags,
    ShowTimeTravel,
    ShowTransaction,
    Statement,
    Use,
)

_DATABASE_WORDS = ("DATABASE", "SCHEMA")
Scope = Literal["SESSION", "GLOBAL"]
_SCOPES: tuple[Scope, ...] = ("SESSION", "GLOBAL")
_COMPACTION_TYPES: tuple[Literal["BASE", "CUMULATIVE"], ...] = ("BASE", "CUMULATIVE")
_ROUTINE_LOAD_ACTIONS: tuple[Literal["PAUSE", "RESUME", "STOP"], ...] = ("PAUSE", "RESUME", "STOP")


def source_text(c: Cursor) -> str:
    return c.sql[c.tokens[0].start : c.tokens[-1].end + 1]


def _done(c: Cursor, statement: Statement) -> Statement:
    c.expect_end()
    return statement


def _like_pattern(c: Cursor) -> str:
    return c.string("a quoted LIKE pattern")


def _like(c: Cursor) -> str | None:
    return _like_pattern(c) if c.accept("LIKE") else None


def parse_as_of(c: Cursor) -> Moment:
    """``TIME AS OF '<ts>'`` (also TIMESTAMP / SYSTEM_TIME) or ``VERSION AS OF <n>``."""
    if c.accept("SYSTEM", "TIME") or c.accept_any(TIME_TRAVEL_TIME_WORDS):
        c.expect("AS", "OF")
        if c.at("TIMESTAMP") and (nxt := c.peek(1)) is not None and nxt.token_type == TokenType.STRING:
            c.advance()
        return AsOfTime(c.string("a quoted timestamp literal"))
    if c.accept(VERSION_KIND):
        c.expect("AS", "OF")
        return AsOfVersion(c.integer("an integer version"))
    raise c.error("expected TIME AS OF or VERSION AS OF")


def parse_read_as_of(c: Cursor) -> AsOf:
    """What a read names after FOR: ``TAG AS OF 'name'`` (the tag's snapshot), or `parse_as_of`'s."""
    if c.accept("TAG", "AS", "OF"):
        return AsOfTag(c.string("a quoted tag name"))
    return parse_as_of(c)


# --------------------------------------------------------------------------- CREATE / DROP / ALTER


def create_database(c: Cursor) -> Statement:
    if_not_exists = c.if_not_exists()
    name = c.identifier("a database name")
    properties = c.properties() if c.accept("PROPERTIES") else {}
    return _done(c, CreateDatabase(name, if_not_exists, properties))


def create_resource(c: Cursor) -> Statement:
    if_not_exists = c.if_not_exists()
    name = c.name_or_string("a resource name")
    c.expect("PROPERTIES")
    return _done(c, CreateResource(name, c.properties(), if_not_exists))


def create_storage_policy(c: Cursor) -> Statement:
    if_not_exists = c.if_not_exists()
    name = c.name_or_string("a storage policy name")
    c.expect("PROPERTIES")
    return _done(c, CreateStoragePolicy(name, c.properties(), if_not_exists))


def drop_database(c: Cursor) -> Statement:
    if_exists = c.if_exists()
    name = c.identifier("a database name")
    return _done(c, DropDatabase(name, if_exists, c.accept("FORCE")))


def drop_table(c: Cursor) -> Statement:
    if_exists = c.if_exists()
    table = c.qualified_name()
    return _done(c, DropTable(table, if_exists, c.accept("FORCE")))


def drop_resource(c: Cursor) -> Statement:
    if_exists = c.if_exists()
    return _done(c, DropResource(c.name_or_string("a resource name"), if_exists))


def drop_storage_policy(c: Cursor) -> Statement:
    if_exists = c.if_exists()
    return _done(c, DropStoragePolicy(c.name_or_string("a storage policy name"), if_exists))


def alter_resource(c: Cursor) -> Statement:
    name = c.name_or_string("a resource name")
    c.expect("PROPERTIES")
    return _done(c, AlterResource(name, c.properties()))


def alter_storage_policy(c: Cursor) -> Statement:
    name = c.name_or_string("a storage policy name")
    c.expect("PROPERTIES")
    return _done(c, AlterStoragePolicy(name, c.properties()))


# --------------------------------------------------------------------------- routine load


def _load_columns(c: Cursor) -> tuple[LoadColumn, ...]:
    def item() -> LoadColumn:
        name = c.identifier("a column name")
        if c.accept_type(TokenType.EQ):
            return LoadColumn(name, c.sqlglot("condition", "a column mapping expression"))
        return LoadColumn(name)

    return tuple(c.parens(item))


def load_columns(sql: str) -> tuple[LoadColumn, ...]:
    """A Stream Load `columns` header (`k, tmp, v = tmp * 2`): the grammar of a routine load's COLUMNS."""
    c = Cursor(tokenize(f"({sql})"), f"({sql})")
    columns = _load_columns(c)
    c.expect_end()
    return columns


def load_condition(sql: str) -> exp.Expr:
    """A Stream Load `where` or `delete` header: one condition, as after WHERE in SQL."""
    c = Cursor(tokenize(sql), sql)
    condition = c.sqlglot("condition", "a condition")
    c.expect_end()
    return condition


def create_routine_load(c: Cursor) -> Statement:
    """Everything after CREATE ROUTINE LOAD."""
    job = c.qualified_name("a routine load job name")
    c.expect("ON")
    table = c.qualified_name()
    if c.at("WITH"):
        raise UnsupportedStatement("routine load merge types (WITH MERGE|APPEND|DELETE) are not supported")
    separator: str | None = None
    columns: tuple[LoadColumn, ...] = ()
    where: exp.Expr | None = None
    partitions: tuple[str, ...] = ()
    seen: set[str] = set()
    while not c.at("PROPERTIES") and not c.at("FROM"):
        clause_token = c.peek()
        if c.accept("COLUMNS", "TERMINATED", "BY"):
            clause = "COLUMNS TERMINATED BY"
            separator = c.string("a quoted column separator")
        elif c.accept("COLUMNS"):
            clause = "COLUMNS"
            columns = _load_columns(c)
        elif c.accept("WHERE"):
            clause = "WHERE"
            where = c.sqlglot("condition", "a filter condition")
        elif c.accept_any(("PARTITION", "PARTITIONS")):
            clause = "PARTITION"
            partitions = partition_names(c)
        elif phrase := c.accept_any(("PRECEDING", "DELETE", "ORDER", "LINES")):
            raise UnsupportedStatement(f"routine load {phrase} clause is not supported")
        else:
            raise c.error("expected COLUMNS, WHERE, PARTITION, PROPERTIES or FROM")
        if clause in seen:
            raise c.error(f"duplicate {clause} clause", clause_token)
        seen.add(clause)
        if not c.accept_type(TokenType.COMMA):
            break
    properties = c.properties() if c.accept("PROPERTIES") else {}
    c.expect("FROM")
    source = c.identifier("a data source such as KAFKA").upper()
    if source != "KAFKA":
        raise UnsupportedStatement(f"routine load from {source} is not supported")
    source_properties = c.properties()
    return _done(
        c,
        CreateRoutineLoad(
            job, table, source, source_properties, properties, separator, columns, where, partitions
        ),
    )


def routine_load_control(c: Cursor) -> Statement:
    """``PAUSE|RESUME [ALL] ROUTINE LOAD [FOR job]`` and ``STOP ROUTINE LOAD FOR job``."""
    c.pos = 0
    action = c.expect_choice(_ROUTINE_LOAD_ACTIONS, "PAUSE, RESUME or STOP")
    all_jobs = action != "STOP" and c.accept("ALL")
    c.expect("ROUTINE", "LOAD")
    job = None if all_jobs else _for_job(c, required=True)
    return _done(c, RoutineLoadControl(action, job))


def _for_job(c: Cursor, required: bool) -> QualifiedName | None:
    if required:
        c.expect("FOR")
    elif not c.accept("FOR"):
        return None
    return c.qualified_name("a routine load job name")


# --------------------------------------------------------------------------- SHOW


def _filter(c: Cursor, like: bool = True) -> tuple[str | None, exp.Expr | None]:
    """MySQL's SHOW filter: ``[LIKE 'pattern' | WHERE condition]`` (query.show_filter applies it)."""
    pattern = _like(c) if like else None
    if pattern is not None or not c.accept("WHERE"):
        return pattern, None
    # SHOW COLLATION / CHARSET have a column named Charset, which MySQL reads as a name in the WHERE
    # and sqlglot as the CHARACTER SET keyword.
    for token in c.tokens[c.pos:]:
        if token.token_type == TokenType.CHARACTER_SET and token.text.upper() == "CHARSET":
            token.token_type = TokenType.VAR
    return None, c.sqlglot("condition", "a condition")


def _show_server_info(c: Cursor, kind: str, full: bool, scope: Scope | None) -> Statement:
    like, where = _filter(c)
    return _done(c, ShowServerInfo(kind, full, scope, like, where))


def _show_resources(c: Cursor) -> Statement:
    if c.accept("WHERE"):
        c.expect("NAME")
        if c.accept("LIKE"):
            return _done(c, ShowResources(like=_like_pattern(c)))
        c.expect_type(TokenType.EQ, "'=' or LIKE after NAME")
        return _done(c, ShowResources(name=c.string("a quoted resource name")))
    return _done(c, ShowResources(like=_like(c)))


def _show_storage_policy(c: Cursor) -> Statement:
    if not c.accept("USING"):
        return _done(c, ShowStoragePolicy())
    policy = c.name_or_string("a storage policy name") if c.accept("FOR") else None
    return _done(c, ShowStoragePolicy(using=True, policy=policy))


def _table_of_show(c: Cursor) -> QualifiedName:
    """``FROM|IN t [FROM|IN db]``."""
    c.expect_any(("FROM", "IN"), "FROM or IN")
    table = c.qualified_name()
    if c.accept_any(("FROM", "IN")):
        table = QualifiedName(table.name, db=c.identifier("a database name"))
    return table


def _show_columns(c: Cursor, full: bool) -> Statement:
    table = _table_of_show(c)
    return _done(c, ShowColumns(table, full, *_filter(c)))


def _show_tables(c: Cursor, full: bool) -> Statement:
    db = c.identifier("a database name") if c.accept_any(("FROM", "IN")) else None
    like, where = _filter(c)
    return _done(c, ShowTables(db, like, full, where))


def _show_table_status(c: Cursor) -> Statement:
    db = c.identifier("a database name") if c.accept_any(("FROM", "IN")) else None
    return _done(c, ShowTableStatus(db, *_filter(c)))


# Simple SHOW forms answered from server state; each maps the keyword(s) to the reported kind.
_SERVER_INFO: dict[tuple[str, ...], str] = {
    ("VARIABLES",): "VARIABLES",
    ("STATUS",): "STATUS",
    ("WARNINGS",): "WARNINGS",
    ("ERRORS",): "ERRORS",
    ("ENGINES",): "ENGINES",
    ("STORAGE", "ENGINES"): "ENGINES",
    ("CHARSET",): "CHARSET",
    ("CHARACTER", "SET"): "CHARSET",
    ("COLLATION",): "COLLATION",
    ("PROCEDURE", "STATUS"): "PROCEDURE STATUS",
    ("FUNCTION", "STATUS"): "FUNCTION STATUS",
    ("PLUGINS",): "PLUGINS",
}
_CLUSTER_KINDS: tuple[Literal["BACKENDS", "FRONTENDS"], ...] = ("BACKENDS", "FRONTENDS")
_FULL_ALLOWED = frozenset({"TABLES", "COLUMNS", "FIELDS", "PROCESSLIST"})
_SCOPE_ALLOWED = frozenset({"VARIABLES", "STATUS"})


def _show_data(c: Cursor) -> Statement:
    """``SHOW DATA [FROM [db.]name]``: a lone name is a table of the session's database, or a database
    (the engine decides which, as Doris 2.x reads either)."""
    name = c.qualified_name("a database or table name") if c.accept_any(("FROM", "IN")) else None
    _refuse_trailing(c, "SHOW DATA")
    return _done(c, ShowData(table=name))


_TRAILING = frozenset({"WHERE", "ORDER", "ORDER BY", "LIMIT"})


def _refuse_trailing(c: Cursor, statement: str) -> None:
    """Doris' WHERE / ORDER BY / LIMIT after an introspection SHOW: refused plainly, not as a syntax error."""
    word = c.word()
    if word in _TRAILING:
        raise UnsupportedStatement(f"{statement} … {word} is not supported")


def _show_tablets(c: Cursor) -> Statement:
    """``SHOW TABLETS FROM t [PARTITION (p, …)]`` or ``SHOW TABLET <id>``."""
    if not c.at("FROM"):
        return _done(c, ShowTablet(c.integer("a tablet id")))
    c.expect("FROM")
    table = c.qualified_name()
    partitions = partition_names(c) if c.accept_any(("PARTITION", "PARTITIONS")) else ()
    _refuse_trailing(c, "SHOW TABLETS")
    return _done(c, ShowTablets(table, partitions))


def _show_transaction(c: Cursor) -> Statement:
    """``SHOW TRANSACTION [FROM db] WHERE id = <n> | label = '<label>'``."""
    db = c.identifier("a database name") if c.accept_any(("FROM", "IN")) else None
    c.expect("WHERE")
    if c.accept("ID"):
        c.expect_type(TokenType.EQ, "'=' after ID")
        return _done(c, ShowTransaction(db, txn_id=c.integer("a transaction id")))
    if c.accept("LABEL"):
        c.expect_type(TokenType.EQ, "'=' after LABEL")
        return _done(c, ShowTransaction(db, label=c.string("a quoted label")))
    if c.accept("STATUS"):
        raise UnsupportedStatement("SHOW TRANSACTION WHERE STATUS is not supported: name the id or the label")
    raise c.error("expected id = <transaction id> or label = '<label>'")


def show(c: Cursor) -> Statement:
    """Everything after SHOW."""
    full = c.accept("FULL")
    scope = c.accept_choice(_SCOPES)
    if (full and c.word() not in _FULL_ALLOWED) or (scope and c.word() not in _SCOPE_ALLOWED):
        raise c.error("unexpected SHOW modifier", c.tokens[c.pos - 1])
    for words, kind in _SERVER_INFO.items():
        if c.accept(*words):
            return _show_server_info(c, kind, full, scope)
    if c.accept("PROCESSLIST"):
        return _done(c, ShowProcesslist(full))
    if node_kind := c.accept_choice(_CLUSTER_KINDS):
        return _done(c, ShowCluster(node_kind))
    if c.accept("PROC"):
        return _done(c, ShowProc(c.string("a quoted PROC path such as '/backends'")))
    if c.accept("DATA"):
        return _show_data(c)
    if c.accept_any(("TABLETS", "TABLET")):
        return _show_tablets(c)
    if c.accept("TRANSACTION"):
        return _show_transaction(c)
    if c.accept("PROPERTY"):
        user = c.name_or_string("a user name") if c.accept("FOR") else None
        return _done(c, ShowProperty(user, _like(c)))
    if c.accept_any(("DATABASES", "SCHEMAS")):
        return _done(c, ShowDatabases(*_filter(c)))
    if c.accept("TABLES"):
        return _show_tables(c, full)
    if c.accept("TABLE", "STATUS"):
        return _show_table_status(c)
    if c.accept_any(("COLUMNS", "FIELDS")):
        return _show_columns(c, full)
    if c.accept_any(("INDEX", "INDEXES", "KEYS")):
        table = _table_of_show(c)
        return _done(c, ShowIndex(table, _filter(c, like=False)[1]))
    if c.accept("CREATE", "DATABASE") or c.accept("CREATE", "SCHEMA"):
        c.if_not_exists()
        return _done(c, ShowCreateDatabase(c.identifier("a database name")))
    if c.accept("CREATE", "TABLE"):
        return _done(c, ShowCreateTable(c.qualified_name()))
    if c.accept("CREATE", "VIEW"):
        return _done(c, ShowCreateView(c.qualified_name("a view name")))
    if c.accept("DYNAMIC", "PARTITION", "TABLES"):
        db = c.identifier("a database name") if c.accept_any(("FROM", "IN")) else None
        return _done(c, ShowDynamicPartitionTables(db))
    if c.accept("PARTITIONS"):
        c.expect("FROM")
        return _done(c, ShowPartitions(c.qualified_name()))
    if c.accept("TIME", "TRAVEL"):
        c.expect("ON")
        return _done(c, ShowTimeTravel(c.qualified_name()))
    if c.accept("TAGS"):
        c.expect_any(("ON", "FROM"), "ON")
        return _done(c, ShowTags(c.qualified_name()))
    if c.accept("RESOURCES"):
        return _show_resources(c)
    if c.accept("GRANTS"):
        return users.show_grants(c, all_users=False)
    if c.accept("ALL", "GRANTS"):
        return users.show_grants(c, all_users=True)
    if c.accept("STORAGE", "POLICY"):
        return _show_storage_policy(c)
    if c.accept("LOAD"):
        return loads.show_loads(c, "LOAD")
    if c.accept("EXPORT"):
        return loads.show_loads(c, "EXPORT")
    all_jobs = c.accept("ALL")
    if c.accept("ROUTINE", "LOAD"):
        if c.at("TASK"):
            raise UnsupportedStatement("SHOW ROUTINE LOAD TASK is not supported")
        return _done(c, ShowRoutineLoad(_for_job(c, required=False), all_jobs))
    raise c.error("unknown SHOW statement")


# --------------------------------------------------------------------------- misc


def kill(c: Cursor) -> Statement:
    """Everything after KILL: ``[CONNECTION | QUERY] <connection id>``."""
    query_only = c.accept("QUERY")
    if not query_only:
        c.accept("CONNECTION")
    return _done(c, Kill(c.integer("a connection id (SHOW PROCESSLIST's Id)"), query_only))


def use(c: Cursor) -> Statement:
    name = c.qualified_name("a database name")
    return _done(c, Use(name.name, catalog=name.db))


def describe(c: Cursor) -> Statement:
    table = c.qualified_name()
    return _done(c, Describe(table, full=c.accept("ALL")))


def recover(c: Cursor) -> Statement:
    if c.accept("TABLE"):
        return _done(c, RecoverTable(c.qualified_name()))
    if c.accept_any(_DATABASE_WORDS):
        return _done(c, RecoverDatabase(c.identifier("a database name")))
    if c.at("PARTITION"):
        raise UnsupportedStatement("RECOVER PARTITION is not supported")
    raise c.error("expected TABLE or DATABASE")


def restore(c: Cursor) -> Statement:
    if c.at("SNAPSHOT"):
        raise UnsupportedStatement("RESTORE SNAPSHOT is not supported")
    c.expect("TABLE")
    table = c.qualified_name()
    c.expect("TO")
    return _done(c, RestoreTable(table, parse_as_of(c)))


_REPLICA_KINDS: tuple[Literal["STATUS", "DISTRIBUTION"], ...] = ("STATUS", "DISTRIBUTION")


def _admin_show(c: Cursor) -> Statement:
    """``ADMIN SHOW REPLICA STATUS | DISTRIBUTION FROM t [PARTITION (…)] [WHERE status [!]= '…']`` and
    ``ADMIN SHOW FRONTEND CONFIG [LIKE '…']``."""
    if c.accept("FRONTEND", "CONFIG"):
        return _done(c, AdminShowFrontendConfig(_like(c)))
    if not c.accept("REPLICA"):
        word = c.word()
        raise UnsupportedStatement(f"ADMIN SHOW {word or ''} is not supported".replace("  ", " "))
    kind = c.expect_choice(_REPLICA_KINDS, "STATUS or DISTRIBUTION")
    c.expect("FROM")
    table = c.qualified_name()
    partitions = partition_names(c) if c.accept_any(("PARTITION", "PARTITIONS")) else ()
    status, negated = None, False
    if kind == "STATUS" and c.accept("WHERE"):
        c.expect("STATUS")
        if c.accept_type(TokenType.NEQ):
            negated = True
        else:
            c.expect_type(TokenType.EQ, "'=' or '!=' after STATUS")
        status = c.string("a quoted replica status such as 'OK'").upper()
    return _done(c, AdminShowReplica(kind, table, partitions, status, negated))


def explain(c: Cursor) -> Statement:
    """Everything after EXPLAIN: ``[VERBOSE | GRAPH] <query>``."""
    level: Literal["NORMAL", "VERBOSE", "GRAPH"] = "NORMAL"
    if c.accept("VERBOSE"):
        level = "VERBOSE"
    elif c.accept("GRAPH"):
        level = "GRAPH"
    elif phrase := c.accept_any(("TREE", "PLAN", "PARSED", "ANALYZED", "REWRITTEN", "LOGICAL", "OPTIMIZED",
                                 "PHYSICAL", "SHAPE", "MEMO", "DISTRIBUTED", "ALL", "DUMP")):
        raise UnsupportedStatement(f"EXPLAIN {phrase} is not supported: use EXPLAIN, EXPLAIN VERBOSE or "
                                   "EXPLAIN GRAPH")
    if c.word() in ("INSERT", "UPDATE", "DELETE", "CREATE"):
        raise UnsupportedStatement(f"EXPLAIN {c.word()} is not supported: Strata explains queries")
    return Explain(level, parse_query(c))


def admin(c: Cursor) -> Statement:
    if c.accept("SHOW"):
        return _admin_show(c)
    if not c.accept("COMPACT"):
        word = c.word()
        if word is None:
            raise c.error("expected COMPACT")
        raise UnsupportedStatement(f"ADMIN {word} is not supported")
    c.expect("TABLE")
    table = c.qualified_name()
    partition = c.identifier("a partition name") if c.accept("PARTITION") else None
    c.expect("WHERE")
    c.expect("TYPE")
    c.expect_type(TokenType.EQ, "'=' after TYPE")
    type_token = c.peek()
    compaction = c.string("'BASE' or 'CUMULATIVE'").upper()
    for choice in _COMPACTION_TYPES:
        if compaction == choice:
            return _done(c, AdminCompact(table, choice, partition))
    raise c.error("compaction type must be 'BASE' or 'CUMULATIVE'", type_token)


_SET_WORDS = ("DEFAULT", "ON", "OFF")


def _set_assignment(c: Cursor) -> SetAssignment:
    scope: Literal["SESSION", "GLOBAL", "USER"] = "SESSION"
    if (keyword := c.accept_choice(_SCOPES)) is not None:
        scope = keyword
    elif c.accept("LOCAL"):
        scope = "SESSION"
    elif c.accept_type(TokenType.SESSION_PARAMETER):
        # @@global.x and @@session.x carry the scope in the name; plain @@x is the session value.
        prefix = c.word()
        dot = c.peek(1)
        if prefix in ("GLOBAL", "SESSION", "LOCAL") and dot is not None and dot.token_type == TokenType.DOT:
            c.pos += 2
            scope = "GLOBAL" if prefix == "GLOBAL" else "SESSION"
    elif c.accept_type(TokenType.PARAMETER):
        scope = "USER"
    name = c.identifier("a variable name")
    if not (c.accept_type(TokenType.EQ) or c.accept_type(TokenType.COLON_EQ)):
        raise c.error("expected '=' after the variable name")
    # ON and OFF are words, not expressions, in MySQL's SET (`SET autocommit = ON`).
    word = c.accept_choice(_SET_WORDS)
    value = exp.var(word) if word is not None else c.sqlglot("condition", "a value")
    return SetAssignment(scope, name, value)


def set_statement(c: Cursor) -> Statement:
    """Everything after SET."""
    if c.accept("NAMES"):
        charset = "DEFAULT" if c.accept("DEFAULT") else c.name_or_string("a character set")
        collation = c.name_or_string("a collation") if c.accept("COLLATE") else None
        return _done(c, SetNames(charset, collation))
    if c.accept("CHARACTER", "SET") or c.accept("CHARSET"):
        return _done(c, SetNames(c.name_or_string("a character set")))
    if c.at("TRANSACTION") or (c.word() in ("SESSION", "GLOBAL") and c.word(1) == "TRANSACTION"):
        return Passthrough("SET TRANSACTION", source_text(c))
    if c.accept("PASSWORD"):
        return users.set_password(c)
    if c.accept("PROPERTY"):
        return users.set_property(c)
    if phrase := c.accept_any(("ROLE", "LDAP_ADMIN_PASSWORD")):
        raise UnsupportedStatement(f"SET {phrase} is not supported")
    return _done(c, SetVariables(tuple(c.csv(lambda: _set_assignment(c)))))
