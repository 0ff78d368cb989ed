"""Doris' naming rules (FeNameFormat) for the names a statement creates, checked before it runs:

* database, partition, resource, storage policy and routine load job names: a letter, then letters,
  digits, `-` or `_`; at most 64 characters;
* table names: the same characters; at most 64 (Doris' `table_name_length_limit` default);
* column names: a letter, digit, `_` or `@`, then letters, digits and `_ . + , - / < > ? @ # $ % ^ & *`;
  at most 256 characters.

As with Doris' `enable_unicode_name_support`, a letter of any script counts as a letter. Anything else —
a 10,000-character name, a NUL byte, a quote, a path — is refused with Doris' error (1102, 1103,
1166, 5089, 1567 or 5063) naming the rule, before anything reaches the log.
"""

from __future__ import annotations

from collections.abc import Iterator

from query.context import SqlFailure
from query.parser import statements as st
from schemas.errors import ErrorCode

NAME_MAX = 64  # databases, partitions (Doris' COMMON_NAME_REGEX {0,63}) and tables (table_name_length_limit)
COLUMN_MAX = 256
_NAME_REST = "-_"
_COLUMN_FIRST = "_@"
_COLUMN_REST = "_.+,-/<>?@#$%^&*"
NAME_RULE = "^[a-zA-Z\\p{L}][a-zA-Z0-9-_\\p{L}]*$"
COLUMN_RULE = "^[_a-zA-Z@0-9\\p{L}][.a-zA-Z0-9_+-/><?@#$%^&*\\p{L}]{0,255}$"


def quoted(name: str) -> str:
    """`name` as one backquoted identifier of Doris SQL, whatever it holds (a backquote is doubled)."""
    return "`" + name.replace("`", "``") + "`"


def quoted_table(table: str, db: str | None = None) -> str:
    """A table's name as Doris SQL: `db`.`table`, or `table` alone (the session's database) without `db`."""
    return quoted(table) if db is None else f"{quoted(db)}.{quoted(table)}"


def _letter(ch: str) -> bool:
    return ch.isalpha()


def _digit(ch: str) -> bool:
    return "0" <= ch <= "9"


def _shown(name: str) -> str:
    """The name as an error message can carry it: control characters escaped, long names cut."""
    text = name if len(name) <= 80 else f"{name[:64]}… ({len(name)} characters)"
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in text)


def _plain_name(name: str) -> bool:
    return bool(name) and _letter(name[0]) and all(_letter(ch) or _digit(ch) or ch in _NAME_REST for ch in name[1:])


def check_database(name: str) -> None:
    if not _plain_name(name) or len(name) > NAME_MAX:
        raise SqlFailure(ErrorCode.WRONG_DB_NAME, f"Incorrect database name '{_shown(name)}'. Database name regex "
                                                  f"is '{NAME_RULE}', at most {NAME_MAX} characters")


def check_table(name: str) -> None:
    if not _plain_name(name):
        raise SqlFailure(ErrorCode.WRONG_TABLE_NAME, f"Incorrect table name '{_shown(name)}'. Table name regex is "
                                                     f"'{NAME_RULE}'")
    if len(name) > NAME_MAX:
        raise SqlFailure(ErrorCode.TABLE_NAME_LENGTH_LIMIT,
                         f"Table name length exceeds limit, the length of table name '{_shown(name)}' is "
                         f"{len(name)} which is greater than the configuration 'table_name_length_limit' "
                         f"({NAME_MAX}).")


def check_column(name: str) -> None:
    ok = (bool(name) and len(name) <= COLUMN_MAX and (_letter(name[0]) or _digit(name[0]) or name[0] in _COLUMN_FIRST)
          and all(_letter(ch) or _digit(ch) or ch in _COLUMN_REST for ch in name[1:]))
    if not ok:
        raise SqlFailure(ErrorCode.WRONG_COLUMN_NAME, f"Incorrect column name '{_shown(name)}'. Column regex is "
                                                      f"'{COLUMN_RULE}'")


def check_partition(name: str) -> None:
    if not _plain_name(name) or len(name) > NAME_MAX or name.startswith("placeholder_"):
        raise SqlFailure(ErrorCode.WRONG_PARTITION_NAME,
                         f"Incorrect partition name '{_shown(name)}'. Partition name regex is '{NAME_RULE}', "
                         f"at most {NAME_MAX} characters")


def check_common(kind: str, name: str) -> None:
    """Doris' checkCommonName: resources, storage policies, routine load jobs."""
    if not _plain_name(name) or len(name) > NAME_MAX:
        raise SqlFailure(ErrorCode.WRONG_NAME_FORMAT, f"Incorrect {kind} name '{_shown(name)}'. The name regex is "
                                            f"'{NAME_RULE}', at most {NAME_MAX} characters")


def _partitions(spec: st.PartitionSpec | None) -> Iterator[str]:
    if spec is not None:
        # A batch's partitions are named by Doris' own pattern (p_20230416), always a valid name.
        yield from (p.name for p in spec.partitions if isinstance(p, st.PartitionDef))


def check(statement: st.Statement) -> None:
    """Raises SqlFailure when `statement` would create an object under a name Doris refuses."""
    if isinstance(statement, st.CreateDatabase):
        check_database(statement.name)
    elif isinstance(statement, st.CreateTable):
        check_table(statement.table.name)
        for column in statement.columns:
            check_column(column.name)
        for partition in _partitions(statement.partition):
            check_partition(partition)
    elif isinstance(statement, st.CreateTableAs):
        check_table(statement.table.name)
        for partition in _partitions(statement.partition):
            check_partition(partition)
    elif isinstance(statement, st.CreateTableLike | st.CreateTableClone):
        check_table(statement.table.name)
    elif isinstance(statement, st.CreateView):
        check_table(statement.view.name)  # a view's name follows the table rules (one namespace)
    elif isinstance(statement, st.AlterTable):
        for action in statement.actions:
            _check_action(action)
    elif isinstance(statement, st.CreateResource):
        check_common("resource", statement.name)
    elif isinstance(statement, st.CreateStoragePolicy):
        check_common("storage policy", statement.name)
    elif isinstance(statement, st.CreateRoutineLoad):
        check_common("routine load", statement.job.name)


def _check_action(action: st.AlterAction) -> None:
    if isinstance(action, st.AddColumn | st.ModifyColumn):
        check_column(action.column.name)
    elif isinstance(action, st.AddColumns):
        for column in action.columns:
            check_column(column.name)
    elif isinstance(action, st.RenameColumn):
        check_column(action.new)
    elif isinstance(action, st.RenameTable):
        check_table(action.new_name)
    elif isinstance(action, st.AddPartition):
        check_partition(action.partition.name)
