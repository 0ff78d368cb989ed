"""Window functions (https://doris.apache.org/docs/sql-manual/sql-functions/window-functions/).

Their examples run `OVER ()` on the one-row input of the executor-level test."""

from __future__ import annotations

from query.functions.registry import Function, fn

F = "window"

FUNCTIONS: list[Function] = [
    fn("row_number", F, "row_number() over ()"),
    fn("rank", F, "rank() over ()"),
    fn("dense_rank", F, "dense_rank() over ()"),
    fn("percent_rank", F, "percent_rank() over ()"),
    fn("cume_dist", F, "cume_dist() over ()"),
    fn("ntile", F, "ntile(2) over ()"),
    fn("lag", F, "lag(1, 1, 0) over ()"),
    fn("lead", F, "lead(1, 1, 0) over ()"),
    fn("first_value", F, "first_value(1) over ()"),
    fn("last_value", F, "last_value(1) over ()"),
]
