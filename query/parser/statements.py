"""Typed, immutable results of parsing one SQL statement.

Sequences are tuples so that a parsed statement can be shared between tasks without defensive
copies; property lists stay ``dict`` (insertion-ordered) because callers look keys up by name.
Embedded SQL expressions (queries, predicates, assignment values) are sqlglot trees, so the planner
can hand them to sqlglot/duckdb without a second conversion.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal, TypeAlias

from sqlglot import exp

from query.parser.literal_insert import LiteralRows

Properties: TypeAlias = dict[str, str]
KeysModel: TypeAlias = Literal["DUPLICATE", "UNIQUE", "AGGREGATE"]


@dataclass(frozen=True)
class QualifiedName:
    """``[db.]name`` for tables, databases-qualified jobs and policies; quoting already removed."""

    name: str
    db: str | None = None

    def __str__(self) -> str:
        return f"{self.db}.{self.name}" if self.db else self.name


@dataclass(frozen=True)
class AsOfTime:
    """A wall-clock point in time, kept as the literal text so the engine owns time-zone rules."""

    ts: str


@dataclass(frozen=True)
class AsOfVersion:
    """A table version number as produced by ``SHOW TIME TRAVEL``."""

    n: int


@dataclass(frozen=True)
class AsOfTag:
    """A tag's name (``FOR TAG AS OF 'name'``): the snapshot the tag keeps."""

    name: str


# A point in a table's own history, by time or commit number (RESTORE, @incr bounds, a tag's target).
Moment: TypeAlias = AsOfTime | AsOfVersion
AsOf: TypeAlias = Moment | AsOfTag


@dataclass(frozen=True)
class IncrementalRead:
    """``t@incr('key'='value', …)`` as written; ``query.parser.change_range`` checks the pairs, so a
    bad key is an argument error of the read, not a syntax error."""

    params: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class HistoryRead:
    """``t FOR SYSTEM_TIME ALL | BETWEEN start AND end | FROM start TO end``: every version of every
    row whose validity meets the range (BETWEEN includes `end`, FROM … TO excludes it; ALL: every
    version kept). The instants are the literal texts, read in the session's time zone."""

    kind: str  # ALL, BETWEEN or FROM
    start: str | None = None
    end: str | None = None


@dataclass(frozen=True)
class ChangeRange:
    """The commits an incremental read covers: after ``start`` (exclusive) up to ``end`` (inclusive;
    None: the latest commit). Each bound is a commit number, an instant or a tag (its commit)."""

    start: AsOf
    end: AsOf | None


class Statement:
    """Marker base class of every parsed statement."""

    __slots__ = ()


# --------------------------------------------------------------------------- queries and DML


@dataclass(frozen=True)
class Query(Statement):
    """SELECT / WITH / UNION; use ``table_refs(expr)`` to see tables and their AS OF clauses."""

    expr: exp.Expr


@dataclass(frozen=True)
class Insert(Statement):
    table: QualifiedName
    columns: tuple[str, ...] | None
    label: str | None
    query: exp.Expr  # exp.Values or a query
    partitions: tuple[str, ...] = ()
    # INSERT OVERWRITE: the rows replace the table's (or the named partitions') rows.
    overwrite: bool = False
    # INSERT OVERWRITE … PARTITION (*): the partitions replaced are those the rows fall in.
    detect_partitions: bool = False
    # A VALUES list of literals scanned without the parser (query.parser.literal_insert); `query` is
    # then an empty exp.Values.
    literal_rows: LiteralRows | None = None


@dataclass(frozen=True)
class Delete(Statement):
    table: QualifiedName
    partitions: tuple[str, ...]
    where: exp.Expr | None
    # `DELETE FROM t USING t2 [JOIN …] WHERE …`: the other tables (an exp.From without its keyword).
    using: exp.From | None = None
    alias: str | None = None  # `DELETE FROM t AS a …`


@dataclass(frozen=True)
class Update(Statement):
    table: QualifiedName
    assignments: tuple[tuple[str, exp.Expr], ...]
    where: exp.Expr | None
    sources: exp.From | None = None  # `UPDATE t SET … FROM t2 [JOIN …] WHERE …`
    alias: str | None = None  # `UPDATE t AS a SET …`


@dataclass(frozen=True)
class TruncateTable(Statement):
    table: QualifiedName
    partitions: tuple[str, ...] = ()


# --------------------------------------------------------------------------- databases and SHOW


