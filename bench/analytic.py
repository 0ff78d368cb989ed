"""The analytic read set through the SQL port against DuckDB over the same rows as plain Parquet.

    .venv/bin/python -m bench.analytic [--lineitem-rows 5000000] [--orders-rows 1000000]
                                       [--upserts 100000] [--runs 10] [--keep-stack] [--env-stack]

Two tables, both with time travel, loaded by Stream Load (Parquet) from files this process generates
with DuckDB (rows in a shuffled order, as a load brings them):
- `lineitem`, a Duplicate Key table (DUPLICATE KEY(l_orderkey, l_linenumber)), --lineitem-rows rows,
  four lines per order (l_orderkey 0 … rows/4 − 1);
- `orders`, a Unique Key table (UNIQUE KEY(o_orderkey)), --orders-rows rows, then a second Stream Load
  of --upserts rows that replace existing keys.
The peer is DuckDB in this process over the same rows as plain Parquet (`lineitem` as loaded; `orders`
with the upserts applied). After the loads, the instant T (the client's UTC now) is taken.

Queries (each: p50 of --runs after one warm-up; Strata latest, Strata at T and DuckDB take turns, the runs
going through every order of the three): count(*), a filtered
aggregate, GROUP BY a 21-value column and a 1000-value column, a top-10, a join of lineitem with orders,
a point lookup by key on each table; then the same queries on Strata `FOR TIME AS OF 'T'` (ratio to
latest; goal ≤ 1.2). Every Strata answer, latest and at T, must equal DuckDB's (else exit 1).
Goal: each query within 1.3× of DuckDB, point lookups under 10 ms. Also each query's mean CPU: the SQL
server's (all its threads) against this process' for DuckDB — steadier than wall time on a shared
machine. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from bench import stack
from bench.bulk_load import stream_load
from bench.tt_vs_delta import timed

GOAL_RATIO = 1.3
GOAL_POINT_MS = 10.0
GOAL_TT_RATIO = 1.2

LINEITEM = ("(l_orderkey BIGINT, l_linenumber INT, l_partkey BIGINT, l_suppkey INT, l_quantity INT, "
            "l_extendedprice DECIMAL(12,2), l_discount DECIMAL(4,2), l_shipdate DATE, l_shipmode VARCHAR(10)) "
            "DUPLICATE KEY(l_orderkey, l_linenumber) DISTRIBUTED BY HASH(l_orderkey) BUCKETS 1")
ORDERS = ("(o_orderkey BIGINT, o_custkey BIGINT, o_orderstatus VARCHAR(1), o_totalprice DECIMAL(12,2), "
          "o_orderdate DATE, o_orderpriority VARCHAR(15)) "
          "UNIQUE KEY(o_orderkey) DISTRIBUTED BY HASH(o_orderkey) BUCKETS 1")
PROPERTIES = 'PROPERTIES ("replication_num" = "1", "enable_time_travel" = "true")'

# Row i of lineitem; the file is ordered by a hash of i, so no column arrives sorted.
LINEITEM_ROWS = """
SELECT i // 4 AS l_orderkey, CAST(i % 4 + 1 AS INTEGER) AS l_linenumber, (i * 7877) % 200000 AS l_partkey,
       CAST((i * 7919) % 1000 + 1 AS INTEGER) AS l_suppkey, CAST(i % 50 + 1 AS INTEGER) AS l_quantity,
       CAST(((i * 104729) % 10000000) / 100 AS DECIMAL(12,2)) AS l_extendedprice,
       CAST(((i * 31) % 21) / 100 AS DECIMAL(4,2)) AS l_discount,
       CAST(DATE '1992-01-01' + CAST((i * 37) % 2500 AS INTEGER) AS DATE) AS l_shipdate,
       ['AIR', 'MAIL', 'SHIP', 'TRUCK', 'RAIL', 'FOB', 'REG AIR'][i % 7 + 1] AS l_shipmode
