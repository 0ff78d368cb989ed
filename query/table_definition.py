"""Turning parsed Doris table definitions into catalog values, with Doris' rules and errors."""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import UTC, datetime

from projections.auto_partitions import DATE_UNITS
from projections.cooldown import DATETIME_FORMAT
from projections.dynamic_partitions import KEYS as DYNAMIC_KEYS
from projections.dynamic_partitions import PREFIX as DYNAMIC
from projections.dynamic_partitions import DynamicPartitionError, check_table, parse_spec
from query.context import SessionState, SqlFailure
from query.parser import statements as st
from query.partition_bounds import expand_batch, normalized_value
from query.reads import session_zone
from query.relation import duck_type
from query.unique_key import check_column_name
from schemas.commands import NewPartition
from schemas.errors import ErrorCode
from schemas.model import AutoPartitioning, Column, PartitionBound
from storage.parquet_codecs import DORIS_COMPRESSIONS

_BOOL = ("true", "false")
# Known table properties and a check of each value; anything else is refused, as Doris does.
_PROPERTY_CHECKS: dict[str, tuple[str, ...] | str] = {
    "replication_num": "int", "replication_allocation": "any", "storage_medium": ("ssd", "hdd"),
    "storage_cooldown_time": "future_datetime", "storage_policy": "policy", "enable_time_travel": _BOOL,
    "time_travel_retention_days": "retention", "group_commit_interval_ms": "int",
    "group_commit_data_bytes": "int", "disable_auto_compaction": _BOOL, "light_schema_change": _BOOL,
    "storage_format": "any", "compression": tuple(DORIS_COMPRESSIONS), "enable_unique_key_merge_on_write": _BOOL,
    "in_memory": _BOOL, "bloom_filter_columns": "any", "is_being_synced": _BOOL,
    "enable_single_replica_compaction": _BOOL, "store_row_column": _BOOL, "file_cache_ttl_seconds": "int",
    "inverted_index_storage_format": "any", "compaction_policy": "any", "estimate_partition_size": "any",
    # A partition's version_info (Doris' legacy restore hint, written by its SHOW CREATE of old tables).
    "version_info": "any",
    # Checked against the columns by query.unique_key.
    "function_column.sequence_col": "any", "function_column.sequence_type": "any",
}
# Properties that only concern how Doris lays out, replicates or compacts its storage: accepted with
# any value, kept (SHOW CREATE TABLE prints them back, so a Doris DDL replays unchanged) and without
# effect in Strata, which has one copy of each rowset in Parquet on its tiers (README, "Tables").
STORAGE_ONLY_PROPERTIES = (
    "storage_vault_id", "storage_vault_name", "min_load_replica_num", "skip_write_index_on_load",
    "enable_mow_light_delete", "time_series_compaction_goal_size_mbytes",
    "time_series_compaction_file_count_threshold", "time_series_compaction_time_threshold_seconds",
    "time_series_compaction_empty_rowsets_threshold", "time_series_compaction_level_threshold",
    "binlog.enable", "binlog.ttl_seconds", "binlog.max_bytes", "binlog.max_history_nums",
    "row_store_columns", "row_store_page_size", "storage_page_size", "storage_dict_page_size",
    "variant_enable_flatten_nested", "enable_duplicate_without_keys_by_default", "colocate_with",
    "data_sort.sort_type", "data_sort.col_num", "storage_type", "enable_light_delete", "tablet_type",
)
_PROPERTY_CHECKS.update({key: "any" for key in STORAGE_ONLY_PROPERTIES})


# How a caller checks properties (check_properties with its session and catalog bound).
PropertyCheck = Callable[[dict[str, str]], dict[str, str]]


def utc_datetime(text: str, session: SessionState, key: str) -> tuple[str, int]:
    """A 'yyyy-MM-dd HH:mm:ss' property in the session time zone → ('YYYY-MM-DD HH:MM:SS' UTC, UTC ms).

    Stored in UTC so the tiering agent, which has no session, reads one instant whatever zone set it."""
    try:
        moment = datetime.strptime(text.strip(), DATETIME_FORMAT)
    except ValueError:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                         f"Invalid value '{text}' for '{key}': expected 'yyyy-MM-dd HH:mm:ss'") from None
    aware = moment.replace(tzinfo=session_zone(session))
    return aware.astimezone(UTC).strftime(DATETIME_FORMAT), int(aware.timestamp() * 1000)


