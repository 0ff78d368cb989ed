"""Flight SQL's metadata commands (GetCatalogs, GetDbSchemas, GetTables, GetTableTypes, GetPrimaryKeys, the
foreign-key ones, GetSqlInfo, GetXdbcTypeInfo) in the result schemas FlightSql.proto fixes. Databases,
tables and keys are read with SQL on information_schema through the engine, as the caller: a user lists
only what its grants let it see, exactly as on the SQL port."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from query.flight.messages import Command
from query.identifiers import quoted_table
from query.information_schema import CATALOG
from query.wire.params import string_literal
from schemas.config import strata_version

RunSql = Callable[[str], pa.Table]  # SQL run through the engine as the caller
TABLE_TYPES = ("BASE TABLE", "SYSTEM VIEW", "VIEW")

CATALOGS_SCHEMA = pa.schema([pa.field("catalog_name", pa.string(), False)])
DB_SCHEMAS_SCHEMA = pa.schema([pa.field("catalog_name", pa.string()), pa.field("db_schema_name", pa.string(), False)])
TABLES_SCHEMA = pa.schema([pa.field("catalog_name", pa.string()), pa.field("db_schema_name", pa.string()),
                           pa.field("table_name", pa.string(), False), pa.field("table_type", pa.string(), False)])
# With include_schema: each table's columns, an Arrow schema serialized as IPC.
TABLES_WITH_SCHEMA = TABLES_SCHEMA.append(pa.field("table_schema", pa.binary(), False))
PRIMARY_KEYS_SCHEMA = pa.schema([
    pa.field("catalog_name", pa.string()), pa.field("db_schema_name", pa.string()),
    pa.field("table_name", pa.string(), False), pa.field("column_name", pa.string(), False),
    pa.field("key_name", pa.string()), pa.field("key_sequence", pa.int32(), False)])
FOREIGN_KEYS_SCHEMA = pa.schema([
    *[pa.field(f"{side}_{name}", pa.string(), name not in ("catalog_name", "db_schema_name"))
      for side in ("pk", "fk") for name in ("catalog_name", "db_schema_name", "table_name", "column_name")],
    pa.field("key_sequence", pa.int32(), False), pa.field("fk_key_name", pa.string()),
    pa.field("pk_key_name", pa.string()), pa.field("update_rule", pa.uint8(), False),
    pa.field("delete_rule", pa.uint8(), False)])
TABLE_TYPES_SCHEMA = pa.schema([pa.field("table_type", pa.string(), False)])
_SQL_INFO_VALUE = pa.dense_union([
    pa.field("string_value", pa.string()), pa.field("bool_value", pa.bool_()), pa.field("bigint_value", pa.int64()),
    pa.field("int32_bitmask", pa.int32()), pa.field("string_list", pa.list_(pa.field("item", pa.string()))),
    pa.field("int32_to_int32_list_map", pa.map_(pa.int32(), pa.list_(pa.field("item", pa.int32())))),
])
SQL_INFO_SCHEMA = pa.schema([pa.field("info_name", pa.uint32(), False), pa.field("value", _SQL_INFO_VALUE, False)])
XDBC_TYPE_INFO_SCHEMA = pa.schema([
    pa.field("type_name", pa.string(), False), pa.field("data_type", pa.int32(), False),
    pa.field("column_size", pa.int32()), pa.field("literal_prefix", pa.string()),
    pa.field("literal_suffix", pa.string()),
    pa.field("create_params", pa.list_(pa.field("item", pa.string(), False))),
    pa.field("nullable", pa.int32(), False), pa.field("case_sensitive", pa.bool_(), False),
    pa.field("searchable", pa.int32(), False), pa.field("unsigned_attribute", pa.bool_()),
    pa.field("fixed_prec_scale", pa.bool_(), False), pa.field("auto_increment", pa.bool_()),
    pa.field("local_type_name", pa.string()), pa.field("minimum_scale", pa.int32()),
    pa.field("maximum_scale", pa.int32()), pa.field("sql_data_type", pa.int32(), False),
    pa.field("datetime_subcode", pa.int32()), pa.field("num_prec_radix", pa.int32()),
    pa.field("interval_precision", pa.int32())])


def _other_catalog(command: Command) -> bool:
    catalog = command.text(1)
    return catalog is not None and catalog != CATALOG


def catalogs() -> pa.Table:
    return pa.Table.from_pylist([{"catalog_name": CATALOG}], schema=CATALOGS_SCHEMA)


def db_schemas(command: Command, run: RunSql) -> pa.Table:
    if _other_catalog(command):
        return DB_SCHEMAS_SCHEMA.empty_table()
    pattern = command.text(2)
    where = f" WHERE SCHEMA_NAME LIKE {string_literal(pattern)}" if pattern is not None else ""
    rows = run(f"SELECT SCHEMA_NAME FROM information_schema.schemata{where} ORDER BY SCHEMA_NAME").to_pylist()
    return pa.Table.from_pylist([{"catalog_name": CATALOG, "db_schema_name": r["SCHEMA_NAME"]} for r in rows],
                                schema=DB_SCHEMAS_SCHEMA)


def tables(command: Command, run: RunSql) -> pa.Table:
    include_schema = bool(command.integer(5))
    schema = TABLES_WITH_SCHEMA if include_schema else TABLES_SCHEMA
    if _other_catalog(command):
        return schema.empty_table()
    where = []
    if command.text(2) is not None:
        where.append(f"TABLE_SCHEMA LIKE {string_literal(command.text(2) or '')}")
    if command.text(3) is not None:
        where.append(f"TABLE_NAME LIKE {string_literal(command.text(3) or '')}")
    types = command.texts(4)
    if types:
        where.append(f"TABLE_TYPE IN ({', '.join(string_literal(t) for t in types)})")
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    rows = run("SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.tables"
               f"{clause} ORDER BY TABLE_TYPE, TABLE_SCHEMA, TABLE_NAME").to_pylist()
    found = [{"catalog_name": CATALOG, "db_schema_name": r["TABLE_SCHEMA"], "table_name": r["TABLE_NAME"],
              "table_type": r["TABLE_TYPE"]} for r in rows]
    if include_schema:
        for table in found:
            table["table_schema"] = _columns(run, table["db_schema_name"], table["table_name"])
    return pa.Table.from_pylist(found, schema=schema)


def _columns(run: RunSql, database: str, table: str) -> bytes:
    """The table's columns as a query of it returns them (the executor's Arrow types under the
    MySQL port's names), as the IPC-serialized schema GetTables' `table_schema` holds."""
    return run(f"SELECT * FROM {quoted_table(table, database)} LIMIT 0").schema.serialize().to_pybytes()


def primary_keys(command: Command, run: RunSql) -> pa.Table:
    """A Unique Key table's key columns, its primary key (information_schema.key_column_usage, as the
    MySQL port's JDBC drivers read it); other tables have none."""
    if _other_catalog(command) or command.text(3) is None:
        return PRIMARY_KEYS_SCHEMA.empty_table()
    where = [f"TABLE_NAME = {string_literal(command.text(3) or '')}", "CONSTRAINT_NAME = 'PRIMARY'"]
    schema = command.text(2)
    where.append(f"TABLE_SCHEMA = {string_literal(schema)}" if schema is not None else "TABLE_SCHEMA = DATABASE()")
    rows = run("SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION FROM "
               f"information_schema.key_column_usage WHERE {' AND '.join(where)} ORDER BY ORDINAL_POSITION").to_pylist()
    return pa.Table.from_pylist([{"catalog_name": CATALOG, "db_schema_name": r["TABLE_SCHEMA"],
                                  "table_name": r["TABLE_NAME"], "column_name": r["COLUMN_NAME"],
                                  "key_name": "PRIMARY", "key_sequence": r["ORDINAL_POSITION"]} for r in rows],
                                schema=PRIMARY_KEYS_SCHEMA)


