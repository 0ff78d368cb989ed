"""Merge-on-write vs merge-on-read Unique Key tables vs DuckDB over the same rows as plain Parquet.

    .venv/bin/python -m bench.unique_mow [--rows 1000000] [--upserts 100000] [--upsert-batches 10]
                                         [--buckets 3] [--runs 10] [--auto-compaction]
                                         [--keep-stack | --env-stack]

An orders-like table (k BIGINT key, c BIGINT, status VARCHAR(1), price DOUBLE, d DATE) loaded with
--rows rows (INSERT … SELECT, four statements), then --upserts upserts of distinct existing keys in
--upsert-batches INSERT … SELECT statements, twice in the same run: once merge-on-write (Doris'
default) and once with `"enable_unique_key_merge_on_write" = "false"`. Then, through the SQL port,
p50/p99 of --runs executions (after a warm-up) of:
- `point_lookup`: `SELECT * FROM t WHERE k = <key>`, a different (upserted or not) key each run;
- `count`: `SELECT count(*) FROM t`;
- `filtered_aggregate`: `SELECT status, count(*), sum(price) FROM t WHERE d >= '1996-01-01' GROUP BY status`;
and the same queries by DuckDB in this process over the table's final rows written as one plain Parquet
file (computed from the same generating expressions). Every answer is compared across the three.

Load cost: each upsert statement's time (the commit is visible when it returns) in both tables, and
for merge-on-write the time until the worker's delete bitmaps of the statement are committed too
(EXPLAIN reports every tablet merge-on-write), as rows/s. Both tables are created with
`disable_auto_compaction` unless --auto-compaction: the read paths are compared over the same 14
rowsets per tablet.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from bench.stack import add_stack_args, bench_stack, emit, fresh_database, log, machine, percentiles_ms, sql_connect

SEED = 1000
STRIDE = 7919  # prime: upsert u writes key (u * STRIDE) % rows, distinct for u < rows
COLUMNS = "k, c, status, price, d"
# Row i of the first load, and the values an upsert gives key k (the generating expressions both
# Strata and the DuckDB peer evaluate).
BASE = ("{i} AS k, {i} % 10007 AS c, CASE {i} % 3 WHEN 0 THEN 'A' WHEN 1 THEN 'B' ELSE 'C' END AS status, "
        "({i} % 1000) * 1.5 AS price, DATE '1992-01-01' + CAST({i} % 2500 AS INTEGER) AS d")
UPSERT = ("{k} AS k, {k} % 10007 + 1 AS c, 'U' AS status, ({k} % 1000) * 1.5 + 1 AS price, "
          "DATE '1992-01-01' + CAST({k} % 2500 AS INTEGER) AS d")
QUERIES = {
    "count": "SELECT count(*) FROM t",
    "filtered_aggregate": "SELECT status, count(*), sum(price) FROM t WHERE d >= DATE '1996-01-01' "
                          "GROUP BY status ORDER BY status",
}
WAIT_BITMAPS_S = 300.0


def _seeded(per: int, offset: int, expr: str) -> str:
    """INSERT … SELECT body: `per` rows numbered offset + (a.k * 1000 + b.k) from the seed table."""
    index = f"({offset} + a.k * 1000 + b.k)"
    return f"SELECT {expr} FROM seed a, seed b WHERE a.k * 1000 + b.k < {per}".replace("{i}", index)


def _plan(cur: Any, table: str) -> str:
    cur.execute(f"EXPLAIN SELECT * FROM {table}")
    return next(str(r[0]).strip() for r in cur.fetchall() if str(r[0]).strip().startswith("merge:"))


def _bitmaps_in(cur: Any, table: str) -> float:
    """Waits until every tablet of `table` reads merge-on-write; returns the seconds waited."""
    t0 = time.perf_counter()
    while "merge-on-read" in _plan(cur, table):
        if time.perf_counter() - t0 > WAIT_BITMAPS_S:
            raise SystemExit(f"bench/unique_mow: the delete bitmaps of {table} did not come in "
                             f"{WAIT_BITMAPS_S:.0f} s")
        time.sleep(0.02)
    return time.perf_counter() - t0


def load(cur: Any, table: str, rows: int, upserts: int, batches: int, on_write: bool) -> dict[str, Any]:
    t0 = time.perf_counter()
    per = rows // 4
    for part in range(4):
        cur.execute(f"INSERT INTO {table} ({COLUMNS}) {_seeded(per, part * per, BASE)}")
    base_s = time.perf_counter() - t0
    if on_write:
        _bitmaps_in(cur, table)
    size = upserts // batches
    statement_s, visible_s = [], []
    for b in range(batches):
        key = f"((({b * size} + a.k * 1000 + b.k) * {STRIDE}) % {rows})"
        t0 = time.perf_counter()
        cur.execute(f"INSERT INTO {table} ({COLUMNS}) {_seeded(size, 0, UPSERT.replace('{k}', key))}")
        statement_s.append(time.perf_counter() - t0)
        waited = _bitmaps_in(cur, table) if on_write else 0.0
        visible_s.append(statement_s[-1] + waited)
    done = size * batches
    out: dict[str, Any] = {"base_load_s": round(base_s, 2), "upsert_rows": done,
                           "upsert_statement_rows_per_s": round(done / sum(statement_s)),
                           "upsert_statement_p50_ms": percentiles_ms(statement_s)["p50_ms"]}
    if on_write:
        out["upsert_with_bitmaps_rows_per_s"] = round(done / sum(visible_s))
        out["bitmap_lag_p50_ms"] = percentiles_ms([v - s for v, s in zip(visible_s, statement_s, strict=True)])[
            "p50_ms"]
    return out


def _timed(run: Any, sql: str, runs: int) -> tuple[dict[str, float], Any]:
    first = run(sql)
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run(sql)
        samples.append(time.perf_counter() - t0)
    return percentiles_ms(samples), first


def _normal(rows: Any) -> list[tuple[Any, ...]]:
    """Rows comparable across the wire and DuckDB: floats rounded, everything else as text."""
    return [tuple(round(float(v), 4) if isinstance(v, float | Decimal) else str(v) for v in row) for row in rows]


def measure(run: Any, lookups: list[int], runs: int) -> tuple[dict[str, Any], dict[str, Any]]:
    timings: dict[str, Any] = {}
    answers: dict[str, Any] = {}
    samples = []
    found = []
    run(f"SELECT {COLUMNS} FROM t WHERE k = {lookups[-1]}")  # warm-up
    for key in lookups[:runs]:
        t0 = time.perf_counter()
        found.append(_normal(run(f"SELECT {COLUMNS} FROM t WHERE k = {key}")))
        samples.append(time.perf_counter() - t0)
    timings["point_lookup"] = percentiles_ms(samples)
    answers["point_lookup"] = found
    for name, sql in QUERIES.items():
        timings[name], first = _timed(run, sql, runs)
        answers[name] = _normal(first)
    return timings, answers


def peer(rows: int, upserts: int, lookups: list[int], runs: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """DuckDB over one Parquet file holding the table's final rows."""
    import duckdb

    con = duckdb.connect()
    with tempfile.TemporaryDirectory(prefix="bench-unique-mow-") as tmp:
        path = Path(tmp) / "t.parquet"
        upserted = f"SELECT (u * {STRIDE}) % {rows} AS k FROM range({upserts}) r(u)"
        con.execute(f"COPY (SELECT {BASE.replace('{i}', 'i')} FROM range({rows}) r(i) "
                    f"WHERE i NOT IN ({upserted}) UNION ALL SELECT {UPSERT.replace('{k}', 'u.k')} "
                    f"FROM ({upserted}) u) TO '{path}' (FORMAT parquet)")
        con.execute(f"CREATE VIEW t AS SELECT * FROM read_parquet('{path}')")
        result = measure(lambda sql: con.execute(sql).fetchall(), lookups, runs)
    con.close()
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--upserts", type=int, default=100_000)
    ap.add_argument("--upsert-batches", type=int, default=10)
    ap.add_argument("--buckets", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--auto-compaction", action="store_true",
                    help="let the worker compact both tables while they load (off: each tablet keeps its 14 "
                         "rowsets; a cumulative compaction racing the bitmaps can leave tablets merge-on-read)")
    add_stack_args(ap, env_stack=True)
    args = ap.parse_args(argv)
    if args.rows % 4 or args.rows // 4 > SEED * SEED or args.upserts > args.rows or args.upserts % args.upsert_batches:
        raise SystemExit("bench/unique_mow: --rows must be a multiple of 4 (at most 4M), --upserts at most --rows "
                         "and a multiple of --upsert-batches")
    rng = random.Random(20)
    lookups = [rng.randrange(args.rows) for _ in range(args.runs + 1)]
    tables: dict[str, dict[str, Any]] = {}
    answers: dict[str, dict[str, Any]] = {}
    with bench_stack(args.keep_stack, env_stack=args.env_stack) as s:
        db = fresh_database(s, "bench_unique_mow")
        conn = sql_connect(s, db)
        with conn.cursor() as cur:
            cur.execute("CREATE TABLE seed (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
            cur.execute("INSERT INTO seed VALUES " + ", ".join(f"({i})" for i in range(SEED)))
            for name, on_write in (("merge_on_write", True), ("merge_on_read", False)):
                compaction = "" if args.auto_compaction else ', "disable_auto_compaction" = "true"'
                cur.execute(f"CREATE TABLE {name} (k BIGINT, c BIGINT, status VARCHAR(1), price DOUBLE, d DATE) "
                            f"UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS {args.buckets} "
                            f'PROPERTIES ("enable_unique_key_merge_on_write" = "{str(on_write).lower()}"'
                            f"{compaction})")
                log(f"unique_mow: {name}: loading {args.rows:,} rows and {args.upserts:,} upserts …")
                loaded = load(cur, name, args.rows, args.upserts, args.upsert_batches, on_write)
                if on_write:
                    _bitmaps_in(cur, name)
                plan = _plan(cur, name)

                def run(sql: str, table: str = name) -> Any:
                    cur.execute(sql.replace(" FROM t", f" FROM {table}"))
                    return cur.fetchall()
                timings, answers[name] = measure(run, lookups, args.runs)
                tables[name] = {"load": loaded, "queries": timings, "plan": plan}
                log(f"unique_mow: {name}: {timings}")
        conn.close()
    log("unique_mow: DuckDB over the same rows as Parquet …")
    duck_timings, answers["duckdb_parquet"] = peer(args.rows, args.upserts, lookups, args.runs)
    matched = answers["merge_on_write"] == answers["merge_on_read"] == answers["duckdb_parquet"]
    if not matched:
        for name, found in answers.items():
            log(f"unique_mow: answers of {name}: {found}")
    ratios = {q: {"mow_vs_mor": round(tables["merge_on_write"]["queries"][q]["p50_ms"] /
                                      tables["merge_on_read"]["queries"][q]["p50_ms"], 2),
                  "mow_vs_duckdb": round(tables["merge_on_write"]["queries"][q]["p50_ms"] /
                                         duck_timings[q]["p50_ms"], 2)}
              for q in duck_timings}
    emit({
        "bench": "unique_mow",
        "goal": "issue 20: a merge-on-write Unique Key read costs what a Duplicate read costs (analytic set "
                "within 1.3x of DuckDB over the same rows as Parquet, point lookups under 10 ms)",
        "goal_met": matched and all(r["mow_vs_duckdb"] <= 1.3 for r in ratios.values())
        and tables["merge_on_write"]["queries"]["point_lookup"]["p50_ms"] < 10,
        "answers_match": matched,
        "tables": tables,
        "duckdb_parquet": {"queries": duck_timings},
        "p50_ratios": ratios,
        "sizes": {"rows": args.rows, "upserts": args.upserts, "upsert_batches": args.upsert_batches,
                  "buckets": args.buckets, "runs": args.runs, "auto_compaction": args.auto_compaction},
        "machine": machine(),
    })
    return 0 if matched else 1


if __name__ == "__main__":
    sys.exit(main())
