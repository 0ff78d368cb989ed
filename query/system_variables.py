"""The MySQL system variables a Strata session has, with the values Apache Doris' FE gives them.

mysql-mimic keeps the values (SET, SHOW VARIABLES); this is their schema: mysql-mimic's own list
with Doris' defaults where they differ, plus what MySQL clients and tools read on connect
(SQLAlchemy reads `@@tx_isolation` on a 5.7 server, Connector/J `SHOW VARIABLES`, c3p0 and BI
tools the query-cache and timeout variables). Each entry is (type, default, settable by SET).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mysql_mimic.variables import SYSTEM_VARIABLES

# Doris answers the handshake with a plain 5.7 version and names itself in version_comment; clients
# parse the version (SQLAlchemy: "5.7.99 strata…" read as (5, 7, 0, 1)), so nothing may follow it.
SERVER_VERSION = "5.7.99"
VERSION_COMMENT = "Strata 0.1.0 (Apache Doris compatible)"
# Doris' sql_select_limit: no limit (Long.MAX_VALUE); MySQL shows 2^64 - 1.
_NO_LIMIT = 9223372036854775807


def _on_off(value: Any) -> bool:
    """A boolean variable as MySQL takes it: ON/OFF, TRUE/FALSE, 1/0 (strings or numbers)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    text = str(value).strip().strip("'\"").upper()
    if text in ("ON", "TRUE", "1"):
        return True
    if text in ("OFF", "FALSE", "0"):
        return False
    raise ValueError(f"'{value}' is not a boolean")


_DORIS_VALUES: dict[str, tuple[Any, Any, bool]] = {
    "autocommit": (_on_off, True, True),
    "sql_auto_is_null": (_on_off, False, True),
    "transaction_read_only": (_on_off, False, True),
    "tx_read_only": (_on_off, False, True),
    "performance_schema": (_on_off, False, False),
    "have_query_cache": (str, "YES", False),
    "query_cache_size": (int, 1048576, True),
    "query_cache_type": (str, "OFF", True),
    "transaction_isolation": (str, "REPEATABLE-READ", True),
    "tx_isolation": (str, "REPEATABLE-READ", True),
    # Doris' default; never ANSI_QUOTES (mysql-mimic's "ANSI" made SQLAlchemy quote names with ").
    "sql_mode": (str, "ONLY_FULL_GROUP_BY", True),
    "sql_select_limit": (int, _NO_LIMIT, True),
    "sql_safe_updates": (int, 0, True),
    "max_allowed_packet": (int, 16777216, True),
    "net_read_timeout": (int, 600, True),
    "net_write_timeout": (int, 600, True),
    "interactive_timeout": (int, 3600, True),
    "wait_timeout": (int, 28800, True),
    "license": (str, "Apache License, Version 2.0", False),
    "language": (str, "/strata/share/english/", False),
    # Character sets and collations stay mysql-mimic's (utf8mb4, utf8mb4_general_ci: what a 5.7 server
    # knows, and what the handshake announces).
    "character_set_filesystem": (str, "binary", True),
    "character_set_system": (str, "utf8", False),
    "div_precision_increment": (int, 4, True),
    "default_week_format": (int, 0, True),
    "group_concat_max_len": (int, 1024, True),
    "sql_quote_show_create": (_on_off, True, True),
    # No foreign keys, no TLS on the SQL port yet: what tools (Workbench, DBeaver) check before using them.
    "foreign_key_checks": (_on_off, True, True),
    "unique_checks": (_on_off, True, True),
    "have_ssl": (str, "DISABLED", False),
    "have_openssl": (str, "DISABLED", False),
    "explicit_defaults_for_timestamp": (_on_off, True, False),
    "protocol_version": (int, 10, False),
    "default_storage_engine": (str, "olap", True),
    "default_tmp_storage_engine": (str, "olap", True),
    "storage_engine": (str, "olap", True),
    "time_zone": (str, "UTC", True),
    "system_time_zone": (str, "UTC", False),
    "version": (str, SERVER_VERSION, False),
    "version_comment": (str, VERSION_COMMENT, False),
    # Unique Key tables: SELECT * and DESC show Doris' hidden columns (and rows a delete sign hides);
    # an INSERT naming some columns updates only those of existing keys.
    "show_hidden_columns": (_on_off, False, True),
    "enable_unique_key_partial_update": (_on_off, False, True),
}

# Transaction characteristics MySQL 5.7 has under two names; setting either sets both.
SYNONYMS = {"tx_isolation": "transaction_isolation", "transaction_isolation": "tx_isolation",
            "tx_read_only": "transaction_read_only", "transaction_read_only": "tx_read_only"}

MYSQL_VARIABLES: dict[str, tuple[Any, Any, bool]] = {**SYSTEM_VARIABLES, **_DORIS_VALUES}


def session_flag(variables: Mapping[str, Any], name: str) -> bool:
    """A boolean variable's value in a session (its default where the session has none: outside the
    server, variables are empty)."""
    value = variables.get(name)
    return _on_off(_DORIS_VALUES[name][1] if value is None else value)