def foreign_keys() -> pa.Table:
    """Doris tables have no foreign keys: GetImportedKeys, GetExportedKeys and GetCrossReference find none."""
    return FOREIGN_KEYS_SCHEMA.empty_table()


def table_types() -> pa.Table:
    return pa.Table.from_pylist([{"table_type": t} for t in TABLE_TYPES], schema=TABLE_TYPES_SCHEMA)


# SqlInfo ids (FlightSql.proto) Strata answers: server name, version, Arrow version (strings), and
# read-only, SQL, Substrait, cancel (booleans).
_STRINGS = {0: lambda: "Strata (Apache Doris Arrow Flight SQL)", 1: strata_version, 2: lambda: pa.__version__}
_BOOLEANS = {3: False, 4: True, 5: False, 9: False}


def sql_info(command: Command) -> pa.Table:
    wanted = command.integers(1) or sorted([*_STRINGS, *_BOOLEANS])
    names: list[int] = []
    codes: list[int] = []
    offsets: list[int] = []
    strings: list[str] = []
    booleans: list[bool] = []
    for info in wanted:
        if info in _STRINGS:
            names.append(info)
            codes.append(0)
            offsets.append(len(strings))
            strings.append(_STRINGS[info]())
        elif info in _BOOLEANS:
            names.append(info)
            codes.append(1)
            offsets.append(len(booleans))
            booleans.append(_BOOLEANS[info])
    children = [pa.array(strings, pa.string()), pa.array(booleans, pa.bool_()), pa.array([], pa.int64()),
                pa.array([], pa.int32()), pa.array([], _SQL_INFO_VALUE[4].type), pa.array([], _SQL_INFO_VALUE[5].type)]
    value = pa.UnionArray.from_dense(pa.array(codes, pa.int8()), pa.array(offsets, pa.int32()), children,
                                     [f.name for f in _SQL_INFO_VALUE], list(range(6)))
    return pa.Table.from_arrays([pa.array(names, pa.uint32()), value], schema=SQL_INFO_SCHEMA)


