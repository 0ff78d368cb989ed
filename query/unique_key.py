"""Doris' rules for the columns a Unique Key table's loads lean on, checked at CREATE and ALTER TABLE:
the sequence column (`function_column.sequence_col` / `function_column.sequence_type`), the
hidden `__DORIS_*` names no user column may take, and `enable_unique_key_merge_on_write`."""

from __future__ import annotations

from projections.merge_on_write import PROPERTY as MERGE_ON_WRITE_PROPERTY
from projections.state import TableState
from query.context import SqlFailure
from schemas.errors import ErrorCode
from schemas.model import SEQUENCE_COL_PROPERTY, SEQUENCE_COLUMN, SEQUENCE_TYPE_PROPERTY, Column, is_hidden

# Doris orders by the sequence value, so it must be an integer or a date/time (its error's wording).
_SEQUENCE_TYPES = {"TINYINT": "TINYINT", "SMALLINT": "SMALLINT", "INT": "INT", "INTEGER": "INT",
                   "BIGINT": "BIGINT", "LARGEINT": "LARGEINT", "DATE": "DATE", "DATEV2": "DATE",
                   "DATETIME": "DATETIME", "DATETIMEV2": "DATETIME"}
_SEQUENCE_TYPE_ERROR = "sequence type only support integer types and date types"


def check_column_name(name: str) -> None:
    """Names starting with __DORIS_ belong to Doris' hidden columns."""
    if is_hidden(name):
        raise SqlFailure(ErrorCode.WRONG_COLUMN_NAME, f"Incorrect column name '{name}': names starting with "
                                                      "__DORIS_ are kept for Doris' hidden columns")


def sequence_column(keys_model: str, columns: tuple[Column, ...], properties: dict[str, str]) -> Column | None:
    """The hidden `__DORIS_SEQUENCE_COL__` a CREATE TABLE adds for `function_column.sequence_type`
    (unique id after the last column), None for none; checks `function_column.sequence_col` too."""
    named = properties.get(SEQUENCE_COL_PROPERTY)
    typed = properties.get(SEQUENCE_TYPE_PROPERTY)
    if named is None and typed is None:
        return None
    if keys_model != "UNIQUE":
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "Sequence column only support UNIQUE_KEYS")
    if named is not None:
        found = next((c for c in columns if c.name.lower() == named.strip().lower()), None)
        if found is None:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"The specified sequence column[{named}] not exists")
        if found.is_key:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"The sequence column[{named}] can not be a key column")
        if found.type.split("(")[0].upper() not in _SEQUENCE_TYPES:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, _SEQUENCE_TYPE_ERROR)
        if typed is not None and _SEQUENCE_TYPES.get(typed.strip().upper()) != found.type.split("(")[0].upper():
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"The sequence_col[{named}] and sequence_type[{typed}] "
                                                        "should be the same type")
        return None
    base = _SEQUENCE_TYPES.get((typed or "").strip().upper())
    if base is None:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, _SEQUENCE_TYPE_ERROR)
    return Column(unique_id=max(c.unique_id for c in columns) + 1, name=SEQUENCE_COLUMN, type=base)


def check_merge_on_write(keys_model: str, properties: dict[str, str]) -> None:
    """`enable_unique_key_merge_on_write` is a Unique Key table's (Doris refuses it on the others)."""
    if MERGE_ON_WRITE_PROPERTY in properties and keys_model != "UNIQUE":
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                         f"{MERGE_ON_WRITE_PROPERTY} property only support unique key table")


def refuse_fixed_property_change(changes: dict[str, str]) -> None:
    """The sequence column and the merge of a Unique Key table are fixed when the table is created:
    readers at every instant order by the one, and the delete bitmaps the other keeps start with it."""
    for key in (SEQUENCE_COL_PROPERTY, SEQUENCE_TYPE_PROPERTY, MERGE_ON_WRITE_PROPERTY):
        if key in changes:
            raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"'{key}' can only be set when the table is created")


def refuse_sequence_column_change(table: TableState, column: Column, what: str) -> None:
    """DROP, MODIFY or RENAME of the column rows of one key are ordered by is refused (Doris too)."""
    if column == table.sequence_column() or is_hidden(column.name):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Can not {what} column '{column.name}': it is the "
                                                    "table's sequence column")
