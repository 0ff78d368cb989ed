"""Concurrent writers: single-row INSERTs without group commit from 1, 4, 8 and 32 connections.

    .venv/bin/python -m bench.concurrent_writers [--connections 1,4,8,32] [--seconds 15] [--rounds 1] [--env-stack]

Each level gets a fresh Duplicate Key table (1 bucket, time travel on) and that many pymysql
connections (`group_commit = off_mode`, the default), each running `INSERT INTO t VALUES (k, v)` with
its own keys one after the other for --seconds. commits/s = statements answered OK ÷ wall time; every
INSERT is its own commit, which the bench checks: the table holds exactly the rows the clients were
told were written (count and distinct keys), and SHOW TIME TRAVEL lists one load commit per row.
Latency p50/p99 per statement. With --rounds N the levels run N times in turn (1, 4, 8, 32, 1, 4, …)
and each level reports the median of its rounds: on a shared machine the load of the moment moves
one round's figure more than the change measured. Goal: the highest level's commits/s >= 4× one
connection's, same run. Prints one JSON object.

Each level also says where a commit's cost goes, over its timed window: `cpu_ms_per_commit` of the SQL
server, the worker and the Kafka broker (their processes' CPU ÷ commits; on this 2-core machine 4× one
connection's rate leaves about 2000 / (4 × that rate) ms in all), and `sequencer`: Kafka transactions
per second, commands decided per transaction (how much the commit path batches across connections),
the mean produce-and-commit time of a transaction, and the share of the window the sequencer spent on
batches (near 1: it is the bottleneck; well below: the writers are).

With --sql-servers N (default 1) the bench starts N-1 more SQL servers on the stack (`more_sql_servers`)
and spreads each level's connections over all N, round robin: how far the commit path scales past one
SQL server's GIL. The goal is judged on one server; the figures say what more processes add.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

from bench.stack import (
    add_stack_args,
    bench_stack,
    create_table_sql,
    emit,
    fresh_database,
    log,
    machine,
    more_sql_servers,
    on_connections,
    percentiles_ms,
    process_cpu_s,
    sequencer_gauges,
    sql_connect,
    stack_pids,
)
from schemas.config import Settings

GOAL_RATIO = 4.0
# Keys of one connection: connection i writes i * KEYS_PER_CONNECTION + j, so no two share a key.
KEYS_PER_CONNECTION = 10_000_000


def run_level(s: Settings, db: str, connections: int, seconds: float, *, table: str,
              more: Sequence[tuple[Settings, int]] = ()) -> dict[str, Any]:
    """One level: `connections` sessions, spread round robin over the stack's SQL server and `more`."""
    conn = sql_connect(s, db)
    with conn.cursor() as cur:
        cur.execute(create_table_sql(table, "DUPLICATE", properties={"enable_time_travel": "true"}))
    servers = [s, *(extra for extra, _ in more)]
    sessions = [sql_connect(servers[i % len(servers)], db) for i in range(connections)]
    latencies: list[list[float]] = [[] for _ in range(connections)]

    def work(session: Any, i: int) -> None:
        with session.cursor() as cur:
            j = 0
            while time.monotonic() < deadline:
                t0 = time.perf_counter()
                cur.execute(f"INSERT INTO {table} VALUES ({i * KEYS_PER_CONNECTION + j}, {j})")
                latencies[i].append(time.perf_counter() - t0)
                j += 1

    pids: dict[str, int | None] = {**stack_pids(s), **{f"sql-{extra.sql_port}": pid for extra, pid in more}}

    def cpu_s() -> dict[str, float | None]:
        return {name: process_cpu_s(pid) for name, pid in pids.items()}

    cpu_before, sequencer_before = cpu_s(), sequencer_gauges(s)
    deadline = time.monotonic() + seconds  # from when every session is open
    wall = on_connections(sessions, work, f"{connections} connections inserting")
    written = sum(len(per) for per in latencies)
    cost = _costs(cpu_before, cpu_s(), sequencer_before, sequencer_gauges(s), written, wall)
    with conn.cursor() as cur:
        cur.execute(f"SELECT count(*), count(DISTINCT k) FROM {table}")
        count, distinct = cur.fetchone()
        cur.execute(f"SHOW TIME TRAVEL ON {table}")
        commits = sum(1 for r in cur.fetchall() if r[6] == "load")
    conn.close()
    if (count, distinct, commits) != (written, written, written):
        raise SystemExit(f"bench/concurrent_writers: {connections} connections: {written} INSERTs answered OK, "
                         f"table holds {count} rows ({distinct} distinct keys) in {commits} commits")
    return {"connections": connections, "commits": written, "wall_s": round(wall, 3),
            "commits_per_s": round(written / wall, 1), "latencies_s": [x for per in latencies for x in per],
            "rows_checked": count, **cost}