def check_properties(properties: dict[str, str], *, session: SessionState | None = None,
                     policies: Collection[str] | None = None) -> dict[str, str]:
    """Table or partition properties, checked and normalized. `session` gives the time zone of
    datetimes (UTC without one); `policies`, when given, are the storage policies that exist."""
    checked = {}
    for key, value in properties.items():
        if key.startswith(DYNAMIC):
            checked[key] = _dynamic_value(key, value, policies)
            continue
        rule = _PROPERTY_CHECKS.get(key)
        if rule is None:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Unknown table property '{key}'")
        if isinstance(rule, tuple) and value.lower() not in rule:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                             f"Invalid value '{value}' for property '{key}': expected one of {', '.join(rule)}")
        if rule == "int" and not value.strip().lstrip("-").isdigit():
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Invalid value '{value}' for property '{key}': not an integer")
        if rule == "retention" and not (value.strip().isdigit() and 1 <= int(value) <= 90):
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Invalid value '{value}' for 'time_travel_retention_days': "
                                                        "expected an integer from 1 to 90")
        # "" detaches a policy (data already cooled stays where it is, readable).
        if rule == "policy" and policies is not None and value and value not in policies:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Storage policy '{value}' does not exist")
        if rule == "future_datetime":
            value = _future_datetime(value, session or SessionState(), key)
        checked[key] = value.lower() if isinstance(rule, tuple) else value
    if checked.get("storage_medium") == "hdd" and "storage_cooldown_time" in checked:
        # Doris' rule: the cooldown time is when data leaves SSD for HDD; on HDD it means nothing.
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "Can not assign 'storage_cooldown_time' to the HDD storage "
                                                    "medium; it is when data moves from SSD to HDD")
    if checked.get("enable_time_travel") == "true":
        checked.setdefault("time_travel_retention_days", "7")
    if "compression" in checked:
        checked["compression"] = checked["compression"].upper()  # as Doris prints it: "ZSTD"
    return checked


# Dynamic partition values stored in one spelling (Doris shows the unit and medium upper case).
_DYNAMIC_LOWER = ("enable", "create_history_partition")
_DYNAMIC_UPPER = ("time_unit", "storage_medium")


def _dynamic_value(key: str, value: str, policies: Collection[str] | None) -> str:
    """One `dynamic_partition.*` property on its own; the set is checked whole by check_dynamic
    (an ALTER may change one of them)."""
    name = key[len(DYNAMIC):]
    if name not in DYNAMIC_KEYS:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Unknown dynamic partition property '{key}'")
    value = value.strip()
    if name == "storage_policy" and policies is not None and value and value not in policies:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Storage policy '{value}' of '{key}' does not exist")
    return value.lower() if name in _DYNAMIC_LOWER else value.upper() if name in _DYNAMIC_UPPER else value


def has_dynamic(properties: dict[str, str] | dict[str, str | None]) -> bool:
    return any(key.startswith(DYNAMIC) for key in properties)


def check_dynamic(properties: dict[str, str], partition_kind: str, column_types: list[str]) -> None:
    """A table's dynamic partition properties as a whole (Doris' rules), against its partitioning."""
    try:
        spec = parse_spec(properties)
        if spec is not None:
            check_table(spec, partition_kind, column_types)
    except DynamicPartitionError as exc:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, str(exc)) from None


def refuse_dynamic(properties: dict[str, str], where: str) -> None:
    """Dynamic partition properties belong to the table, never to one partition."""
    for key in properties:
        if key.startswith(DYNAMIC):
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"'{key}' is a table property: set it with ALTER TABLE "
                                                        f"... SET, not on {where}")


def _future_datetime(text: str, session: SessionState, key: str) -> str:
    normalized, ts_ms = utc_datetime(text, session, key)
    now = datetime.now(tz=UTC)
    if ts_ms <= int(now.timestamp() * 1000):
        shown = now.astimezone(session_zone(session)).strftime(DATETIME_FORMAT)
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"'{key}' '{text}' must be later than now ({shown})")
    return normalized


