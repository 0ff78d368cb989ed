"""A load's data quality, as Stream Load and Broker Load both judge it: the rows it rejected, kept
for the ErrorURL (`error_log`), and Doris' `max_filter_ratio` rule over them."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from projections.rows import REASON
from query.context import Context
from query.stream_load.readers import Source


def rejected_rows(source: Source, bad: pa.Table) -> Iterator[tuple[str, str]]:
    """(reason, source text) of each rejected row; `bad` is a LoadedBatch's, over `source`."""
    for offset, reason in zip(bad["__o"].to_pylist(), bad[REASON].to_pylist(), strict=True):
        yield str(reason), source.line(offset) if offset is not None else ""


def error_url(log_name: str | None, base_url: str) -> str | None:
    """The URL that serves a load's rejected rows (GET /api/_load_error_log) from its closed ErrorLog
    (`ErrorLog.close()` gives the name; None when it rejected none)."""
    return None if log_name is None else f"{base_url}/api/_load_error_log?file={log_name}"


def server_url(ctx: Context) -> str:
    """This SQL server's HTTP address, for a URL made outside an HTTP request (a Broker Load job)."""
    return f"http://{ctx.config.sql_host}:{ctx.config.http_port}"


def too_many_filtered(filtered: int, loaded: int, max_filter_ratio: float) -> bool:
    """Doris' rule: the load fails when the filtered rows are more than `max_filter_ratio` of the rows
    that were checked (loaded + filtered; rows a WHERE left out do not count)."""
    return filtered > 0 and filtered > max_filter_ratio * (loaded + filtered)
