"""System-versioned reads (MariaDB's `FOR SYSTEM_TIME ALL | BETWEEN … AND … | FROM … TO …`): every
version of every row, with the instants it was valid in, `_valid_from` (inclusive) and `_valid_to`
(exclusive; NULL while it is current).

The versions are a fold of the change feed (query.change_feed) over the history kept: each insert or
post-image opens a version, each delete or pre-image closes one with the same values — the n-th close of
some values closes the n-th version opened with them, which is exact for Duplicate Key tables' repeated
rows too. Rows already in the table where the kept history starts (its retention, when time travel was
enabled, or when the table took its name by REPLACE) have a `_valid_from` of NULL: their start is older
than anything kept. On Aggregate Key tables a version is the aggregated row of a key between two
commits that changed it.
"""

from __future__ import annotations

from dataclasses import dataclass

from projections.names import name_taken_ts_ms
from projections.retention import earliest_instant_ms
from projections.snapshot import resolve
from projections.state import TableState
from query.change_feed import FeedSource, changes_sql, check_history, projected_sql
from query.relation import quote_ident

VERSION_COLUMNS = ("_valid_from", "_valid_to")


@dataclass(frozen=True)
class VersionRange:
    """Which versions a read wants: those valid at some instant of [start, end] (`end_inclusive`) or
    [start, end); None bounds are open (ALL has neither)."""

    start_ms: int | None = None
    end_ms: int | None = None
    end_inclusive: bool = True


def history_start_ms(source: FeedSource, table: TableState, now_ms: int) -> int:
    """Where the table's kept history starts: versions that ended before it are gone."""
    earliest = earliest_instant_ms(table, now_ms, source.config.time_travel_day_s) or 0
    return max(earliest, name_taken_ts_ms(table) or 0)


def history_sql(source: FeedSource, table: TableState, wanted: VersionRange, start: int) -> str:
    """DuckDB SQL of the table's row versions meeting `wanted`, from the kept history that starts at
    `start` (`history_start_ms`; the caller refuses a range reaching before it): the visible columns,
    then `_valid_from` and `_valid_to` (UTC TIMESTAMPs, as the change feed's `_commit_timestamp`)."""
    check_history(source, table, [])  # refuses a table without time travel
    commits = [c for c in source.projection.commits(table.table_id) if c.ts_ms > start]
    schema = table.schema_now.model_copy(update={"columns": table.schema_now.visible_columns})
    base = projected_sql(resolve(source.projection, table, start), source.locator, schema)
    columns = [quote_ident(c.name) for c in schema.columns]
    names = ", ".join(columns)
    same = " AND ".join(f"o.{c} IS NOT DISTINCT FROM c.{c}" for c in columns)
    opened = (f"SELECT {names}, NULL::BIGINT AS __from, 0 AS __at FROM __base UNION ALL "
              f"SELECT {names}, epoch_ms(_commit_timestamp), _commit_version FROM __changes "
              "WHERE _change_type IN ('insert', 'update_postimage')")
    closed = (f"SELECT {names}, epoch_ms(_commit_timestamp) AS __to, _commit_version AS __at FROM __changes "
              "WHERE _change_type IN ('delete', 'update_preimage')")
    filters = []
    if wanted.end_ms is not None:
        filters.append(f"(__from IS NULL OR __from {'<=' if wanted.end_inclusive else '<'} {wanted.end_ms})")
    if wanted.start_ms is not None:
        filters.append(f"(__to IS NULL OR __to > {wanted.start_ms})")
    where = f"WHERE {' AND '.join(filters)}" if filters else ""
    stamp = "make_timestamp({} * 1000)"
    return (f"WITH __base AS MATERIALIZED ({base}), __changes AS MATERIALIZED ({changes_sql(source, table, commits)}), "
            f"__o AS (SELECT *, row_number() OVER (PARTITION BY {names} ORDER BY __at) AS __n FROM ({opened})), "
            f"__c AS (SELECT *, row_number() OVER (PARTITION BY {names} ORDER BY __at) AS __n FROM ({closed})), "
            f"__v AS (SELECT {', '.join('o.' + c for c in columns)}, o.__from, c.__to FROM __o AS o "
            f"LEFT JOIN __c AS c ON {same} AND o.__n = c.__n) "
            f"SELECT {names}, {stamp.format('__from')} AS _valid_from, {stamp.format('__to')} AS _valid_to "
            f"FROM __v {where}")

