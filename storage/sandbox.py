"""DuckDB connections that can reach nothing but Strata's own rowset folders.

User SQL is evaluated by DuckDB, whose defaults let any query read any file the process can
(`read_text('/proc/self/environ')`, `read_parquet('<home>/data/ssd/**')`), fetch URLs, and install or
load extensions from the internet. Every connection that evaluates an expression a user wrote
(queries, DML, CREATE TABLE AS, routine-load COLUMNS and WHERE) is opened here instead:

- `enable_external_access = false`: no file or network access, except under `read_dirs` (the tier
  roots and the file cache, where the rowset paths Strata builds from ids point);
- extensions are never installed, auto-loaded or loaded (a known extension would otherwise be
  downloaded the first time a function of it is named);
- `lock_configuration = true` last, so no statement can turn any of it back on.

`query.sandbox` is the other half: it refuses, before DuckDB sees them, the table functions and
settings functions a user could name, so that even the rowset folders are only read through the
snapshots the engine builds (which enforce grants and time travel).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import duckdb

# Settings that only take effect at start.
_START_CONFIG: dict[str, str | bool | int | float | list[str]] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
}


# Doris' date arithmetic keeps its argument's type: a DATE plus days is a DATE, a DATETIME(p) plus any unit a
# DATETIME(p); DuckDB's `DATE + INTERVAL` is a TIMESTAMP of 6 digits. Typed macros choose by the argument's type,
# which the Doris function layer (query.functions.dates) cannot see. doris_date_add takes units of a day or
# more, doris_time_add smaller ones (a DATE plus hours is a DATETIME). A string is read as a DATETIME(6).
_TIMESTAMP_SHIFTS = ("(a TIMESTAMP_S, i INTERVAL) AS CAST(a + i AS TIMESTAMP_S), "
                     "(a TIMESTAMP_MS, i INTERVAL) AS CAST(a + i AS TIMESTAMP_MS), "
                     "(a TIMESTAMP, i INTERVAL) AS a + i, "
                     "(a VARCHAR, i INTERVAL) AS CAST(a AS TIMESTAMP) + i")
MACROS = (
    f"CREATE MACRO doris_date_add(a DATE, i INTERVAL) AS CAST(a + i AS DATE), {_TIMESTAMP_SHIFTS}",
    f"CREATE MACRO doris_time_add(a DATE, i INTERVAL) AS CAST(a + i AS TIMESTAMP_S), {_TIMESTAMP_SHIFTS}",
)


def sandboxed_connection(read_dirs: Iterable[Path] = ()) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB whose file access is limited to `read_dirs` and whose settings are locked.

    Cursors of the returned connection share its database and so its locked configuration."""
    connection = duckdb.connect(config=_START_CONFIG)
    for macro in MACROS:
        connection.execute(macro)
    # Both spellings of each folder: DuckDB compares the path as given, and a root may be a symlink.
    dirs = sorted({str(form).rstrip("/") + "/" for d in read_dirs for form in (Path(d).absolute(), Path(d).resolve())})
    if dirs:
        # A trailing slash makes the entry a directory prefix; DuckDB refuses paths with `..`.
        connection.execute("SET allowed_directories = $dirs", {"dirs": dirs})
    connection.execute("SET enable_external_access = false")
    # Rowset and delete-bitmap files are written once under unique names and never changed, so their
    # Parquet footers (row-group statistics, the schema) can be kept between queries: a point lookup
    # or a count over a many-row-group file would otherwise parse the footer again every time.
    connection.execute("SET GLOBAL parquet_metadata_cache = true")  # every cursor's, not this one's only
    connection.execute("SET lock_configuration = true")
    return connection
