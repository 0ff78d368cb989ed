"""Batched `INSERT … VALUES` throughput through the SQL port, side by side with DuckDB writing the same
rows to Parquet.

    .venv/bin/python -m bench.insert_values [--statements 20] [--rows-per-statement 5000] [--connections 4]
                                            [--keep-stack] [--env-stack]

A Duplicate Key table of six columns (BIGINT, VARCHAR, DECIMAL(10,2), DATETIME, INT, VARCHAR NULL) gets
--statements INSERTs of --rows-per-statement literal rows each over one pymysql connection, twice: as
written (the literal fast path, query.parser.literal_insert) and with a trailing comment that sends
them through the SQL parser; then the fast path again from --connections connections at once (a
producer pipeline's loaders, the statements split between them). The peer: DuckDB (in this process)
inserting the same VALUES statements into an in-memory table and writing it to Parquet, and DuckDB
writing the rows as an Arrow table to Parquet (its best case). Rows are counted after each run. Goal
(issue 19): at least 100k rows/s for 5,000-row statements through the fast path, reported for one
connection and for several. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

from bench import stack
from bench.stack import add_stack_args, bench_stack, emit, fresh_database, log, machine, on_connections, sql_connect

COLUMNS = "(id BIGINT, name VARCHAR(32), price DECIMAL(10,2), ts DATETIME, qty INT, note VARCHAR(16))"
GOAL_ROWS_PER_S = 100_000


def statements(count: int, per: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for s in range(count):
        base = s * per
        rows = ", ".join(f"({base + i}, 'name_{base + i}', {rng.random() * 1000:.2f}, "
                         f"'2024-01-{i % 28 + 1:02d} 10:{i % 60:02d}:00', {i % 7}, NULL)" for i in range(per))
        out.append(f"INSERT INTO t VALUES {rows}")
    return out


def through_sql(cur: object, texts: list[str], tail: str) -> float:
    started = time.perf_counter()
    for text in texts:
        cur.execute(text + tail)  # type: ignore[attr-defined]
    return time.perf_counter() - started


def through_connections(connect: Callable[[], Any], texts: list[str], connections: int) -> float:
    """Seconds for `texts` sent from `connections` connections at once, each its share in order."""
    def send(conn: Any, i: int) -> None:
        with conn.cursor() as cur:
            through_sql(cur, texts[i::connections], "")
    return on_connections([connect() for _ in range(connections)], send, "an INSERT … VALUES connection")


def through_duckdb(texts: list[str], out: Path) -> tuple[float, float]:
    """(VALUES statements then a Parquet write, Arrow table straight to Parquet) in seconds."""
    con = duckdb.connect()
    con.execute(f"CREATE TABLE t {COLUMNS.replace('DATETIME', 'TIMESTAMP')}")
    started = time.perf_counter()
    for text in texts:
        con.execute(text)
    con.execute(f"COPY t TO '{out / 'values.parquet'}' (FORMAT PARQUET)")
    values_s = time.perf_counter() - started
    con.register("rows_arrow", con.sql("SELECT * FROM t").to_arrow_table())
    started = time.perf_counter()
    con.execute(f"COPY (SELECT * FROM rows_arrow) TO '{out / 'arrow.parquet'}' (FORMAT PARQUET)")
    return values_s, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--statements", type=int, default=20)
    ap.add_argument("--rows-per-statement", type=int, default=5000)
    ap.add_argument("--connections", type=int, default=4)
    add_stack_args(ap, env_stack=True)
    args = ap.parse_args(argv)
    texts = statements(args.statements, args.rows_per_statement)
    total = args.statements * args.rows_per_statement
    results: dict[str, float] = {}
    server_cpu: dict[str, float | None] = {}  # the SQL server's CPU seconds for each run's rows
    with bench_stack(args.keep_stack, env_stack=args.env_stack) as s:
        pid = stack.stack_pids(s)["sql"]

        def measured(name: str, run: Callable[[], float]) -> None:
            before = stack.process_cpu_s(pid)
            results[name] = run()
            after = stack.process_cpu_s(pid)
            server_cpu[name] = None if before is None or after is None else after - before

        db = fresh_database(s, "bench_values")
        conn = sql_connect(s, db)
        with conn.cursor() as cur:
            for name, tail in (("fast_path", ""), ("parser_path", " /* through the parser */")):
                cur.execute("DROP TABLE IF EXISTS t")
                cur.execute(f"CREATE TABLE t {COLUMNS} DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
                log(f"insert_values: {args.statements} × {args.rows_per_statement} rows, {name} …")
                measured(name, lambda: through_sql(cur, texts, tail))  # noqa: B023 - called at once
                cur.execute("SELECT count(*) FROM t")
                if (n := cur.fetchone()[0]) != total:
                    raise SystemExit(f"bench/insert_values: {name} loaded {n} rows, expected {total}")
            cur.execute("TRUNCATE TABLE t")
            many = f"fast_path_{args.connections}_connections"
            log(f"insert_values: the same from {args.connections} connections …")
            measured(many, lambda: through_connections(lambda: sql_connect(s, db), texts, args.connections))
            cur.execute("SELECT count(*) FROM t")
            if (n := cur.fetchone()[0]) != total:
                raise SystemExit(f"bench/insert_values: {many} loaded {n} rows, expected {total}")
        conn.close()
    with tempfile.TemporaryDirectory() as tmp:
        results["duckdb_values_to_parquet"], results["duckdb_arrow_to_parquet"] = through_duckdb(texts, Path(tmp))
    rates = {name: round(total / seconds) for name, seconds in results.items()}
    emit({
        "bench": "insert_values",
        "goal": f"fast_path >= {GOAL_ROWS_PER_S} rows/s for {args.rows_per_statement}-row statements",
        "goal_met": {"one_connection": rates["fast_path"] >= GOAL_ROWS_PER_S,
                     f"{args.connections}_connections": rates[many] >= GOAL_ROWS_PER_S},
        "rows_per_s": rates,
        "seconds": {name: round(seconds, 3) for name, seconds in results.items()},
        # CPU is the fair comparison on a shared machine: the wall clock also counts other processes' turns.
        "server_cpu_s_per_1m_rows": {name: None if cpu is None else round(cpu / total * 1e6, 2)
                                     for name, cpu in server_cpu.items()},
        "statement_bytes": len(texts[0]),
        "sizes": {"statements": args.statements, "rows_per_statement": args.rows_per_statement, "rows": total},
        "machine": machine(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