@dataclass(frozen=True)
class CreateDatabase(Statement):
    name: str
    if_not_exists: bool = False
    properties: Properties = field(default_factory=dict)


@dataclass(frozen=True)
class DropDatabase(Statement):
    name: str
    if_exists: bool = False
    force: bool = False


@dataclass(frozen=True)
class ShowDatabases(Statement):
    like: str | None = None
    where: exp.Expr | None = None


@dataclass(frozen=True)
class Use(Statement):
    db: str
    catalog: str | None = None


@dataclass(frozen=True)
class ShowTables(Statement):
    db: str | None = None
    like: str | None = None
    full: bool = False
    where: exp.Expr | None = None


@dataclass(frozen=True)
class ShowTableStatus(Statement):
    """``SHOW TABLE STATUS [FROM db] [LIKE '…' | WHERE …]``."""

    db: str | None = None
    like: str | None = None
    where: exp.Expr | None = None


@dataclass(frozen=True)
class ShowColumns(Statement):
    """``SHOW [FULL] COLUMNS|FIELDS FROM t [FROM db] [LIKE '…' | WHERE …]`` (DESC answers differently)."""

    table: QualifiedName
    full: bool = False
    like: str | None = None
    where: exp.Expr | None = None


@dataclass(frozen=True)
class ShowIndex(Statement):
    """``SHOW INDEX|INDEXES|KEYS FROM t [FROM db] [WHERE …]``."""

    table: QualifiedName
    where: exp.Expr | None = None


@dataclass(frozen=True)
class ShowCreateDatabase(Statement):
    name: str


@dataclass(frozen=True)
class ShowCreateTable(Statement):
    table: QualifiedName


@dataclass(frozen=True)
class ShowPartitions(Statement):
    table: QualifiedName


@dataclass(frozen=True)
class ShowDynamicPartitionTables(Statement):
    """``SHOW DYNAMIC PARTITION TABLES [FROM db]``."""

    db: str | None = None


@dataclass(frozen=True)
class Describe(Statement):
    """``DESC t``, ``DESCRIBE t`` and ``SHOW [FULL] COLUMNS FROM t [FROM db]``."""

    table: QualifiedName
    full: bool = False


# --------------------------------------------------------------------------- table definitions


@dataclass(frozen=True)
class ColumnType:
    """Canonical Doris type: aliases folded (INTEGER→INT, TEXT→STRING, DATEV2→DATE, ...)."""

    name: str
    params: tuple[int, ...] = ()

    def __str__(self) -> str:
        if not self.params:
            return self.name
        return f"{self.name}({','.join(str(p) for p in self.params)})"


class DefaultMarker(StrEnum):
    """Non-literal column defaults; being ``str`` keeps ``ColumnDef.default`` a plain ``str | None``.

    Tell them apart from a string literal such as ``DEFAULT 'NULL'`` with ``isinstance``.
    """

    NULL = "NULL"
    CURRENT_TIMESTAMP = "CURRENT_TIMESTAMP"


@dataclass(frozen=True)
class ColumnDef:
    name: str
    type: ColumnType
    agg: str | None = None
    nullable: bool = True
    default: str | None = None  # literal text without quotes, or a DefaultMarker
    comment: str | None = None
    is_key: bool = False
    auto_increment: int | None = None  # AUTO_INCREMENT[(start)]: the start value (1 when not given)


@dataclass(frozen=True)
class PartitionDef:
    """One partition. ``values`` depends on ``kind``.

    * ``LESS_THAN``: ``(upper_bound,)``; an empty tuple means ``VALUES LESS THAN MAXVALUE``.
    * ``FIXED_RANGE``: ``(lower_bound, upper_bound)`` of ``VALUES [lower, upper)``.
    * ``IN``: one tuple per listed value (1-tuples for single-column partitioning); None is NULL.
    * ``DEFAULT``: no values: the LIST partition of every row no other partition takes (Doris 2.1).

    Each bound is a tuple with one literal per partition column; ``MAXVALUE`` may appear in it.
    """

    name: str
    kind: Literal["LESS_THAN", "FIXED_RANGE", "IN", "DEFAULT"]
    values: tuple[tuple[str | None, ...], ...]
    properties: Properties = field(default_factory=dict)

    @property
    def is_maxvalue(self) -> bool:
        return self.kind == "LESS_THAN" and not self.values


@dataclass(frozen=True)
class BatchRange:
    """``FROM ("lower") TO ("upper") INTERVAL n [unit]``: a run of range partitions Doris names itself;
    ``unit`` is None for integer ranges, else YEAR, MONTH, WEEK, DAY or HOUR."""

    lower: str
    upper: str
    interval: int
    unit: str | None


