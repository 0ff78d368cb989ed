"""Bulk load throughput: rows/s of `INSERT INTO dst SELECT * FROM src` through the SQL port.

    .venv/bin/python -m bench.bulk_insert [--rows 1000000] [--buckets 1] [--model DUPLICATE] [--keep-stack]

Setup (timed separately, reported too): a 1000-row `seed` table from one multi-row VALUES insert,
then `src` from ONE `INSERT INTO src SELECT … FROM seed a, seed b [, seed c]` cross join
(limited to --rows). Timed: `INSERT INTO dst SELECT * FROM src` (one DuckDB read of src's
snapshot, Parquet write per bucket, one CommitRowsets). Prints one JSON object.
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
    sql_connect,
)

SEED = 1000


def timed(cur, sql: str) -> float:
    t0 = time.perf_counter()
    cur.execute(sql)
    return time.perf_counter() - t0


def count(cur, table: str) -> int:
    cur.execute(f"SELECT count(*) FROM {table}")
    return int(cur.fetchone()[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--buckets", type=int, default=1, help="BUCKETS of src and dst")
    ap.add_argument("--model", choices=("DUPLICATE", "UNIQUE", "AGGREGATE"), default="DUPLICATE")
    ap.add_argument("--runs", type=int, default=1, help="timed INSERT … SELECT runs (fresh dst each)")
    add_stack_args(ap)
    args = ap.parse_args(argv)
    if args.rows > SEED ** 3:
        ap.error(f"--rows at most {SEED ** 3}")

    with bench_stack(args.keep_stack) as s:
        db = fresh_database(s, "bench_bulk")
        conn = sql_connect(s, db)
        with conn.cursor() as cur:
            for name in ("seed", "src"):
                cur.execute(create_table_sql(name, "DUPLICATE", args.buckets if name == "src" else 1))
            values = ", ".join(f"({i}, {i % 97})" for i in range(SEED))
            seed_s = timed(cur, f"INSERT INTO seed VALUES {values}")
            joins = "seed a, seed b" if args.rows <= SEED ** 2 else "seed a, seed b, seed c"
            key = "a.k * 1000 + b.k" if args.rows <= SEED ** 2 else "(a.k * 1000 + b.k) * 1000 + c.k"
            log(f"bulk_insert: loading src with {args.rows:,} rows (one INSERT … SELECT cross join) …")
            src_s = timed(cur, f"INSERT INTO src SELECT {key}, a.v + b.v FROM {joins} "
                               f"ORDER BY 1 LIMIT {args.rows}")
            if (n := count(cur, "src")) != args.rows:
                raise SystemExit(f"bench/bulk_insert: src has {n} rows, expected {args.rows}")
            runs = []
            for r in range(args.runs):
                dst = f"dst{r}"
                cur.execute(create_table_sql(dst, args.model, args.buckets))
                log(f"bulk_insert: INSERT INTO {dst} SELECT * FROM src ({args.model} KEY) …")
                runs.append(timed(cur, f"INSERT INTO {dst} SELECT * FROM src"))
                if (n := count(cur, dst)) != args.rows:  # keys are distinct, so every model keeps all
                    raise SystemExit(f"bench/bulk_insert: {dst} has {n} rows, expected {args.rows}")
        conn.close()
    best = min(runs)
    median = sorted(runs)[len(runs) // 2]
    rows_per_s = args.rows / median
    emit({
        "bench": "bulk_insert",
        "goal": "measure rows/s of INSERT INTO dst SELECT * FROM src (no target set in the brief)",
        "goal_met": None,
        "rows_per_s": round(rows_per_s),
        "insert_select_s": round(median, 3),
        "insert_select_runs_s": [round(x, 3) for x in runs],
        "best_rows_per_s": round(args.rows / best),
        "setup": {"seed_values_insert_s": round(seed_s, 3), "src_cross_join_insert_s": round(src_s, 3),
                  "src_rows_per_s": round(args.rows / src_s)},
        "sizes": {"rows": args.rows, "buckets": args.buckets, "dst_model": args.model, "database": db},
        "machine": machine(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