FROM range({rows}) AS r(i) ORDER BY hash(i)"""
ORDERS_ROWS = """
SELECT j AS o_orderkey, (j * 13) % 100000 AS o_custkey, ['F', 'O', 'P'][j % 3 + 1] AS o_orderstatus,
       CAST(((j * 7919) % 50000000) / 100 AS DECIMAL(12,2)) AS o_totalprice,
       CAST(DATE '1992-01-01' + CAST((j * 17) % 2400 AS INTEGER) AS DATE) AS o_orderdate,
       ['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'][j % 5 + 1] AS o_orderpriority
FROM range({rows}) AS r(j) ORDER BY hash(j)"""
# Upsert u replaces key (u · 9973) mod rows (distinct keys: 9973 is prime to the row counts used).
UPSERT_ROWS = """
SELECT (u * 9973) % {rows} AS o_orderkey, (u * 29) % 100000 AS o_custkey, 'U' AS o_orderstatus,
       CAST(((u * 6007) % 50000000) / 100 AS DECIMAL(12,2)) AS o_totalprice,
       CAST(DATE '1998-01-01' + CAST(u % 200 AS INTEGER) AS DATE) AS o_orderdate,
       '1-URGENT' AS o_orderpriority
FROM range({upserts}) AS r(u) ORDER BY hash(u)"""
FINAL_ORDERS = """
SELECT * FROM read_parquet('{orders}') WHERE o_orderkey NOT IN (SELECT o_orderkey FROM read_parquet('{upserts}'))
UNION ALL SELECT * FROM read_parquet('{upserts}')"""


def queries(lineitem_rows: int, orders_rows: int) -> dict[str, str]:
    """The set, over tables named lineitem and orders ({as_of} follows each table name)."""
    point_order = (orders_rows * 3) // 7
    point_line = (lineitem_rows // 4 * 5) // 9
    return {
        "count": "SELECT count(*) FROM lineitem{as_of}",
        "filtered_aggregate": "SELECT count(*), sum(l_extendedprice), avg(l_quantity) FROM lineitem{as_of} "
                              "WHERE l_shipdate >= DATE '1995-01-01' AND l_shipdate < DATE '1995-04-01' "
                              "AND l_quantity < 25",
        "group_by_21": "SELECT l_discount, count(*), sum(l_quantity) FROM lineitem{as_of} GROUP BY l_discount "
                       "ORDER BY l_discount",
        "group_by_1000": "SELECT l_suppkey, count(*), sum(l_extendedprice) FROM lineitem{as_of} GROUP BY l_suppkey "
                         "ORDER BY l_suppkey",
        "top_10": "SELECT l_orderkey, l_linenumber, l_extendedprice FROM lineitem{as_of} "
                  "ORDER BY l_extendedprice DESC, l_orderkey, l_linenumber LIMIT 10",
        "join": "SELECT o_orderpriority, count(*), sum(l_extendedprice) FROM lineitem{as_of} "
                "JOIN orders{as_of} ON l_orderkey = o_orderkey WHERE o_orderstatus <> 'P' "
                "GROUP BY o_orderpriority ORDER BY o_orderpriority",
        "point_unique": f"SELECT * FROM orders{{as_of}} WHERE o_orderkey = {point_order}",
        "point_duplicate": f"SELECT * FROM lineitem{{as_of}} WHERE l_orderkey = {point_line} ORDER BY l_linenumber",
    }


def canonical(rows: list[tuple[Any, ...]]) -> list[tuple[str, ...]]:
    """Rows as text, numbers normalised (a DECIMAL average and a DOUBLE one compare to 6 places)."""
    def text(value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
            return str(value)
        return f"{value:.6f}" if isinstance(value, float) else f"{Decimal(value):.6f}"
    return [tuple(text(v) for v in row) for row in rows]


def generate(folder: Path, lineitem_rows: int, orders_rows: int, upserts: int) -> dict[str, Path]:
    con = duckdb.connect()
    paths = {name: folder / f"{name}.parquet" for name in ("lineitem", "orders", "upserts", "orders_final")}
    con.execute(f"COPY ({LINEITEM_ROWS.format(rows=lineitem_rows)}) TO '{paths['lineitem']}' (FORMAT PARQUET)")
    con.execute(f"COPY ({ORDERS_ROWS.format(rows=orders_rows)}) TO '{paths['orders']}' (FORMAT PARQUET)")
    con.execute(f"COPY ({UPSERT_ROWS.format(rows=orders_rows, upserts=upserts)}) TO '{paths['upserts']}' "
                "(FORMAT PARQUET)")
    con.execute(f"COPY ({FINAL_ORDERS.format(orders=paths['orders'], upserts=paths['upserts'])}) "
                f"TO '{paths['orders_final']}' (FORMAT PARQUET)")
    con.close()
    return paths


def load(s: Any, db: str, paths: dict[str, Path]) -> dict[str, float]:
    conn = stack.sql_connect(s, db)
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE lineitem {LINEITEM} {PROPERTIES}")
        cur.execute(f"CREATE TABLE orders {ORDERS} {PROPERTIES}")
    conn.close()
    seconds = {}
    for table, file in (("lineitem", "lineitem"), ("orders", "orders"), ("orders", "upserts")):
        stack.log(f"analytic: Stream Load of {file} into {table} …")
        t0 = time.perf_counter()
        error = stream_load(s, db, table, paths[file], "parquet")
        if error is not None:
            raise SystemExit(f"bench/analytic: Stream Load of {file} failed: {error}")
        seconds[file] = round(time.perf_counter() - t0, 2)
    return seconds


def duckdb_peer(paths: dict[str, Path]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(f"CREATE VIEW lineitem AS SELECT * FROM read_parquet('{paths['lineitem']}')")
    con.execute(f"CREATE VIEW orders AS SELECT * FROM read_parquet('{paths['orders_final']}')")
    return con


def process_cpu_s(pid: int | None) -> float:
    """CPU seconds every thread of process `pid` has run (its tasks' schedstat): on a shared machine a
    query's CPU is steadier than its wall time. 0 when the process is not readable."""
    if pid is None:
        return 0.0
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
    except OSError:
        return 0.0
    return total / 1e9


def duck_timed(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[float, list]:
    t0 = time.perf_counter()
    rows = con.execute(sql).fetchall()
    return time.perf_counter() - t0, rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lineitem-rows", type=int, default=5_000_000)
    ap.add_argument("--orders-rows", type=int, default=1_000_000)
    ap.add_argument("--upserts", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--only", default=None, help="comma-separated query names (default: all)")
    ap.add_argument("--database", default=None,
                    help="query the tables an earlier run of the same sizes loaded into this database (no load)")
    ap.add_argument("--env-stack", action="store_true", help="run on the stack this environment's STRATA_* name")
    stack.add_stack_args(ap)
    args = ap.parse_args(argv)
    if args.upserts > args.orders_rows or args.orders_rows % 9973 == 0:
        raise SystemExit("bench/analytic: --upserts must not exceed --orders-rows, which 9973 must not divide")
    chosen = queries(args.lineitem_rows, args.orders_rows)
    if args.only:
        chosen = {k: v for k, v in chosen.items() if k in args.only.split(",")}

    with tempfile.TemporaryDirectory(prefix="bench_analytic_") as tmp, \
            stack.bench_stack(args.keep_stack, env_stack=args.env_stack) as s:
        stack.log(f"analytic: generating {args.lineitem_rows} lineitem and {args.orders_rows} orders rows …")
        paths = generate(Path(tmp), args.lineitem_rows, args.orders_rows, args.upserts)
        db = args.database or stack.fresh_database(s, "bench_analytic")
        load_s = {} if args.database else load(s, db, paths)
        time.sleep(0.005)
        instant = datetime.now(tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        time.sleep(0.005)
        peer = duckdb_peer(paths)
        server = stack.stack_pids(s)["sql"]
        conn = stack.sql_connect(s, db)
        cur = conn.cursor()
        results: dict[str, dict[str, Any]] = {}
        wrong: list[str] = []
        for name, template in chosen.items():
            latest_sql, tt_sql = template.format(as_of=""), template.format(as_of=f" FOR TIME AS OF '{instant}'")
            expected = canonical(duck_timed(peer, latest_sql)[1])
            answers = {"latest": canonical(timed(cur, latest_sql)[1]), "time_travel": canonical(timed(cur, tt_sql)[1])}
            for which, got in answers.items():
                if got != expected:
                    wrong.append(f"{name} ({which}): Strata {got[:3]} != DuckDB {expected[:3]}")
            samples: dict[str, list[float]] = {"strata": [], "time_travel": [], "duckdb": []}
            cpu = {"strata": 0.0, "time_travel": 0.0, "duckdb": 0.0}
            orders = list(itertools.permutations([("strata", latest_sql), ("time_travel", tt_sql),
                                                  ("duckdb", latest_sql)]))
            for run in range(args.runs):
                # Runs go through every order of the three: a query that follows the peer's parallel scan
                # meets caches it left cold (about 1.5 ms more on a point lookup), and in one fixed order that
                # was always the latest read, never the read at T.
                for which, sql in orders[run % len(orders)]:
                    # The SQL server's CPU for Strata; this process' (DuckDB's threads) for the peer.
                    peer_run = which == "duckdb"
                    before = time.process_time() if peer_run else process_cpu_s(server)
                    samples[which].append(duck_timed(peer, sql)[0] if peer_run else timed(cur, sql)[0])
                    after = time.process_time() if peer_run else process_cpu_s(server)
                    cpu[which] += after - before
            cpu_ms = {k: round(v * 1000 / args.runs, 2) for k, v in cpu.items()}
            p = {k: stack.percentiles_ms(v) for k, v in samples.items()}
            ratio = round(p["strata"]["p50_ms"] / p["duckdb"]["p50_ms"], 3)
            tt_ratio = round(p["time_travel"]["p50_ms"] / p["strata"]["p50_ms"], 3)
            point = name.startswith("point")
            met = ratio <= GOAL_RATIO and tt_ratio <= GOAL_TT_RATIO and \
                (not point or p["strata"]["p50_ms"] < GOAL_POINT_MS)
            results[name] = {"strata_p50_ms": p["strata"]["p50_ms"], "duckdb_p50_ms": p["duckdb"]["p50_ms"],
                             "ratio": ratio, "time_travel_p50_ms": p["time_travel"]["p50_ms"],
                             "tt_over_latest": tt_ratio, "goal_met": met, "rows": len(expected),
                             "cpu_ms_per_query": cpu_ms,
                             "cpu_ratio": round(cpu_ms["strata"] / cpu_ms["duckdb"], 3) if cpu_ms["duckdb"] else None,
                             "percentiles": p}
            stack.log(f"analytic: {name}: Strata {p['strata']['p50_ms']} ms, DuckDB {p['duckdb']['p50_ms']} ms "
                f"({ratio}×), AS OF {p['time_travel']['p50_ms']} ms ({tt_ratio}×); CPU ms/query {cpu_ms}")
        conn.close()
        peer.close()

    stack.emit({
        "bench": "analytic",
        "goal": f"each query p50 within {GOAL_RATIO}× of DuckDB over the same rows as Parquet, point lookups "
                f"under {GOAL_POINT_MS} ms, FOR TIME AS OF ÷ latest ≤ {GOAL_TT_RATIO}",
        "goal_met": not wrong and all(r["goal_met"] for r in results.values()),
        "correct": not wrong,
        "mismatches": wrong,
        "queries": results,
        "load_s": load_s,
        "instant": instant,
        "sizes": {"lineitem_rows": args.lineitem_rows, "orders_rows": args.orders_rows, "upserts": args.upserts,
                  "runs": args.runs, "database": db},
        "machine": stack.machine(),
    })
    if wrong:
        stack.log("analytic: WRONG ANSWERS:\n  " + "\n  ".join(wrong))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