@dataclass(frozen=True)
class AutoPartition:
    """``AUTO PARTITION BY RANGE (date_trunc(col, 'unit'))`` (``unit`` set) or ``AUTO PARTITION BY LIST
    (cols)`` (``unit`` None): a load creates the partition a row needs."""

    unit: str | None


@dataclass(frozen=True)
class PartitionSpec:
    kind: Literal["RANGE", "LIST"]
    columns: tuple[str, ...]
    partitions: tuple[PartitionDef | BatchRange, ...]
    auto: AutoPartition | None = None


@dataclass(frozen=True)
class Distribution:
    kind: Literal["HASH", "RANDOM"]
    columns: tuple[str, ...]
    buckets: int | None  # None: BUCKETS AUTO or not given


@dataclass(frozen=True)
class CreateTable(Statement):
    table: QualifiedName
    columns: tuple[ColumnDef, ...]
    if_not_exists: bool = False
    engine: str | None = None
    keys_model: KeysModel | None = None
    key_columns: tuple[str, ...] = ()
    comment: str | None = None
    partition: PartitionSpec | None = None
    distribution: Distribution | None = None
    properties: Properties = field(default_factory=dict)


@dataclass(frozen=True)
class CreateTableAs(Statement):
    table: QualifiedName
    query: Query
    if_not_exists: bool = False
    keys_model: KeysModel | None = None
    key_columns: tuple[str, ...] = ()
    partition: PartitionSpec | None = None
    distribution: Distribution | None = None
    properties: Properties = field(default_factory=dict)


@dataclass(frozen=True)
class CreateTableLike(Statement):
    table: QualifiedName
    source: QualifiedName
    if_not_exists: bool = False


@dataclass(frozen=True)
class CreateTableClone(Statement):
    """CREATE TABLE t2 CLONE t [AS OF '<ts>' | FOR VERSION AS OF n | TAG 'name' | FOR … AS OF …]:
    a zero-copy clone of `source`'s snapshot (None: its latest state)."""

    table: QualifiedName
    source: QualifiedName
    as_of: AsOf | None = None
    if_not_exists: bool = False


@dataclass(frozen=True)
class ViewColumnDef:
    """An entry of a view's column list: the name its query's column gets, and a COMMENT."""

    name: str
    comment: str = ""


@dataclass(frozen=True)
class CreateView(Statement):
    """``CREATE [OR REPLACE] VIEW [IF NOT EXISTS] v [(cols)] [COMMENT '…'] AS query``. ``text`` is
    the query as written; positions in ``query``'s nodes count from ``text_start`` in the statement."""

    view: QualifiedName
    query: Query
    text: str
    text_start: int
    columns: tuple[ViewColumnDef, ...] = ()
    comment: str | None = None
    or_replace: bool = False
    if_not_exists: bool = False


@dataclass(frozen=True)
class AlterView(Statement):
    """``ALTER VIEW v [(cols)] AS query`` (``text`` and ``text_start`` as in CreateView)."""

    view: QualifiedName
    query: Query
    text: str
    text_start: int
    columns: tuple[ViewColumnDef, ...] = ()


@dataclass(frozen=True)
class DropView(Statement):
    view: QualifiedName
    if_exists: bool = False


@dataclass(frozen=True)
class ShowCreateView(Statement):
    view: QualifiedName


@dataclass(frozen=True)
class DropTable(Statement):
    table: QualifiedName
    if_exists: bool = False
    force: bool = False


@dataclass(frozen=True)
class RecoverTable(Statement):
    table: QualifiedName


@dataclass(frozen=True)
class RecoverDatabase(Statement):
    name: str


# --------------------------------------------------------------------------- ALTER TABLE


@dataclass(frozen=True)
class ColumnPosition:
    first: bool = False
    after: str | None = None


@dataclass(frozen=True)
class AddColumn:
    column: ColumnDef
    position: ColumnPosition | None = None


@dataclass(frozen=True)
class AddColumns:
    columns: tuple[ColumnDef, ...]


@dataclass(frozen=True)
class DropColumn:
    name: str


@dataclass(frozen=True)
class ModifyColumn:
    column: ColumnDef
    position: ColumnPosition | None = None


@dataclass(frozen=True)
class RenameColumn:
    old: str
    new: str


@dataclass(frozen=True)
class AddPartition:
    partition: PartitionDef
    if_not_exists: bool = False
    distribution: Distribution | None = None