def column_from_def(d: st.ColumnDef, unique_id: int) -> Column:
    check_column_name(d.name)
    type_text = str(d.type)
    try:
        duck_type(type_text)
    except ValueError as exc:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"column '{d.name}': {exc}") from None
    default = None if d.default is None else str(d.default)
    if d.auto_increment is not None:
        _check_auto_increment(d, type_text)
    return Column(unique_id=unique_id, name=d.name, type=type_text, is_key=d.is_key, nullable=d.nullable,
                  default=default, aggregation=d.agg.upper() if d.agg else None,  # type: ignore[arg-type]
                  comment=d.comment or "", auto_increment=d.auto_increment)


# Doris' set-valued types and the one aggregation each takes on an Aggregate Key table.
SET_TYPE_UNIONS = {"BITMAP": "BITMAP_UNION", "HLL": "HLL_UNION"}


def check_set_column(column: Column, keys_model: str) -> None:
    """Doris 2.1's rules for BITMAP and HLL: value columns only (of any keys model), folded on an
    Aggregate Key table by their own union, which no other type takes; no DEFAULT but NULL."""
    union = SET_TYPE_UNIONS.get(column.type)
    if union is None:
        if column.aggregation in SET_TYPE_UNIONS.values():
            wanted = next(t for t, u in SET_TYPE_UNIONS.items() if u == column.aggregation)
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Column '{column.name}': aggregation type "
                                                        f"{column.aggregation} needs a {wanted} column, not "
                                                        f"{column.type}")
        return
    if column.is_key:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Key column '{column.name}' can not be of type {column.type}: "
                                                    "BITMAP and HLL columns are value columns")
    if keys_model == "AGGREGATE" and column.aggregation != union:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Column '{column.name}' of type {column.type} in an AGGREGATE "
                                                    f"KEY table needs aggregation type {union}, not "
                                                    f"{column.aggregation}")
    if column.default is not None and column.default.upper() != "NULL":
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"Column '{column.name}': a {column.type} column takes no "
                                                      "DEFAULT (rows without a value get NULL)")


def _check_auto_increment(d: st.ColumnDef, type_text: str) -> None:
    """Doris 2.1's rules (and words) for an AUTO_INCREMENT column on its own."""
    if type_text != "BIGINT":
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "the auto increment column should be BIGINT type.")
    if d.nullable:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "the auto increment column can't be null.")
    if d.default is not None:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "the auto increment column can't have default value.")


def check_auto_increment_table(keys_model: str, columns: tuple[Column, ...]) -> None:
    """Doris 2.1's rules for AUTO_INCREMENT columns in a table: at most one, not on Aggregate Key."""
    auto = [c for c in columns if c.auto_increment is not None]
    if auto and keys_model == "AGGREGATE":
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                         "the auto increment is only supported in duplicate table and unique table.")
    if len(auto) > 1:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "there should be at most one auto increment column in OlapTable.")


# Doris' sort key of a table created without a key clause: the leading columns, at most 3 and 36
# bytes of short key, stopping before a type that cannot be a short key and after a VARCHAR.
_SHORT_KEY_MAX_COLUMNS = 3
_SHORT_KEY_MAX_BYTES = 36
_SHORT_KEY_BYTES = {"BOOLEAN": 1, "TINYINT": 1, "SMALLINT": 2, "INT": 4, "BIGINT": 8, "LARGEINT": 16, "DATE": 4,
                    "DATETIME": 8, "DECIMAL": 16, "DECIMALV3": 16, "CHAR": 20, "VARCHAR": 20}


def _default_key(columns: tuple[st.ColumnDef, ...]) -> list[str]:
    keys: list[str] = []
    size = 0
    for column in columns:
        size += _SHORT_KEY_BYTES.get(column.type.name, 0)
        if column.type.name not in _SHORT_KEY_BYTES or len(keys) == _SHORT_KEY_MAX_COLUMNS \
                or size > _SHORT_KEY_MAX_BYTES:
            break
        keys.append(column.name.lower())
        if column.type.name == "VARCHAR":
            break
    if not keys:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"The olap table first column could not be {columns[0].type.name}"
                                                    " (float, double, string or json): give the table a KEY clause "
                                                    "or put a column of another type first")
    return keys