def _costs(cpu_before: dict[str, float | None], cpu_after: dict[str, float | None], sequencer_before: dict[str, float],
           sequencer_after: dict[str, float], commits: int, wall: float) -> dict[str, Any]:
    """Where the window's commits went: each process' CPU per commit, and how the sequencer batched them."""
    per_commit = {name: round((after - before) * 1000 / commits, 2) for name, after in cpu_after.items()
                  if commits and after is not None and (before := cpu_before.get(name)) is not None}
    per_commit["stack"] = round(sum(per_commit.values()), 2)
    moved = {k: sequencer_after.get(k, 0.0) - v for k, v in sequencer_before.items()}
    transactions = moved.get("transactions", 0.0)
    sequencer = {"transactions_per_s": round(transactions / wall, 1),
                 "commands_per_transaction": round(moved.get("transaction_commands", 0.0) / transactions, 2)
                 if transactions else None,
                 "transaction_ms_mean": round(moved.get("transaction_seconds", 0.0) * 1000 / transactions, 2)
                 if transactions else None,
                 "busy_fraction": round(moved.get("busy_seconds", 0.0) / wall, 2)}
    return {"cpu_ms_per_commit": per_commit, "sequencer": sequencer}


def _level(connections: int, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One level over its rounds: the median round's commits/s, latency over every statement, each round's costs."""
    return {"connections": connections, "commits_per_s": statistics.median(r["commits_per_s"] for r in runs),
            "rounds_commits_per_s": [r["commits_per_s"] for r in runs],
            "rounds_cpu_ms_per_commit": [r["cpu_ms_per_commit"] for r in runs],
            "rounds_sequencer": [r["sequencer"] for r in runs],
            "commits": sum(r["commits"] for r in runs), "rows_checked": sum(r["rows_checked"] for r in runs),
            "latency": percentiles_ms([x for r in runs for x in r["latencies_s"]])}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--connections", default="1,4,8,32",
                    help="comma-separated connection counts; the first is the base")
    ap.add_argument("--seconds", type=float, default=15.0, help="how long each level inserts")
    ap.add_argument("--rounds", type=int, default=1, help="times every level runs, in turn; medians reported")
    ap.add_argument("--sql-servers", type=int, default=1, choices=range(1, 5),
                    help="SQL servers the connections are spread over (the stack's and N-1 started here; their "
                         "ports step by 10, so at most 4 stay clear of the stack's own)")
    ap.add_argument("--env-stack", action="store_true", help="run on the stack this environment's STRATA_* names")
    add_stack_args(ap)
    args = ap.parse_args(argv)
    levels = [int(n) for n in args.connections.split(",")]

    with bench_stack(args.keep_stack, env_stack=args.env_stack) as s, \
            more_sql_servers(s, args.sql_servers - 1) as more:
        db = fresh_database(s, "bench_concurrent_writers")
        runs: dict[int, list[dict[str, Any]]] = {n: [] for n in levels}
        for round_ in range(args.rounds):
            for n in levels:
                log(f"concurrent_writers: round {round_ + 1}: {n} connections of single-row INSERTs "
                    f"for {args.seconds:.0f} s …")
                runs[n].append(run_level(s, db, n, args.seconds, table=f"t_{n}_{round_}", more=more))
                log(f"concurrent_writers: {n} connections: {runs[n][-1]['commits_per_s']} commits/s")
    results = [_level(n, runs[n]) for n in levels]
    base, top = results[0], results[-1]
    ratio = top["commits_per_s"] / base["commits_per_s"] if base["commits_per_s"] else 0.0
    emit({
        "bench": "concurrent_writers",
        "goal": f"{top['connections']} connections of single-row INSERTs (no group commit) reach >= "
                f"{GOAL_RATIO:g}x the commits/s of {base['connections']}, same run",
        "goal_met": ratio >= GOAL_RATIO,
        "ratio": round(ratio, 2),
        "levels": results,
        "sizes": {"seconds_per_level": args.seconds, "rounds": args.rounds, "group_commit": "off_mode",
                  "sql_servers": args.sql_servers,
                  "table": "DUPLICATE KEY(k) (k BIGINT, v BIGINT), 1 bucket, time travel on", "database": db},
        "machine": machine(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