@dataclass(frozen=True)
class DropPartition:
    name: str
    if_exists: bool = False
    force: bool = False


@dataclass(frozen=True)
class SetTableProperties:
    properties: Properties


@dataclass(frozen=True)
class ModifyPartition:
    """``MODIFY PARTITION p | (p1, p2) | (*) SET (...)``; ``(*)`` sets ``all_partitions``."""

    partitions: tuple[str, ...]
    properties: Properties
    all_partitions: bool = False


@dataclass(frozen=True)
class RenameTable:
    new_name: str


@dataclass(frozen=True)
class ReplaceWithTable:
    """``REPLACE WITH TABLE other [PROPERTIES ('swap' = 'true' | 'false')] [FORCE]`` (Doris; swap
    defaults to true). FORCE drops the replaced table for good when swap is false."""

    other: str
    swap: bool = True
    force: bool = False


AlterAction: TypeAlias = (
    AddColumn
    | AddColumns
    | DropColumn
    | ModifyColumn
    | RenameColumn
    | AddPartition
    | DropPartition
    | SetTableProperties
    | ModifyPartition
    | RenameTable
    | ReplaceWithTable
)


@dataclass(frozen=True)
class AlterTable(Statement):
    table: QualifiedName
    actions: tuple[AlterAction, ...]


# --------------------------------------------------------------------------- time travel


@dataclass(frozen=True)
class ShowTimeTravel(Statement):
    table: QualifiedName


@dataclass(frozen=True)
class RestoreTable(Statement):
    table: QualifiedName
    as_of: Moment


@dataclass(frozen=True)
class CreateTag(Statement):
    """ALTER TABLE t CREATE TAG name [AS OF …] [PROPERTIES ("retention_days" = "n")]."""

    table: QualifiedName
    name: str
    as_of: Moment | None = None
    properties: Properties = field(default_factory=dict)


@dataclass(frozen=True)
class DropTag(Statement):
    table: QualifiedName
    name: str


@dataclass(frozen=True)
class ShowTags(Statement):
    table: QualifiedName


@dataclass(frozen=True)
class AdminCompact(Statement):
    table: QualifiedName
    compaction_type: Literal["BASE", "CUMULATIVE"]
    partition: str | None = None


# --------------------------------------------------------------------------- tiered storage


@dataclass(frozen=True)
class CreateResource(Statement):
    name: str
    properties: Properties
    if_not_exists: bool = False


@dataclass(frozen=True)
class AlterResource(Statement):
    name: str
    properties: Properties


@dataclass(frozen=True)
class DropResource(Statement):
    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class ShowResources(Statement):
    name: str | None = None  # WHERE NAME = "x"
    like: str | None = None


@dataclass(frozen=True)
class CreateStoragePolicy(Statement):
    name: str
    properties: Properties
    if_not_exists: bool = False


@dataclass(frozen=True)
class AlterStoragePolicy(Statement):
    name: str
    properties: Properties


@dataclass(frozen=True)
class DropStoragePolicy(Statement):
    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class ShowStoragePolicy(Statement):
    using: bool = False
    policy: str | None = None  # USING FOR p


# --------------------------------------------------------------------------- routine load


@dataclass(frozen=True)
class LoadColumn:
    """An entry of ``COLUMNS(...)``: a source column, or a derived ``name = expr``."""

    name: str
    expr: exp.Expr | None = None


@dataclass(frozen=True)
class CreateRoutineLoad(Statement):
    job: QualifiedName
    table: QualifiedName
    source: str  # upper-case, e.g. KAFKA
    source_properties: Properties
    properties: Properties = field(default_factory=dict)
    column_separator: str | None = None
    columns: tuple[LoadColumn, ...] = ()
    where: exp.Expr | None = None
    partitions: tuple[str, ...] = ()


@dataclass(frozen=True)
class RoutineLoadControl(Statement):
    """PAUSE / RESUME / STOP ROUTINE LOAD; ``job`` is None for ``PAUSE|RESUME ALL ROUTINE LOAD``."""

    action: Literal["PAUSE", "RESUME", "STOP"]
    job: QualifiedName | None


@dataclass(frozen=True)
class ShowRoutineLoad(Statement):
    job: QualifiedName | None = None
    all: bool = False


# --------------------------------------------------------------------------- S3: OUTFILE, EXPORT, Broker Load


