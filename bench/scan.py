"""Scan latency through the SQL port on a 1M-row table of 10 rowsets with 500k distinct keys
(the shape of NOTES.md's DuckDB measurements), per keys model.

    .venv/bin/python -m bench.scan [--rows 1000000] [--rowsets 10] [--keys 500000] [--runs 10]
                                   [--models DUPLICATE,UNIQUE,AGGREGATE] [--keep-stack]

Per model, p50/p99 of --runs executions (after one warm-up) of:
- `count`: `SELECT count(*) FROM t`
- `group_by`: `SELECT k, sum(v) FROM t GROUP BY k` — all 500k result rows go to the client
  (pymysql), so this includes mysql-mimic's row encoding and pymysql's decoding;
- `group_by_folded`: the same GROUP BY wrapped in `SELECT count(*), sum(s) FROM (…)`: the
  server-side cost without shipping 500k rows.
Also `duckdb_direct`: the same two queries by DuckDB in this process straight over the table's
Parquet files (no merge, no SQL server) — the floor NOTES.md quotes (1.5 ms / 27 ms there).
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import sys
import time

from bench.stack import (
    add_stack_args,
    bench_stack,
    create_table_sql,
    emit,
    fresh_database,
    log,
    machine,
    percentiles_ms,
    sql_connect,
    table_rowset_files,
)

SEED = 1000
QUERIES = {
    "count": "SELECT count(*) FROM t",
    "group_by": "SELECT k, sum(v) FROM t GROUP BY k",
    "group_by_folded": "SELECT count(*), sum(s) FROM (SELECT k, sum(v) AS s FROM t GROUP BY k) AS g",
}


def load(cur, rows: int, rowsets: int, keys: int) -> float:
    """`rowsets` INSERT … SELECTs of rows/rowsets rows each; key = global row index mod `keys`."""
    per = rows // rowsets
    if per > SEED * SEED:
        raise SystemExit(f"bench/scan: at most {SEED * SEED} rows per rowset")
    t0 = time.perf_counter()
    for r in range(rowsets):
        cur.execute(f"INSERT INTO t SELECT ({r * per} + a.k * 1000 + b.k) % {keys}, "
                    f"(a.k * 1000 + b.k) % 97 + {r} FROM seed a, seed b "
                    f"WHERE a.k * 1000 + b.k < {per}")
    return time.perf_counter() - t0


def run_queries(cur, runs: int) -> dict[str, dict]:
    out = {}
    for name, sql in QUERIES.items():
        cur.execute(sql)
        first = cur.fetchall()
        samples = []
        for _ in range(runs):
            t0 = time.perf_counter()
            cur.execute(sql)
            rows = cur.fetchall()
            samples.append(time.perf_counter() - t0)
        out[name] = {**percentiles_ms(samples), "result_rows": len(rows),
                     "result": [list(r) for r in first] if len(first) == 1 else None}
    return out


def duckdb_direct(files: list[str], runs: int) -> dict[str, dict]:
    import duckdb

    con = duckdb.connect()
    listing = ", ".join(f"'{f}'" for f in files)
    con.execute(f"CREATE VIEW t AS SELECT c1 AS k, c2 AS v FROM read_parquet([{listing}])")
    out = {}
    for name in ("count", "group_by_folded"):
        con.execute(QUERIES[name]).fetchall()
        samples = []
        for _ in range(runs):
            t0 = time.perf_counter()
            con.execute(QUERIES[name]).fetchall()
            samples.append(time.perf_counter() - t0)
        out[name] = percentiles_ms(samples)
    con.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rowsets", type=int, default=10, help="one INSERT (one rowset, 1 bucket) each")
    ap.add_argument("--keys", type=int, default=500_000, help="distinct keys")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--models", default="DUPLICATE,UNIQUE,AGGREGATE")
    add_stack_args(ap)
    args = ap.parse_args(argv)
    models = [m.strip().upper() for m in args.models.split(",") if m.strip()]

    results: dict[str, dict] = {}
    with bench_stack(args.keep_stack) as s:
        for model in models:
            db = fresh_database(s, f"bench_scan_{model.lower()}")
            conn = sql_connect(s, db)
            with conn.cursor() as cur:
                cur.execute(create_table_sql("seed", "DUPLICATE"))
                cur.execute("INSERT INTO seed VALUES " + ", ".join(f"({i}, 0)" for i in range(SEED)))
                cur.execute(create_table_sql("t", model))
                log(f"scan: {model}: loading {args.rows:,} rows in {args.rowsets} rowsets …")
                load_s = load(cur, args.rows, args.rowsets, args.keys)
                log(f"scan: {model}: {args.runs} runs of {', '.join(QUERIES)} …")
                queries = run_queries(cur, args.runs)
            conn.close()
            files = table_rowset_files(s, db, "t")
            direct = duckdb_direct(files, args.runs)
            expected_count = args.rows if model == "DUPLICATE" else min(args.keys, args.rows)
            got = queries["count"]["result"][0][0]
            results[model] = {"load_s": round(load_s, 2), "rowset_files": len(files),
                              "count_ok": got == expected_count, "queries": queries, "duckdb_direct": direct,
                              "database": db}
            log(f"scan: {model}: count p50 {queries['count']['p50_ms']} ms, group_by p50 "
                f"{queries['group_by']['p50_ms']} ms, folded {queries['group_by_folded']['p50_ms']} ms")
    emit({
        "bench": "scan",
        "goal": "measure count(*) and GROUP BY k sum(v) p50 through the SQL port (NOTES.md DuckDB floor: "
                "1.5 ms / 27 ms); no target set in the brief",
        "goal_met": None,
        "models": results,
        "sizes": {"rows": args.rows, "rowsets": args.rowsets, "distinct_keys": args.keys, "runs": args.runs,
                  "buckets": 1},
        "machine": machine(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
