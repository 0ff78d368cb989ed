"""CREATE TABLE and ALTER TABLE, parsed by hand.

sqlglot's Doris grammar rejects LARGEINT, aggregation types on value columns and several partition
forms, and mis-reads MODIFY PARTITION, so table DDL is parsed here; only a CTAS query goes to sqlglot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from sqlglot.tokens import TokenType

from query.parser.cursor import Cursor
from query.parser.dml import parse_query
from query.parser.errors import UnsupportedStatement
from query.parser.statements import (
    AddColumn,
    AddColumns,
    AddPartition,
    AlterAction,
    AlterTable,
    AsOf,
    AsOfTag,
    AsOfTime,
    AsOfVersion,
    AutoPartition,
    BatchRange,
    ColumnDef,
    ColumnPosition,
    ColumnType,
    CreateTable,
    CreateTableAs,
    CreateTableClone,
    CreateTableLike,
    CreateTag,
    DefaultMarker,
    Distribution,
    DropColumn,
    DropPartition,
    DropTag,
    KeysModel,
    ModifyColumn,
    ModifyPartition,
    PartitionDef,
    PartitionSpec,
    Properties,
    QualifiedName,
    RenameColumn,
    RenameTable,
    ReplaceWithTable,
    SetTableProperties,
    Statement,
)

# Canonical type -> how many parameters it takes.
_TYPE_PARAMS: dict[str, int] = {
    "BOOLEAN": 0,
    "TINYINT": 0,
    "SMALLINT": 0,
    "INT": 0,
    "BIGINT": 0,
    "LARGEINT": 0,
    "FLOAT": 0,
    "DOUBLE": 0,
    "DECIMAL": 2,
    "DECIMALV3": 2,
    "DATE": 0,
    "DATETIME": 1,
    "CHAR": 1,
    "VARCHAR": 1,
    "STRING": 0,
    "JSON": 0,
    "BITMAP": 0,
    "HLL": 0,
}
_TYPE_ALIASES = {
    "BOOL": "BOOLEAN",
    "INTEGER": "INT",
    "TEXT": "STRING",
    "DATEV2": "DATE",
    "DATETIMEV2": "DATETIME",
    "DECIMALV2": "DECIMAL",
    "JSONB": "JSON",
    # MySQL spellings Doris also accepts (SQLAlchemy's MySQL dialect, pandas.to_sql, dump tools).
    "TINYTEXT": "STRING",
    "MEDIUMTEXT": "STRING",
    "LONGTEXT": "STRING",
    "REAL": "DOUBLE",
    "NUMERIC": "DECIMAL",
    "DEC": "DECIMAL",
}
# MySQL's FLOAT(p): a precision in bits, FLOAT up to 24 and DOUBLE up to 53 (SQLAlchemy sends FLOAT(53)
# for a Python float / pandas float64).
_FLOAT_SINGLE_MAX_BITS = 24
_FLOAT_MAX_BITS = 53
# MySQL tools emit INT(11); the display width means nothing to Doris, so it is dropped.
_DISPLAY_WIDTH_TYPES = frozenset({"TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT"})
_UNSUPPORTED_TYPES = frozenset(
    {"ARRAY", "MAP", "STRUCT", "QUANTILE_STATE", "AGG_STATE", "VARIANT", "IPV4", "IPV6"}
)

SUPPORTED_AGGREGATIONS = frozenset({"SUM", "MIN", "MAX", "REPLACE", "REPLACE_IF_NOT_NULL", "BITMAP_UNION", "HLL_UNION"})
_UNSUPPORTED_AGGREGATIONS = frozenset({"QUANTILE_UNION", "GENERIC"})
_KEYS_MODELS: tuple[KeysModel, ...] = ("DUPLICATE", "UNIQUE", "AGGREGATE")
_PARTITION_KINDS: tuple[Literal["RANGE", "LIST"], ...] = ("RANGE", "LIST")
_DISTRIBUTION_KINDS: tuple[Literal["HASH", "RANDOM"], ...] = ("HASH", "RANDOM")


# --------------------------------------------------------------------------- columns


def column_type(c: Cursor) -> ColumnType:
    token = c.peek()
    word = c.word()
    if word in _UNSUPPORTED_TYPES:
        raise UnsupportedStatement(f"column type {word} is not supported")
    name = _TYPE_ALIASES.get(word or "", word or "")
    if name not in _TYPE_PARAMS:
        raise c.error("expected a column type")
    c.advance()
    params: tuple[int, ...] = ()
    if c.at_type(TokenType.L_PAREN):
        params = tuple(c.parens(lambda: c.integer("an integer type parameter")))
    if name in _DISPLAY_WIDTH_TYPES and len(params) == 1:
        params = ()
    if name == "FLOAT" and len(params) == 1:
        if params[0] > _FLOAT_MAX_BITS:
            raise c.error(f"FLOAT precision {params[0]} is out of range (0 to {_FLOAT_MAX_BITS})", token)
        name, params = ("FLOAT" if params[0] <= _FLOAT_SINGLE_MAX_BITS else "DOUBLE"), ()
    if len(params) > _TYPE_PARAMS[name]:
        raise c.error(f"too many parameters for type {name}", token)
    return ColumnType(name, params)


def column_def(c: Cursor) -> ColumnDef:
    name = c.identifier("a column name")
    ctype = column_type(c)
    seen: set[str] = set()

    def once(attr: str) -> None:
        # Attributes may come in any order (Doris is lenient too) but each only once.
        if attr in seen:
            raise c.error(f"{attr} given twice for column {name}", c.tokens[c.pos - 1])
        seen.add(attr)

    is_key = False
    auto_increment: int | None = None
    nullable = True
    agg = default = comment = None
    while True:
        if c.accept("KEY"):
            once("KEY")
            is_key = True
        elif (word := c.accept_any(SUPPORTED_AGGREGATIONS | _UNSUPPORTED_AGGREGATIONS)) is not None:
            if word in _UNSUPPORTED_AGGREGATIONS:
                raise UnsupportedStatement(f"aggregation type {word} is not supported")
            once("aggregation type")
            agg = word
        elif c.at("NOT", "NULL") or c.at("NULL"):
            once("NULL")
            nullable = not c.accept("NOT")
            c.expect("NULL")
        elif c.accept("AUTO_INCREMENT"):
            once("AUTO_INCREMENT")
            auto_increment = 1
            if c.accept_type(TokenType.L_PAREN):
                auto_increment = c.integer("an AUTO_INCREMENT start value (a non-negative integer)")
                c.expect_type(TokenType.R_PAREN, "')' after the AUTO_INCREMENT start value")
        elif c.accept("DEFAULT"):
            once("DEFAULT")
            default = _default_value(c)
        elif c.accept("COMMENT"):
            once("COMMENT")
            comment = c.string("a comment string")
        elif c.at("ON", "UPDATE"):
            raise UnsupportedStatement("ON UPDATE CURRENT_TIMESTAMP is not supported")
        else:
            break
    return ColumnDef(name, ctype, agg, nullable, default, comment, is_key, auto_increment)


def _default_value(c: Cursor) -> str:
    if c.accept("NULL"):
        return DefaultMarker.NULL
    if c.accept("CURRENT_TIMESTAMP") or c.accept("NOW"):
        # CURRENT_TIMESTAMP(3) carries DATETIME(3) precision, which the column type already has.
        if c.at_type(TokenType.L_PAREN):
            c.expect_type(TokenType.L_PAREN, "'('")
            if not c.accept_type(TokenType.R_PAREN):
                c.integer("a precision")
                c.expect_type(TokenType.R_PAREN, "')'")
        return DefaultMarker.CURRENT_TIMESTAMP
    return c.literal("a default value (literal, NULL or CURRENT_TIMESTAMP)")


def _column_position(c: Cursor) -> ColumnPosition | None:
    if c.accept("FIRST"):
        return ColumnPosition(first=True)
    if c.accept("AFTER"):
        return ColumnPosition(after=c.identifier("a column name after AFTER"))
    return None


# --------------------------------------------------------------------------- partitions and buckets


def _bound(c: Cursor) -> tuple[str, ...]:
    def value() -> str:
        return "MAXVALUE" if c.accept("MAXVALUE") else c.literal("a partition value")

    return tuple(c.parens(value))


def _list_value(c: Cursor) -> str | None:
    """One value of a LIST partition: a literal, or NULL (the partition of rows whose column is NULL)."""
    return None if c.accept("NULL") else c.literal("a partition value")


def _in_value(c: Cursor) -> tuple[str | None, ...]:
    return tuple(c.parens(lambda: _list_value(c))) if c.at_type(TokenType.L_PAREN) else (_list_value(c),)


def _at_partition_end(c: Cursor) -> bool:
    return c.at_end() or c.at_type(TokenType.COMMA) or c.at_type(TokenType.R_PAREN) or c.at_type(TokenType.L_PAREN) \
        or c.at("DISTRIBUTED")


def partition_def(c: Cursor) -> tuple[PartitionDef, bool]:
    """``PARTITION [IF NOT EXISTS] p VALUES ... [("k"="v")]``, or ``PARTITION p`` alone (a LIST table's
    DEFAULT partition); returns the definition and IF NOT EXISTS."""
    c.expect("PARTITION")
    if_not_exists = c.if_not_exists()
    name = c.identifier("a partition name")
    values: tuple[tuple[str | None, ...], ...]
    kind: Literal["LESS_THAN", "FIXED_RANGE", "IN", "DEFAULT"]
    if _at_partition_end(c):
        kind, values = "DEFAULT", ()
    else:
        c.expect("VALUES")
        if c.accept("LESS", "THAN"):
            kind = "LESS_THAN"
            values = () if c.accept("MAXVALUE") else (_bound(c),)
        elif c.accept_type(TokenType.L_BRACKET):
            kind = "FIXED_RANGE"
            lower = _bound(c)
            c.expect_type(TokenType.COMMA, "',' between the range bounds")
            upper = _bound(c)
            c.expect_type(TokenType.R_PAREN, "')' closing the half-open range [lower, upper)")
            values = (lower, upper)
        elif c.accept("IN"):
            kind = "IN"
            values = tuple(c.parens(lambda: _in_value(c)))
        else:
            raise c.error("expected LESS THAN, '[' or IN after VALUES")
    properties = c.properties() if c.at_type(TokenType.L_PAREN) else {}
    return PartitionDef(name, kind, values, properties), if_not_exists


# Units of a batch of range partitions (Doris' MultiPartitionDesc); none for integer ranges.
_BATCH_UNITS = ("YEAR", "MONTH", "WEEK", "DAY", "HOUR")
# Units of AUTO PARTITION BY RANGE (date_trunc(col, 'unit')).
_AUTO_UNITS = ("year", "quarter", "month", "week", "day", "hour", "minute", "second")


def _batch_range(c: Cursor) -> BatchRange:
    """``FROM ("lower") TO ("upper") INTERVAL n [YEAR|MONTH|WEEK|DAY|HOUR]``."""
    c.expect("FROM")
    lower = c.parens(lambda: c.literal("the first partition's lower bound"))
    c.expect("TO")
    upper = c.parens(lambda: c.literal("the last partition's upper bound"))
    if len(lower) != 1 or len(upper) != 1:
        raise c.error("FROM ... TO ... INTERVAL takes one value each: batch partitions need a single partition column")
    c.expect("INTERVAL")
    interval = c.integer("the interval, a positive integer")
    unit = c.accept_choice(_BATCH_UNITS)
    if unit is None and not (c.at_type(TokenType.COMMA) or c.at_type(TokenType.R_PAREN)):
        raise c.error(f"expected one of {', '.join(_BATCH_UNITS)} after the interval (none for integer ranges)")
    return BatchRange(lower[0], upper[0], interval, unit)


def _auto_expression(c: Cursor) -> tuple[tuple[str, ...], AutoPartition]:
    """``(date_trunc(col, 'unit'))`` of AUTO PARTITION BY RANGE (also ``date_trunc('unit', col)``)."""
    c.expect_type(TokenType.L_PAREN, "'(' before date_trunc")
    if not c.accept("DATE_TRUNC"):
        raise c.error("AUTO PARTITION BY RANGE takes date_trunc(column, 'unit')")
    c.expect_type(TokenType.L_PAREN, "'(' after date_trunc")
    token = c.peek()
    if token is not None and token.token_type == TokenType.STRING:
        unit = c.string()
        c.expect_type(TokenType.COMMA, "',' after the unit")
        column = c.identifier("the partition column")
    else:
        column = c.identifier("the partition column")
        c.expect_type(TokenType.COMMA, "',' after the column")
        unit = c.string("the unit, e.g. 'day'")
    c.expect_type(TokenType.R_PAREN, "')' closing date_trunc")
    c.expect_type(TokenType.R_PAREN, "')' closing the partition expression")
    if unit.lower() not in _AUTO_UNITS:
        raise c.error(f"date_trunc unit '{unit}' is not one of {', '.join(_AUTO_UNITS)}")
    return (column,), AutoPartition(unit.lower())


def _partition_spec(c: Cursor) -> PartitionSpec:
    auto = c.accept("AUTO", "PARTITION", "BY")
    kind = c.expect_choice(_PARTITION_KINDS, "RANGE or LIST")
    auto_spec: AutoPartition | None = None
    if auto and kind == "RANGE":
        columns, auto_spec = _auto_expression(c)
    else:
        columns = c.name_list("a partition column")
        auto_spec = AutoPartition(None) if auto else None
    allowed = ("LESS_THAN", "FIXED_RANGE") if kind == "RANGE" else ("IN", "DEFAULT")
    c.expect_type(TokenType.L_PAREN, "'(' opening the partition list")
    partitions: list[PartitionDef | BatchRange] = []
    if not c.accept_type(TokenType.R_PAREN):
        while True:
            name_token = c.peek(1)
            if c.at("FROM"):
                if kind != "RANGE":
                    raise c.error("FROM ... TO ... INTERVAL makes range partitions: the table is LIST partitioned")
                partitions.append(_batch_range(c))
            else:
                partition, _ = partition_def(c)
                if partition.kind not in allowed:
                    raise c.error(f"partition {partition.name} does not match PARTITION BY {kind}", name_token)
                partitions.append(partition)
            if c.accept_type(TokenType.R_PAREN):
                break
            c.expect_type(TokenType.COMMA, "',' or ')' in the partition list")
    return PartitionSpec(kind, columns, tuple(partitions), auto_spec)


def distribution(c: Cursor) -> Distribution:
    """The part after ``DISTRIBUTED BY``."""
    kind = c.expect_choice(_DISTRIBUTION_KINDS, "HASH or RANDOM")
    columns = c.name_list("a distribution column") if kind == "HASH" else ()
    buckets: int | None = None
    if c.accept("BUCKETS") and not c.accept("AUTO"):
        token = c.peek()
        buckets = c.integer("a bucket count or AUTO")
        if buckets <= 0:
            raise c.error("bucket count must be positive", token)
    return Distribution(kind, columns, buckets)


# --------------------------------------------------------------------------- CREATE TABLE


@dataclass
class _TableOptions:
    engine: str | None = None
    keys_model: KeysModel | None = None
    key_columns: tuple[str, ...] = ()
    comment: str | None = None
    partition: PartitionSpec | None = None
    distribution: Distribution | None = None
    properties: Properties = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)


def _table_options(c: Cursor) -> _TableOptions:
    opts = _TableOptions()

    def clause(name: str) -> None:
        if name in opts.seen:
            raise c.error(f"duplicate {name} clause", c.tokens[c.pos - 1])
        opts.seen.add(name)

    while not c.at_end():
        if c.accept("ENGINE"):
            clause("ENGINE")
            c.accept_type(TokenType.EQ)
            engine = c.identifier("an engine name").upper()
            if engine != "OLAP":
                raise UnsupportedStatement(f"ENGINE={engine} is not supported")
            opts.engine = engine
        elif c.word(1) == "KEY" and (model := c.accept_choice(_KEYS_MODELS)) is not None:
            c.expect("KEY")
            clause("KEY")
            opts.keys_model = model
            opts.key_columns = c.name_list("a key column")
        elif c.accept("COMMENT"):
            clause("COMMENT")
            opts.comment = c.string("a comment string")
        elif c.accept("PARTITION", "BY") or c.at("AUTO", "PARTITION", "BY"):
            clause("PARTITION BY")
            opts.partition = _partition_spec(c)
        elif c.accept("DISTRIBUTED", "BY"):
            clause("DISTRIBUTED BY")
            opts.distribution = distribution(c)
        elif c.at("ROLLUP"):
            raise UnsupportedStatement(f"ROLLUP (…): {ROLLUP_ALTERNATIVE}")
        elif c.accept("PROPERTIES"):
            clause("PROPERTIES")
            opts.properties = c.properties()
        else:
            break
    return opts


def _table_element(c: Cursor) -> ColumnDef:
    if c.at("INDEX"):
        raise UnsupportedStatement("INDEX definitions are not supported")
    return column_def(c)


def _clone_as_of(c: Cursor) -> AsOf | None:
    """The snapshot a CLONE takes: ``AS OF '<ts>'``, ``TAG 'name'``, or the time-travel clauses of a
    read (``FOR TIME | VERSION | TAG AS OF …``); None: the latest state."""
    from query.parser.misc import parse_read_as_of  # misc dispatches here: imported late

    if c.accept("AS", "OF"):
        return AsOfTime(c.string("a quoted timestamp literal"))
    if c.accept("TAG"):
        return AsOfTag(c.string("a quoted tag name"))
    if c.accept("FOR"):
        return parse_read_as_of(c)
    return None


def create_table(c: Cursor) -> Statement:
    """Everything after ``CREATE TABLE``."""
    if_not_exists = c.if_not_exists()
    table = c.qualified_name()
    if c.accept("LIKE"):
        source = c.qualified_name("the table to copy")
        c.expect_end()
        return CreateTableLike(table, source, if_not_exists)
    if c.accept("CLONE"):
        source = c.qualified_name("the table to clone")
        clone = CreateTableClone(table, source, _clone_as_of(c), if_not_exists)
        c.expect_end()
        return clone
    columns: tuple[ColumnDef, ...] = ()
    if c.at_type(TokenType.L_PAREN):
        columns = tuple(c.parens(lambda: _table_element(c)))
    opts = _table_options(c)
    if c.accept("AS"):
        if columns:
            raise c.error("CREATE TABLE ... AS SELECT takes no column definitions", c.tokens[c.pos - 1])
        return CreateTableAs(
            table,
            parse_query(c),
            if_not_exists,
            opts.keys_model,
            opts.key_columns,
            opts.partition,
            opts.distribution,
            opts.properties,
        )
    if not columns:
        raise c.error("expected column definitions, LIKE or AS SELECT")
    c.expect_end()
    return CreateTable(
        table,
        columns,
        if_not_exists,
        opts.engine,
        opts.keys_model,
        opts.key_columns,
        opts.comment,
        opts.partition,
        opts.distribution,
        opts.properties,
    )


# --------------------------------------------------------------------------- ALTER TABLE


# Doris' rollups are pre-aggregated copies of a table kept in step with it; Strata keeps one copy of
# each table, so it refuses them and says what gives the same answers.
ROLLUP_ALTERNATIVE = ("rollups are not supported: Strata keeps one copy of each table; for the rollup's "
                      "rows create a table with CREATE TABLE … AGGREGATE KEY (…) AS SELECT … GROUP BY … (or a "
                      "view), and query it")


def _unsupported_alter(phrase: str) -> UnsupportedStatement:
    if "ROLLUP" in phrase:
        return UnsupportedStatement(f"ALTER TABLE ... {phrase}: {ROLLUP_ALTERNATIVE}")
    return UnsupportedStatement(f"ALTER TABLE ... {phrase} is not supported")


def _alter_add(c: Cursor) -> AlterAction:
    if c.accept("COLUMN"):
        if c.at_type(TokenType.L_PAREN):
            return AddColumns(tuple(c.parens(lambda: column_def(c))))
        return AddColumn(column_def(c), _column_position(c))
    if c.at("PARTITION"):
        partition, if_not_exists = partition_def(c)
        dist = distribution(c) if c.accept("DISTRIBUTED", "BY") else None
        return AddPartition(partition, if_not_exists, dist)
    if phrase := c.accept_any(("ROLLUP", "INDEX", "TEMPORARY", "PARTITIONS")):
        # ADD PARTITIONS FROM ... TO ... INTERVAL is Doris 3.0; batches are taken at CREATE TABLE.
        raise _unsupported_alter(f"ADD {phrase}")
    raise c.error("expected COLUMN or PARTITION after ADD")


def _alter_drop(c: Cursor) -> AlterAction:
    if c.accept("COLUMN"):
        return DropColumn(c.identifier("a column name"))
    if c.accept("PARTITION"):
        if_exists = c.if_exists()
        name = c.identifier("a partition name")
        return DropPartition(name, if_exists, c.accept("FORCE"))
    if phrase := c.accept_any(("ROLLUP", "INDEX", "TEMPORARY")):
        raise _unsupported_alter(f"DROP {phrase}")
    raise c.error("expected COLUMN or PARTITION after DROP")


def _alter_modify(c: Cursor) -> AlterAction:
    if c.accept("COLUMN"):
        return ModifyColumn(column_def(c), _column_position(c))
    if c.accept("PARTITION"):
        names: tuple[str, ...] = ()
        all_partitions = False
        if c.accept_type(TokenType.L_PAREN):
            if c.accept_type(TokenType.STAR):
                all_partitions = True
            else:
                names = tuple(c.csv(lambda: c.identifier("a partition name")))
            c.expect_type(TokenType.R_PAREN, "')' after the partition names")
        else:
            names = (c.identifier("a partition name"),)
        c.expect("SET")
        return ModifyPartition(names, c.properties(), all_partitions)
    if phrase := c.accept_any(("DISTRIBUTION", "COMMENT", "ENGINE")):
        raise _unsupported_alter(f"MODIFY {phrase}")
    raise c.error("expected COLUMN or PARTITION after MODIFY")


def _alter_rename(c: Cursor) -> AlterAction:
    if c.accept("COLUMN"):
        old = c.identifier("a column name")
        return RenameColumn(old, c.identifier("the new column name"))
    if phrase := c.accept_any(("PARTITION", "ROLLUP")):
        raise _unsupported_alter(f"RENAME {phrase}")
    return RenameTable(c.identifier("the new table name"))


def _alter_action(c: Cursor) -> AlterAction:
    if c.accept("ADD"):
        return _alter_add(c)
    if c.accept("DROP"):
        return _alter_drop(c)
    if c.accept("MODIFY"):
        return _alter_modify(c)
    if c.accept("RENAME"):
        return _alter_rename(c)
    if c.accept("SET"):
        return SetTableProperties(c.properties())
    if c.accept("REPLACE", "WITH", "TABLE"):
        return _replace_with_table(c)
    if phrase := c.accept_any(("REPLACE", "ORDER", "ENABLE", "REORDER")):
        raise _unsupported_alter(phrase)
    raise c.error("expected ADD, DROP, MODIFY, RENAME or SET")


def _tag_statement(c: Cursor, table: QualifiedName) -> CreateTag | DropTag:
    """``CREATE TAG name [AS OF …] [PROPERTIES (…)]`` or ``DROP TAG name``: one per statement."""
    if c.accept("DROP", "TAG"):
        name = c.identifier("a tag name")
        c.expect_end()
        return DropTag(table, name)
    c.expect("CREATE", "TAG")
    name = c.identifier("a tag name")
    as_of = None
    if c.accept("AS", "OF"):
        as_of = AsOfVersion(c.integer("a commit number")) if c.accept("VERSION") else \
            AsOfTime(c.string("a quoted timestamp literal"))
    properties = c.properties() if c.accept("PROPERTIES") else {}
    c.expect_end()
    return CreateTag(table, name, as_of, properties)


def _replace_with_table(c: Cursor) -> ReplaceWithTable:
    """After ``REPLACE WITH TABLE``: the other table's bare name (Doris takes no database there),
    ``PROPERTIES ('swap' = …)`` and ``FORCE``."""
    start = c.peek()
    other = c.identifier("the table to replace with")
    swap = True
    if c.accept("PROPERTIES"):
        properties = {k.lower(): v for k, v in c.properties().items()}
        unknown = sorted(set(properties) - {"swap"})
        if unknown:
            raise c.error(f"unknown REPLACE WITH TABLE property {unknown[0]!r}; only 'swap' is known", start)
        value = properties.get("swap", "true").lower()
        if value not in ("true", "false"):
            raise c.error(f"'swap' must be 'true' or 'false', not {properties['swap']!r}", start)
        swap = value == "true"
    return ReplaceWithTable(other, swap, c.accept("FORCE"))


def alter_table(c: Cursor) -> AlterTable | CreateTag | DropTag:
    """Everything after ``ALTER TABLE``."""
    table = c.qualified_name()
    if c.at("CREATE", "TAG") or c.at("DROP", "TAG"):
        return _tag_statement(c, table)
    actions = tuple(c.csv(lambda: _alter_action(c)))
    c.expect_end()
    return AlterTable(table, actions)