@dataclass(frozen=True)
class SelectIntoOutfile(Statement):
    """``<query> INTO OUTFILE "s3://bucket/prefix_" [FORMAT AS f] [PROPERTIES (…)]``."""

    query: exp.Expr
    path: str
    format: str = "csv"
    properties: Properties = field(default_factory=dict)


@dataclass(frozen=True)
class ExportTable(Statement):
    """``EXPORT TABLE t [FOR TIME | VERSION | TAG AS OF …] [PARTITION (…)] [WHERE …] TO "s3://…" [PROPERTIES (…)]
    WITH S3 (…)``."""

    table: QualifiedName
    path: str
    partitions: tuple[str, ...] = ()
    where: exp.Expr | None = None
    as_of: AsOf | None = None
    properties: Properties = field(default_factory=dict)
    s3_properties: Properties = field(default_factory=dict)


@dataclass(frozen=True)
class LoadData:
    """One ``DATA INFILE(…) INTO TABLE t …`` of a Broker Load."""

    paths: tuple[str, ...]
    table: str
    partitions: tuple[str, ...] = ()
    column_separator: str | None = None
    line_delimiter: str | None = None
    format: str | None = None
    columns: tuple[str, ...] = ()
    set: tuple[LoadColumn, ...] = ()
    where: exp.Expr | None = None
    merge_type: str = "APPEND"  # APPEND, DELETE (every row deletes its key) or MERGE (rows DELETE ON picks delete)
    delete_on: exp.Expr | None = None


@dataclass(frozen=True)
class BrokerLoad(Statement):
    """``LOAD LABEL db.label (DATA INFILE(…) INTO TABLE t …, …) WITH S3 (…) [PROPERTIES (…)]``."""

    label: QualifiedName
    data: tuple[LoadData, ...]
    s3_properties: Properties
    properties: Properties = field(default_factory=dict)


@dataclass(frozen=True)
class ShowLoads(Statement):
    """``SHOW LOAD`` / ``SHOW EXPORT`` ``[FROM db] [WHERE LABEL = "l" | LABEL LIKE "p" | STATE = "s"]
    [ORDER BY …] [LIMIT n]``; ``kind`` is LOAD or EXPORT."""

    kind: Literal["LOAD", "EXPORT"]
    db: str | None = None
    label: str | None = None
    label_like: str | None = None
    state: str | None = None
    limit: int | None = None


@dataclass(frozen=True)
class CancelLoads(Statement):
    """``CANCEL LOAD|EXPORT [FROM db] WHERE LABEL = "l"`` (or ``LABEL LIKE``, ``STATE =``)."""

    kind: Literal["LOAD", "EXPORT"]
    db: str | None = None
    label: str | None = None
    label_like: str | None = None
    state: str | None = None


# --------------------------------------------------------------------------- session / client chatter


@dataclass(frozen=True)
class SetAssignment:
    """``scope`` is SESSION, GLOBAL, or USER for ``@var``."""

    scope: Literal["SESSION", "GLOBAL", "USER"]
    name: str
    value: exp.Expr


@dataclass(frozen=True)
class SetVariables(Statement):
    assignments: tuple[SetAssignment, ...]


@dataclass(frozen=True)
class SetNames(Statement):
    charset: str
    collation: str | None = None


@dataclass(frozen=True)
class ShowServerInfo(Statement):
    """SHOW VARIABLES / STATUS / WARNINGS / ERRORS / ENGINES / CHARSET / COLLATION / PROCEDURE STATUS /
    FUNCTION STATUS / PLUGINS."""

    kind: str
    full: bool = False
    scope: Literal["SESSION", "GLOBAL"] | None = None
    like: str | None = None
    where: exp.Expr | None = None


# --------------------------------------------------------------------------- cluster introspection


@dataclass(frozen=True)
class ShowCluster(Statement):
    """``SHOW BACKENDS`` / ``SHOW FRONTENDS``."""

    kind: Literal["BACKENDS", "FRONTENDS"]


@dataclass(frozen=True)
class ShowProc(Statement):
    """``SHOW PROC '/path'``."""

    path: str


@dataclass(frozen=True)
class ShowData(Statement):
    """``SHOW DATA [FROM db | FROM [db.]table]``: ``table`` None lists a database (``db``, or the session's)."""

    db: str | None = None
    table: QualifiedName | None = None


@dataclass(frozen=True)
class ShowTablets(Statement):
    """``SHOW TABLETS FROM t [PARTITION (p, …)]``."""

    table: QualifiedName
    partitions: tuple[str, ...] = ()