# FlightSql.proto's XdbcDataType (JDBC's java.sql.Types numbers), its datetime subcodes and Searchable.
_BIT, _TINYINT, _BIGINT, _LONGVARCHAR, _CHAR, _DECIMAL, _INTEGER, _SMALLINT, _REAL, _DOUBLE, _VARCHAR = (
    -7, -6, -5, -1, 1, 3, 4, 5, 7, 8, 12)
_DATETIME, _DATE, _TIMESTAMP = 9, 91, 93
_SUBCODE_DATE, _SUBCODE_TIMESTAMP = 1, 3
_SEARCHABLE_NONE, _SEARCHABLE_BASIC, _SEARCHABLE_FULL = 0, 2, 3
_NULLABLE = 1


def _numeric(name: str, data_type: int, size: int, *, radix: int = 10, scale: tuple[int, int] = (0, 0),
             params: list[str] | None = None, auto_increment: bool = False) -> dict[str, object]:
    return {"type_name": name, "data_type": data_type, "column_size": size, "create_params": params,
            "case_sensitive": False, "searchable": _SEARCHABLE_BASIC, "unsigned_attribute": False,
            "auto_increment": auto_increment, "minimum_scale": None if radix == 2 else scale[0],
            "maximum_scale": None if radix == 2 else scale[1], "num_prec_radix": radix}


def _quoted_type(name: str, data_type: int, size: int, *, params: list[str] | None = None,
                 searchable: int = _SEARCHABLE_FULL, case_sensitive: bool = True,
                 subcode: int | None = None, scale: tuple[int, int] | None = None) -> dict[str, object]:
    """A type whose literals are quoted strings: the character types, dates and times, JSON."""
    return {"type_name": name, "data_type": data_type, "column_size": size, "literal_prefix": "'",
            "literal_suffix": "'", "create_params": params, "case_sensitive": case_sensitive,
            "searchable": searchable, "sql_data_type": _DATETIME if subcode is not None else data_type,
            "datetime_subcode": subcode, "minimum_scale": scale and scale[0], "maximum_scale": scale and scale[1]}


# The column types CREATE TABLE takes (query.parser.ddl), as JDBC's getTypeInfo describes types. BITMAP and
# HLL columns are left out: no client can hold their values (a query returns them as NULL). LARGEINT (128
# bits) has no integer type in JDBC: it is a DECIMAL of 39 digits, as the MySQL port sends it.
_DORIS_TYPES = [
    {"type_name": "BOOLEAN", "data_type": _BIT, "column_size": 1, "case_sensitive": False,
     "searchable": _SEARCHABLE_BASIC},
    _numeric("TINYINT", _TINYINT, 3),
    _numeric("SMALLINT", _SMALLINT, 5),
    _numeric("INT", _INTEGER, 10),
    _numeric("BIGINT", _BIGINT, 19, auto_increment=True),  # Doris' AUTO_INCREMENT takes BIGINT columns only
    _numeric("LARGEINT", _DECIMAL, 39),
    _numeric("FLOAT", _REAL, 24, radix=2),
    _numeric("DOUBLE", _DOUBLE, 53, radix=2),
    _numeric("DECIMAL", _DECIMAL, 38, scale=(0, 38), params=["precision", "scale"]),
    _quoted_type("DATE", _DATE, 10, searchable=_SEARCHABLE_BASIC, case_sensitive=False, subcode=_SUBCODE_DATE),
    _quoted_type("DATETIME", _TIMESTAMP, 26, params=["scale"], searchable=_SEARCHABLE_BASIC, case_sensitive=False,
                 subcode=_SUBCODE_TIMESTAMP, scale=(0, 6)),
    _quoted_type("CHAR", _CHAR, 255, params=["length"]),
    _quoted_type("VARCHAR", _VARCHAR, 65533, params=["length"]),
    _quoted_type("STRING", _LONGVARCHAR, 2147483643),
    _quoted_type("JSON", _LONGVARCHAR, 2147483643, searchable=_SEARCHABLE_NONE),  # no comparison of JSON values
]


def xdbc_type_info(command: Command) -> pa.Table:
    """The data types columns can have (JDBC's getTypeInfo, ODBC's SQLGetTypeInfo), ordered by data_type
    then type_name; only those of the command's `data_type` when it names one."""
    wanted = command.int32(1)
    rows = [{"nullable": _NULLABLE, "fixed_prec_scale": False, "sql_data_type": row["data_type"], **row}
            for row in _DORIS_TYPES if wanted is None or row["data_type"] == wanted]
    rows.sort(key=lambda row: (row["data_type"], row["type_name"]))
    return pa.Table.from_pylist(rows, schema=XDBC_TYPE_INFO_SCHEMA)