def build_columns(stmt: st.CreateTable) -> tuple[str, tuple[Column, ...]]:
    """The keys model and the columns (with unique ids 1..n) of a CREATE TABLE."""
    names = [c.name.lower() for c in stmt.columns]
    for name in names:
        if names.count(name) > 1:
            raise SqlFailure(ErrorCode.DUP_FIELDNAME, f"Duplicate column name '{name}'")
    has_agg = any(c.agg for c in stmt.columns)
    keys_model = stmt.keys_model or ("AGGREGATE" if has_agg else "DUPLICATE")
    key_names = [k.lower() for k in stmt.key_columns] or (
        [c.name.lower() for c in stmt.columns if not c.agg] if keys_model == "AGGREGATE"
        else _default_key(stmt.columns))
    for k in key_names:
        if k not in names:
            raise SqlFailure(ErrorCode.BAD_FIELD_ERROR, f"Key column '{k}' does not exist")
    if names[: len(key_names)] != key_names:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                         f"Key columns should be a ordered prefix of the schema: {', '.join(key_names)}")
    columns = []
    for i, d in enumerate(stmt.columns):
        is_key = d.name.lower() in key_names
        if is_key and d.agg:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Key column '{d.name}' can not set aggregation type")
        if not is_key and keys_model == "AGGREGATE" and not d.agg:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Value column '{d.name}' of an AGGREGATE KEY table must "
                                                        "have an aggregation type (SUM, MIN, MAX, REPLACE, "
                                                        "REPLACE_IF_NOT_NULL, BITMAP_UNION, HLL_UNION)")
        if d.agg and keys_model != "AGGREGATE":
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                             f"Column '{d.name}': aggregation type is only allowed in AGGREGATE KEY tables")
        columns.append(column_from_def(st.ColumnDef(**{**d.__dict__, "is_key": is_key}), i + 1))
        check_set_column(columns[-1], keys_model)
    check_auto_increment_table(keys_model, tuple(columns))
    return keys_model, tuple(columns)


def build_partitions(spec: st.PartitionSpec | None, table_name: str, buckets: int, columns: tuple[Column, ...],
                     check: PropertyCheck = check_properties) -> tuple[str, tuple[str, ...], tuple[NewPartition, ...]]:
    if spec is None:
        return "UNPARTITIONED", (), (NewPartition(name=table_name, buckets=buckets),)
    by_name = {c.name.lower(): c for c in columns}
    for name in spec.columns:
        if name.lower() not in by_name:
            raise SqlFailure(ErrorCode.BAD_FIELD_ERROR, f"Partition column '{name}' does not exist")
    keys = tuple(by_name[name.lower()] for name in spec.columns)
    if spec.auto is not None:
        _check_auto(spec, keys)
    partitions = []
    previous_upper: tuple[str, ...] | None = None
    for p in _expanded(spec, keys):
        partitions.append(partition_from_def(p, buckets, previous_upper, keys, check))
        if p.kind == "LESS_THAN":
            previous_upper = partitions[-1].bound.upper
    if sum(1 for p in partitions if p.bound.is_default) > 1:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "a LIST table has at most one DEFAULT partition (a partition "
                                                    "without VALUES)")
    owner: dict[tuple[str | None, ...], str] = {}
    for partition in partitions:
        for value in partition.bound.values:
            if value in owner:
                shown = ", ".join("NULL" if v is None else v for v in value)
                raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"partition {partition.name}: value ({shown}) already "
                                                            f"belongs to partition {owner[value]}")
            owner[value] = partition.name
    return spec.kind, tuple(c.lower() for c in spec.columns), tuple(partitions)


def auto_partitioning(spec: st.PartitionSpec | None) -> AutoPartitioning | None:
    """The catalog value of an AUTO PARTITION clause (None without one)."""
    if spec is None or spec.auto is None:
        return None
    return AutoPartitioning(unit=spec.auto.unit)  # type: ignore[arg-type]


