"""A load's data quality, as Stream Load and Broker Load both judge it: the rows it rejected, kept
for the ErrorURL (`error_log`), and Doris' `max_filter_ratio` rule over them."""

from __future__ import annotations

import pyarrow as pa

from projections.rows import REASON
from query.context import Context
from query.stream_load import error_log
from query.stream_load.readers import Source


def rejected_rows(source: Source, bad: pa.Table) -> list[tuple[str, str]]:
    """(reason, source text) of each rejected row; `bad` is a LoadedBatch's, over `source`."""
    return [(str(reason), source.line(offset) if offset is not None else "")
            for offset, reason in zip(bad["__o"].to_pylist(), bad[REASON].to_pylist(), strict=True)]


def error_url(ctx: Context, rows: list[tuple[str, str]], base_url: str) -> str:
    """Stores the rejected rows and returns the URL that serves them (GET /api/_load_error_log)."""
    return f"{base_url}/api/_load_error_log?file={error_log.write(ctx.config.home, rows)}"


def server_url(ctx: Context) -> str:
    """This SQL server's HTTP address, for a URL made outside an HTTP request (a Broker Load job)."""
    return f"http://{ctx.config.sql_host}:{ctx.config.http_port}"


def too_many_filtered(filtered: int, loaded: int, max_filter_ratio: float) -> bool:
    """Doris' rule: the load fails when the filtered rows are more than `max_filter_ratio` of the rows
    that were checked (loaded + filtered; rows a WHERE left out do not count)."""
    return filtered > 0 and filtered > max_filter_ratio * (loaded + filtered)