@dataclass(frozen=True)
class ShowTablet(Statement):
    """``SHOW TABLET <id>``."""

    tablet_id: int


@dataclass(frozen=True)
class ShowTransaction(Statement):
    """``SHOW TRANSACTION [FROM db] WHERE id = n | label = 'l'``."""

    db: str | None = None
    txn_id: int | None = None
    label: str | None = None


@dataclass(frozen=True)
class AdminShowReplica(Statement):
    """``ADMIN SHOW REPLICA STATUS | DISTRIBUTION FROM t [PARTITION (p, …)] [WHERE status = '…']``."""

    kind: Literal["STATUS", "DISTRIBUTION"]
    table: QualifiedName
    partitions: tuple[str, ...] = ()
    status: str | None = None  # STATUS' filter: `status = 'OK'` or `status != 'OK'`
    status_negated: bool = False


@dataclass(frozen=True)
class AdminShowFrontendConfig(Statement):
    """``ADMIN SHOW FRONTEND CONFIG [LIKE 'pattern']``."""

    like: str | None = None


@dataclass(frozen=True)
class Explain(Statement):
    """``EXPLAIN [VERBOSE | GRAPH | …] <query>``: what the query's read resolves to, without running it."""

    level: Literal["NORMAL", "VERBOSE", "GRAPH"]
    query: Query


@dataclass(frozen=True)
class Passthrough(Statement):
    """Client housekeeping (e.g. ``SET SESSION TRANSACTION ...``) the server may acknowledge blindly."""

    kind: str
    sql: str


# --------------------------------------------------------------------------- users and privileges


@dataclass(frozen=True)
class UserIdentity:
    """``'name'@'host'``; Strata's users all log in from any host, so host is '%' unless given."""

    name: str
    host: str = "%"

    def __str__(self) -> str:
        return f"'{self.name}'@'{self.host}'"


@dataclass(frozen=True)
class PasswordPolicy:
    """Doris' login lockout: after ``failed_login_attempts`` consecutive failures the account is
    locked for ``password_lock_time_s`` seconds (-1: UNBOUNDED). None: not given (unchanged)."""

    failed_login_attempts: int | None = None
    password_lock_time_s: int | None = None


@dataclass(frozen=True)
class CreateUser(Statement):
    user: UserIdentity
    password: str | None = None
    if_not_exists: bool = False
    policy: PasswordPolicy = PasswordPolicy()


@dataclass(frozen=True)
class AlterUser(Statement):
    """``ALTER USER [IF EXISTS] user [IDENTIFIED BY '…'] [FAILED_LOGIN_ATTEMPTS n]
    [PASSWORD_LOCK_TIME …] [ACCOUNT_UNLOCK]``."""

    user: UserIdentity
    password: str | None = None
    if_exists: bool = False
    policy: PasswordPolicy = PasswordPolicy()
    unlock: bool = False


@dataclass(frozen=True)
class SetUserProperty(Statement):
    """``SET PROPERTY [FOR 'user'] 'key' = 'value'`` (Doris); ``user`` None is the session's own."""

    user: str | None
    key: str
    value: str


@dataclass(frozen=True)
class ShowProperty(Statement):
    """``SHOW PROPERTY [FOR 'user'] [LIKE 'pattern']`` (Doris); ``user`` None is the session's own."""

    user: str | None = None
    like: str | None = None


@dataclass(frozen=True)
class ShowProcesslist(Statement):
    full: bool = False


@dataclass(frozen=True)
class Kill(Statement):
    """``KILL [CONNECTION] id`` closes a connection; ``KILL QUERY id`` stops its running statement."""

    connection_id: int
    query_only: bool = False


@dataclass(frozen=True)
class DropUser(Statement):
    user: UserIdentity
    if_exists: bool = False


@dataclass(frozen=True)
class SetPassword(Statement):
    """``SET PASSWORD [FOR user] = PASSWORD('…')``; ``user`` None is the session's own."""

    user: UserIdentity | None
    password: str


@dataclass(frozen=True)
class GrantPrivileges(Statement):
    """GRANT (``revoke`` False) or REVOKE privileges on ``db.table`` (``*`` for all)."""

    privileges: tuple[str, ...]
    db: str
    table: str
    user: UserIdentity
    revoke: bool = False


@dataclass(frozen=True)
class ShowGrants(Statement):
    """``SHOW GRANTS`` (own), ``SHOW GRANTS FOR user``, ``SHOW ALL GRANTS``."""

    user: UserIdentity | None = None
    all: bool = False
