"""Small-insert throughput: plain INSERTs vs group commit (`SET group_commit = sync_mode / async_mode`).

    .venv/bin/python -m bench.group_commit [--clients 16] [--inserts 25] [--interval-ms 20] [--keep-stack]

N clients (one pymysql connection and one thread each) each run M single-row
`INSERT INTO t VALUES (k, v)` one after the other, on a fresh Duplicate Key table per mode (1 bucket,
time travel on so every commit is counted with SHOW TIME TRAVEL). The three modes run in the same
process, one after the other: off_mode (each INSERT is its own commit), sync_mode and async_mode
(the table's `group_commit_interval_ms` is --interval-ms; Doris's default of 10000 ms would make a
lone client wait 10 s per statement). rows/s = N × M ÷ wall time of the mode; every table is
checked to hold exactly N × M rows.
Goal: sync_mode rows/s >= plain rows/s. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import sys
import threading
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
)

MODES = ("off_mode", "sync_mode", "async_mode")


def run_mode(s, db: str, mode: str, clients: int, inserts: int, interval_ms: int) -> dict:
    table = f"t_{mode}"
    conn = sql_connect(s, db)
    with conn.cursor() as cur:
        cur.execute(create_table_sql(table, "DUPLICATE", properties={
            "enable_time_travel": "true", "group_commit_interval_ms": str(interval_ms)}))
    sessions = [sql_connect(s, db) for _ in range(clients)]
    for session in sessions:
        with session.cursor() as cur:
            cur.execute(f"SET group_commit = {mode}")
    latencies: list[list[float]] = [[] for _ in range(clients)]
    errors: list[BaseException] = []
    start = threading.Barrier(clients + 1)

    def client(i: int) -> None:
        try:
            with sessions[i].cursor() as cur:
                start.wait()
                for j in range(inserts):
                    t0 = time.perf_counter()
                    cur.execute(f"INSERT INTO {table} VALUES ({i * inserts + j}, {j})")
                    latencies[i].append(time.perf_counter() - t0)
        except BaseException as exc:  # noqa: BLE001 - reported below; the other clients go on
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    start.wait()
    t0 = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - t0
    for session in sessions:
        session.close()
    if errors:
        raise SystemExit(f"bench/group_commit: {mode}: {len(errors)} clients failed: {errors[0]!r}")
    expected = clients * inserts
    with conn.cursor() as cur:
        deadline = time.monotonic() + 30  # async rows are committed before their statement returns; be safe
        while True:
            cur.execute(f"SELECT count(*), count(DISTINCT k) FROM {table}")
            count, distinct = cur.fetchone()
            if count == expected or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        cur.execute(f"SHOW TIME TRAVEL ON {table}")
        commits = sum(1 for r in cur.fetchall() if r[6] == "load")
    conn.close()
    if (count, distinct) != (expected, expected):
        raise SystemExit(f"bench/group_commit: {mode}: expected {expected} distinct rows, found {count} ({distinct})")
    return {"rows_per_s": round(expected / wall, 1), "wall_s": round(wall, 3), "commits": commits,
            "rows_per_commit": round(expected / max(1, commits), 2),
            "latency": percentiles_ms([x for per in latencies for x in per])}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=16, help="concurrent connections")
    ap.add_argument("--inserts", type=int, default=25, help="single-row INSERTs per client")
    ap.add_argument("--interval-ms", type=int, default=20, help="the tables' group_commit_interval_ms")
    add_stack_args(ap)
    args = ap.parse_args(argv)

    with bench_stack(args.keep_stack) as s:
        db = fresh_database(s, "bench_group_commit")
        results = {}
        for mode in MODES:
            log(f"group_commit: {mode}: {args.clients} clients × {args.inserts} single-row INSERTs …")
            results[mode] = run_mode(s, db, mode, args.clients, args.inserts, args.interval_ms)
    plain, sync = results["off_mode"]["rows_per_s"], results["sync_mode"]["rows_per_s"]
    emit({
        "bench": "group_commit",
        "goal": "group-commit (sync_mode) small-insert rows/s >= plain INSERT rows/s, same run",
        "goal_met": sync >= plain,
        "plain": results["off_mode"],
        "sync_mode": results["sync_mode"],
        "async_mode": results["async_mode"],
        "ratio_sync_over_plain": round(sync / plain, 3) if plain else None,
        "ratio_async_over_plain": round(results["async_mode"]["rows_per_s"] / plain, 3) if plain else None,
        "sizes": {"clients": args.clients, "inserts_per_client": args.inserts,
                  "rows_per_mode": args.clients * args.inserts, "group_commit_interval_ms": args.interval_ms,
                  "table": "DUPLICATE KEY(k) (k BIGINT, v BIGINT), 1 bucket, time travel on", "database": db},
        "machine": machine(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