def _check_auto(spec: st.PartitionSpec, keys: tuple[Column, ...]) -> None:
    """Doris' rules for AUTO PARTITION: RANGE over date_trunc of one DATE/DATETIME column (a DATE
    column by year, month or day); LIST over any columns; no DEFAULT partition (it would take the rows
    that should get partitions of their own)."""
    if any(isinstance(p, st.PartitionDef) and p.kind == "DEFAULT" for p in spec.partitions):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "an AUTO PARTITION table cannot have a DEFAULT partition")
    if spec.kind != "RANGE":
        return
    base = keys[0].type.split("(")[0].upper()
    if base not in ("DATE", "DATEV2", "DATETIME", "DATETIMEV2"):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"AUTO PARTITION BY RANGE needs a DATE or DATETIME column; "
                                                    f"'{keys[0].name}' is {keys[0].type}")
    if base in ("DATE", "DATEV2") and spec.auto is not None and spec.auto.unit not in DATE_UNITS:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"date_trunc of the DATE column '{keys[0].name}' by "
                                                    f"'{spec.auto.unit}': a DATE column takes {', '.join(DATE_UNITS)}")


def _expanded(spec: st.PartitionSpec, keys: tuple[Column, ...]) -> list[st.PartitionDef]:
    """The partition definitions with each batch (`FROM … TO … INTERVAL …`) replaced by its partitions."""
    expanded: list[st.PartitionDef] = []
    for p in spec.partitions:
        if isinstance(p, st.BatchRange):
            expanded.extend(expand_batch(p, keys[0].type))
        else:
            expanded.append(p)
    return expanded


def _upper(values: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """An upper bound of only MAXVALUE (`LESS THAN (MAXVALUE)`, `[(…), (MAXVALUE))`) is no bound."""
    return None if values is None or all(v == "MAXVALUE" for v in values) else values


def _range_bound(values: tuple[str | None, ...], keys: tuple[Column, ...], name: str) -> tuple[str, ...]:
    """A range bound's values normalized to the partition columns' types (NULL bounds no range)."""
    if len(values) > len(keys):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"partition {name}: the bound has more values than there are "
                                                    "partition columns")
    bound = []
    for value, key in zip(values, keys, strict=False):
        if value is None:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"partition {name}: a range bound cannot be NULL")
        bound.append(normalized_value(value, key.type, name) or value)
    return tuple(bound)


def _list_value(values: tuple[str | None, ...], keys: tuple[Column, ...], name: str) -> tuple[str | None, ...]:
    """One LIST value normalized; NULL only for a nullable column (Doris refuses it on NOT NULL ones)."""
    if len(values) != len(keys):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"partition {name}: each value needs {len(keys)} item(s), one "
                                                    "per partition column")
    for index, (value, key) in enumerate(zip(values, keys, strict=True)):
        if value is None and not key.nullable:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "Can't have null partition is for NOT NULL partition column "
                                                        f"in partition expr's index {index}")
    return tuple(normalized_value(v, k.type, name) for v, k in zip(values, keys, strict=True))


def partition_from_def(p: st.PartitionDef, buckets: int, lower: tuple[str, ...] | None, keys: tuple[Column, ...],
                       check: PropertyCheck = check_properties) -> NewPartition:
    """One partition's catalog value; `keys` are the partition columns, `lower` the bound a
    `LESS THAN` partition starts from."""
    if p.kind == "LESS_THAN":
        bound = PartitionBound(lower=lower, upper=_upper(_range_bound(p.values[0], keys, p.name) if p.values
                                                         else None))
    elif p.kind == "FIXED_RANGE":
        bound = PartitionBound(lower=_range_bound(p.values[0], keys, p.name),
                               upper=_upper(_range_bound(p.values[1], keys, p.name)))
    elif p.kind == "DEFAULT":
        bound = PartitionBound(is_default=True)
    else:
        bound = PartitionBound(values=tuple(_list_value(v, keys, p.name) for v in p.values))
    refuse_dynamic(dict(p.properties), f"partition {p.name}")
    return NewPartition(name=p.name, bound=bound, buckets=buckets, properties=check(dict(p.properties)))
