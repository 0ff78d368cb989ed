"""Catalog scale: what one table's metadata costs when the catalog holds --rowsets rowsets, and what
the worker's agents cost per second over such a catalog, idle and during inserts.

    .venv/bin/python -m bench.catalog_scale [--rowsets 100000] [--tables 1000] [--runs 30] [--cpu-window-s 10]
                                            [--keep-stack]

1. Tables `pad` (auto compaction off) and `x` get one INSERT each; `pad`'s committed rowset is the
   template of --rowsets CommitRowsets commands sent straight to strata.commands (as bench/replay
   does), so the catalog holds --rowsets rowsets without writing their files.
2. `SELECT … FROM information_schema.rowsets WHERE TABLE_NAME = 'x'`: p50 of --runs (the goal),
   beside its peer, the same question asked so that nothing is pushed down
   (`WHERE CONCAT(TABLE_NAME, '') = 'x'`: every rowset's row is built, then filtered).
   Both answers must be equal. The same for information_schema.tables and .partitions.
3. The worker's CPU (utime + stime of its process, in CPU-seconds per second) over --cpu-window-s
   idle, then over --cpu-window-s while one client INSERTs into `x` in a loop; with nothing else
   running, idle CPU is the agents' periodic work over the catalog.
4. In this process, over a read-only open of the SQL server's replica: one recycler pass's look at
   `pad` (`streams.recycler.due_rowsets`, through the stale-rowset index) beside its peer, decoding
   every rowset record of `pad` (what each pass did before the index).
5. Name resolution: --tables more tables are created in the database through the SQL port and half of
   them dropped (a dropped table stays in the catalog, recoverable, until purged). In this process, over
   the replica: resolving `db.x` as every statement does (`database_by_name`, `table_by_name`, through
   the name index, projections.catalog_names) beside its peer, the walk over every database and table
   the lookups did before the index (the same answer required); and through the SQL port, the p50 of a
   point query on `x` with the catalog at that size; and how many tables the worker's last recycler pass
   read the stale rowsets of (`strata_recycler_tables_looked_at`: those with stale rowsets written since
   the pass before or left by it) beside the catalog's tables and its dropped ones.
Goal: p50 of (2) under 20 ms with >= 100,000 rowsets in the catalog. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
import uuid
from typing import Any

from bench.replay import pad_and_probe, produce_commands, wait_sequenced
from bench.stack import (
    add_stack_args,
    bench_stack,
    create_table_sql,
    emit,
    find_table,
    log,
    machine,
    percentiles_ms,
    sequencer_gauges,
    sql_connect,
    sql_projection_path,
    stack_pids,
    worker_gauges,
)
from schemas.config import Settings

GOAL_P50_MS = 20.0
GOAL_ROWSETS = 100_000
COLUMNS = "ROWSET_ID, TABLE_SCHEMA, TABLE_NAME, PARTITION_NAME, ROWSET_NUM_ROWS, STATE, TIER"
# (information_schema table, its columns asked for) measured pushed down and not.
QUESTIONS = (("rowsets", COLUMNS), ("tables", "TABLE_NAME, TABLE_ROWS, DATA_LENGTH"),
             ("partitions", "TABLE_NAME, PARTITION_NAME, TABLE_ROWS"))


def _timed(cur: Any, sql: str, runs: int) -> tuple[dict[str, float], list[Any]]:
    cur.execute(sql)
    rows = sorted(cur.fetchall())
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        cur.execute(sql)
        found = sorted(cur.fetchall())
        samples.append(time.perf_counter() - t0)
        if found != rows:
            raise SystemExit(f"bench/catalog_scale: {sql!r} answered differently between runs")
    return percentiles_ms(samples), rows


def metadata_queries(s: Settings, db: str, runs: int, peer_runs: int) -> dict[str, Any]:
    conn = sql_connect(s, db)
    out: dict[str, Any] = {}
    try:
        with conn.cursor() as cur:
            for table, columns in QUESTIONS:
                where = f"TABLE_SCHEMA = '{db}' AND TABLE_NAME = 'x'"
                pushed, rows = _timed(cur, f"SELECT {columns} FROM information_schema.{table} WHERE {where}", runs)
                # CONCAT hides the column from the pushdown: the peer builds every row, DuckDB filters.
                full_where = f"CONCAT(TABLE_SCHEMA, '') = '{db}' AND CONCAT(TABLE_NAME, '') = 'x'"
                full, full_rows = _timed(cur, f"SELECT {columns} FROM information_schema.{table} WHERE {full_where}",
                                         peer_runs)
                if rows != full_rows or not rows:
                    raise SystemExit(f"bench/catalog_scale: information_schema.{table}: pushed-down answer "
                                     f"{rows[:3]} differs from the full build's {full_rows[:3]}")
                out[table] = {"pushed_down": pushed, "full_build_peer": full, "rows": len(rows),
                              "speedup_p50": round(full["p50_ms"] / max(pushed["p50_ms"], 1e-6), 1)}
    finally:
        conn.close()
    return out


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def worker_cpu(s: Settings, db: str, window_s: float) -> dict[str, Any]:
    pid = stack_pids(s)["worker"]
    if pid is None:
        raise SystemExit("bench/catalog_scale: no worker pid file")

    def measure() -> float:
        c0, t0 = _cpu_s(pid), time.perf_counter()
        time.sleep(window_s)
        return (_cpu_s(pid) - c0) / (time.perf_counter() - t0)

    time.sleep(2)  # what the setup left to do (the replica folding, a pass already due) settles
    idle = measure()
    stop = threading.Event()
    inserts = [0]

    def insert_loop() -> None:
        conn = sql_connect(s, db)
        try:
            with conn.cursor() as cur:
                while not stop.is_set():
                    cur.execute(f"INSERT INTO x VALUES ({inserts[0] + 2}, 1)")
                    inserts[0] += 1
        finally:
            conn.close()

    thread = threading.Thread(target=insert_loop, daemon=True)
    thread.start()
    time.sleep(1)
    before = inserts[0]
    busy = measure()
    done = inserts[0] - before
    stop.set()
    thread.join(30)
    return {"idle_cpu_s_per_s": round(idle, 3), "inserting_cpu_s_per_s": round(busy, 3),
            "inserts_per_s": round(done / window_s, 1), "window_s": window_s,
            "note": "the worker process' utime+stime; idle = its agents' periodic passes plus the follower"}


def recycler_pass(s: Settings, db: str, runs: int) -> dict[str, Any]:
    from projections.projection import Projection
    from projections.retention import tag_instants_ms
    from projections.state import RowsetRecord
    from streams.recycler import due_rowsets

    projection = Projection(sql_projection_path(s), read_only=True)
    try:
        pad = find_table(projection, db, "pad")
        now_ms = int(time.time() * 1000)
        tagged = tag_instants_ms(pad, now_ms)
        indexed, decoded = [], []
        for _ in range(runs):
            t0 = time.perf_counter()
            due_rowsets(projection, pad, now_ms, tagged)
            indexed.append(time.perf_counter() - t0)
        for _ in range(max(1, runs // 10)):
            t0 = time.perf_counter()
            records: list[RowsetRecord] = list(projection.rowset_records(pad.table_id))
            decoded.append(time.perf_counter() - t0)
        return {"stale_index_pass": percentiles_ms(indexed), "decode_every_record_peer": percentiles_ms(decoded),
                "records_decoded_by_peer": len(records)}
    finally:
        projection.close()


def add_tables(s: Settings, db: str, n: int) -> None:
    """`n` tables `c0…` in `db`, every other one dropped again."""
    conn = sql_connect(s, db)
    try:
        with conn.cursor() as cur:
            for i in range(n):
                cur.execute(create_table_sql(f"c{i}", "DUPLICATE"))
                if i % 2:
                    cur.execute(f"DROP TABLE c{i}")
    finally:
        conn.close()


def name_resolution(s: Settings, db: str, runs: int) -> dict[str, Any]:
    from projections.projection import Projection

    projection = Projection(sql_projection_path(s), read_only=True)
    try:
        def indexed() -> Any:
            found = projection.database_by_name(db)
            return None if found is None else projection.table_by_name(found.db_id, "x")

        def walked() -> Any:  # the peer: what both lookups did before the index
            dbs = [d for d in projection.databases.values() if d.name.lower() == db.lower() and d.dropped_ts_ms is None]
            if not dbs:
                return None
            db_id = max(dbs, key=lambda d: d.db_id).db_id
            tables = [t for t in projection.tables.values()
                      if t.db_id == db_id and t.name.lower() == "x" and t.dropped_ts_ms is None]
            return max(tables, key=lambda t: t.table_id) if tables else None

        if indexed() is None or indexed() is not walked():
            raise SystemExit("bench/catalog_scale: the name index and the walk resolve db.x differently")
        timings: dict[str, list[float]] = {"index": [], "walk_peer": []}
        for _ in range(max(runs, 1000)):
            for name, resolve in (("index", indexed), ("walk_peer", walked)):
                t0 = time.perf_counter()
                resolve()
                timings[name].append(time.perf_counter() - t0)
        figures = {name: {"p50_us": round(1e3 * percentiles_ms(samples)["p50_ms"], 2)}
                   for name, samples in timings.items()}
        sizes = {"catalog_tables": len(projection.tables), "catalog_databases": len(projection.databases),
                 "catalog_dropped_tables": len(projection.dropped_tables())}
    finally:
        projection.close()
    conn = sql_connect(s, db)
    try:
        with conn.cursor() as cur:
            point, _ = _timed(cur, "SELECT k FROM x WHERE k = 1", runs)
    finally:
        conn.close()
    time.sleep(s.recycle_interval_s * 2)  # a recycler pass after the tables came
    return {**figures, **sizes, "sql_point_query_on_x": point,
            "recycler_pass_tables_looked_at": worker_gauges(s, "strata_recycler_").get("tables_looked_at"),
            "speedup_p50": round(figures["walk_peer"]["p50_us"] / max(figures["index"]["p50_us"], 1e-6), 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rowsets", type=int, default=GOAL_ROWSETS, help="rowsets put in the catalog (table pad)")
    ap.add_argument("--tables", type=int, default=1000, help="tables created (half dropped again) for step 5")
    ap.add_argument("--runs", type=int, default=30, help="timed runs of each pushed-down query")
    ap.add_argument("--peer-runs", type=int, default=3, help="timed runs of each full-build peer query")
    ap.add_argument("--cpu-window-s", type=float, default=10.0, help="seconds of each worker CPU window")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds to wait for the sequencer / replica")
    add_stack_args(ap, env_stack=True)
    args = ap.parse_args(argv)
    run_id = uuid.uuid4().hex[:8]

    with bench_stack(args.keep_stack, env_stack=args.env_stack) as s:
        db, table_id, template = pad_and_probe(s, "bench_catalog", "x")
        g0 = sequencer_gauges(s)
        log(f"catalog_scale: producing {args.rowsets:,} CommitRowsets for {db}.pad …")
        t0 = time.perf_counter()
        produce_commands(s, table_id, template, args.rowsets, run_id)
        wait_sequenced(s, g0.get("commands_applied", 0) + args.rowsets, g0.get("commands_rejected", 0), t0,
                       args.timeout)
        conn = sql_connect(s, db)
        with conn.cursor() as cur:  # waits (command_timeout_s at a time) for the SQL replica to catch up
            cur.execute("SELECT count(*) FROM information_schema.rowsets WHERE TABLE_NAME = 'pad'")
            (pad_rowsets,) = cur.fetchone()
            cur.execute("SELECT count(*) FROM information_schema.rowsets")
            (catalog_rowsets,) = cur.fetchone()
        conn.close()
        log(f"catalog_scale: {catalog_rowsets:,} rowsets in the catalog; timing metadata queries …")
        queries = metadata_queries(s, db, args.runs, args.peer_runs)
        log("catalog_scale: worker CPU idle and during inserts …")
        cpu = worker_cpu(s, db, args.cpu_window_s)
        recycler = recycler_pass(s, db, args.runs)
        log(f"catalog_scale: {args.tables:,} more tables, then name resolution …")
        add_tables(s, db, args.tables)
        names = name_resolution(s, db, args.runs)

    p50 = queries["rowsets"]["pushed_down"]["p50_ms"]
    emit({
        "bench": "catalog_scale",
        "goal": f"information_schema.rowsets WHERE TABLE_NAME = 'x' p50 < {GOAL_P50_MS} ms with >= "
                f"{GOAL_ROWSETS} rowsets in the catalog",
        "goal_met": bool(p50 < GOAL_P50_MS and catalog_rowsets >= GOAL_ROWSETS),
        "information_schema": queries,
        "worker_cpu": cpu,
        "recycler_pass_over_pad": recycler,
        "name_resolution": names,
        "sizes": {"catalog_rowsets": catalog_rowsets, "pad_rowsets": pad_rowsets, "commands": args.rowsets,
                  "tables_added": args.tables, "database": db},
        "machine": machine(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
