"""Cooldown throughput and cold-read latency, through the SQL port of the bench stack.

    .venv/bin/python -m bench.cooldown [--inserts 8] [--rows-per-insert 1000000] [--buckets 2]
                                       [--runs 10] [--keep-stack]

A Duplicate Key table (auto compaction off, so its files stay as loaded) gets --inserts
`INSERT INTO t SELECT …` of random BIGINTs (incompressible, so bytes moved ≈ bytes loaded).

1. Hot: `SELECT count(*), sum(v) FROM t`, p50 of --runs after one warm-up.
2. Peer: the same rowset files uploaded with plain `minio.fput_object` into another bucket of
   the same MinIO → MB/s: one after another (the goal's peer), and also with MOVE_THREADS threads
   (reported beside it: the agent overlaps uploads of different tablets and rowsets).
3. Cooldown: a storage policy with `cooldown_ttl` 1 s is attached (`ALTER TABLE t SET`); timed
   from that statement until information_schema.rowsets shows every rowset remote → MB/s. This
   includes the agent's polling (tiering_interval_s), checksum verification and the commit of each
   move through the log.
4. Cold: the same query with the SQL server's file cache cleared before each run
   (`POST /api/file_cache?op=clear`), and warm: with the cache kept.
Goals: cooldown MB/s ≥ 80 % of the serial peer's; cold p50 ≤ 3 × hot p50; warm p50 ≤ 1.1 × hot p50.
Every query's result is checked against the hot one. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import sys
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

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
from streams.tiering_agent import MOVE_THREADS

GOAL_THROUGHPUT = 0.8
GOAL_COLD = 3.0
GOAL_WARM = 1.1
QUERY = "SELECT count(*), sum(v) FROM t"


def _timed_runs(cur: Any, runs: int, before: Any = None) -> tuple[list[float], set[Any]]:
    samples, results = [], set()
    cur.execute(QUERY)
    cur.fetchall()
    for _ in range(runs):
        if before is not None:
            before()
        t0 = time.perf_counter()
        cur.execute(QUERY)
        results.add(tuple(cur.fetchall()[0]))
        samples.append(time.perf_counter() - t0)
    return samples, results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inserts", type=int, default=8)
    parser.add_argument("--rows-per-insert", type=int, default=1_000_000)
    parser.add_argument("--buckets", type=int, default=2)
    parser.add_argument("--runs", type=int, default=10)
    add_stack_args(parser)
    args = parser.parse_args(argv)

    from minio import Minio

    with bench_stack(args.keep_stack) as s:
        minio = Minio(s.minio_endpoint, s.minio_root_user, s.minio_root_password.get_secret_value(), secure=False)
        cold_bucket, peer_bucket = f"bench-cold-{uuid.uuid4().hex[:8]}", f"bench-peer-{uuid.uuid4().hex[:8]}"
        minio.make_bucket(cold_bucket)
        minio.make_bucket(peer_bucket)
        db = fresh_database(s, "cooldown")
        conn = sql_connect(s, db)
        cur = conn.cursor()
        resource, policy = f"bench_res_{uuid.uuid4().hex[:6]}", f"bench_pol_{uuid.uuid4().hex[:6]}"
        cur.execute(f'CREATE RESOURCE "{resource}" PROPERTIES ("type"="s3", "s3.endpoint"="{s.minio_endpoint}", '
                    f'"s3.region"="us-east-1", "s3.bucket"="{cold_bucket}", "s3.root.path"="strata", '
                    f'"s3.access_key"="{s.minio_root_user}", '
                    f'"s3.secret_key"="{s.minio_root_password.get_secret_value()}")')
        cur.execute(f'CREATE STORAGE POLICY {policy} PROPERTIES ("storage_resource"="{resource}", '
                    '"cooldown_ttl"="1")')
        cur.execute(create_table_sql("t", "DUPLICATE", args.buckets, {"disable_auto_compaction": "true"}))
        side = int(args.rows_per_insert ** 0.5) + 1
        cur.execute(create_table_sql("seed", "DUPLICATE"))
        cur.execute("INSERT INTO seed VALUES " + ", ".join(f"({i}, 0)" for i in range(side)))
        log(f"cooldown: {args.inserts} inserts of ~{args.rows_per_insert} rows …")
        for i in range(args.inserts):
            cur.execute(f"INSERT INTO t SELECT {i} * {side * side} + a.k * {side} + b.k, "
                        f"CAST(RAND() * 9000000000000000000 AS BIGINT) FROM seed a, seed b "
                        f"WHERE a.k * {side} + b.k < {args.rows_per_insert}")
        hot, hot_results = _timed_runs(cur, args.runs)

        files = [Path(p) for p in table_rowset_files(s, db, "t")]
        total = sum(p.stat().st_size for p in files)
        log(f"cooldown: peer fput_object of {len(files)} files, {total / 1e6:.1f} MB …")
        t0 = time.perf_counter()
        for i, path in enumerate(files):
            minio.fput_object(peer_bucket, f"serial/{i}/{path.name}", str(path))
        peer_serial_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        with ThreadPoolExecutor(MOVE_THREADS) as pool:
            list(pool.map(lambda ip: minio.fput_object(peer_bucket, f"parallel/{ip[0]}/{ip[1].name}", str(ip[1])),
                          enumerate(files)))
        peer_s = time.perf_counter() - t0

        log("cooldown: attaching the policy and waiting for every rowset to be remote …")
        t0 = time.perf_counter()
        cur.execute(f'ALTER TABLE t SET ("storage_policy"="{policy}")')
        while True:
            cur.execute(f"SELECT TIER, COUNT(*) FROM information_schema.rowsets WHERE TABLE_SCHEMA = '{db}' "
                        "AND TABLE_NAME = 't' GROUP BY TIER")
            found = dict(cur.fetchall())
            if set(found) == {f"remote:{resource}"}:
                break
            if time.perf_counter() - t0 > 600:
                raise SystemExit(f"cooldown: not cooled after 600 s: {found}")
            time.sleep(0.02)
        cooldown_s = time.perf_counter() - t0

        def clear_cache() -> None:
            request = urllib.request.Request(f"http://127.0.0.1:{s.http_port}/api/file_cache?op=clear", method="POST")
            urllib.request.urlopen(request, timeout=30).read()

        cold, cold_results = _timed_runs(cur, args.runs, before=clear_cache)
        warm, warm_results = _timed_runs(cur, args.runs)
        conn.close()

    if not (hot_results == cold_results == warm_results) or len(hot_results) != 1:
        raise SystemExit(f"cooldown: results differ: hot {hot_results} cold {cold_results} warm {warm_results}")
    hot_p, cold_p, warm_p = percentiles_ms(hot), percentiles_ms(cold), percentiles_ms(warm)
    parallel_mbs, strata_mbs = total / 1e6 / peer_s, total / 1e6 / cooldown_s
    serial_mbs = total / 1e6 / peer_serial_s
    throughput = strata_mbs / serial_mbs
    cold_ratio, warm_ratio = cold_p["p50_ms"] / hot_p["p50_ms"], warm_p["p50_ms"] / hot_p["p50_ms"]
    goals_met = {"throughput": throughput >= GOAL_THROUGHPUT, "cold_cache": cold_ratio <= GOAL_COLD,
                 "warm_cache": warm_ratio <= GOAL_WARM}
    emit({
        "bench": "cooldown",
        "goal": {"cooldown_mb_per_s_over_fput_object": f">= {GOAL_THROUGHPUT}",
                 "cold_cache_p50_over_hot": f"<= {GOAL_COLD}", "warm_cache_p50_over_hot": f"<= {GOAL_WARM}"},
        "goal_met": all(goals_met.values()), "goals_met": goals_met,
        "sizes": {"files": len(files), "bytes": total, "rows": args.inserts * args.rows_per_insert,
                  "buckets": args.buckets},
        "cooldown": {"seconds": round(cooldown_s, 3), "mb_per_s": round(strata_mbs, 1)},
        "peer_fput_object": {"seconds": round(peer_serial_s, 3), "mb_per_s": round(serial_mbs, 1)},
        "peer_fput_object_threads": {"threads": MOVE_THREADS, "seconds": round(peer_s, 3),
                                     "mb_per_s": round(parallel_mbs, 1)},
        "throughput_ratio": round(throughput, 3),
        "throughput_ratio_vs_threaded_peer": round(strata_mbs / parallel_mbs, 3),
        "query": QUERY, "hot": hot_p, "cold_cache": cold_p, "warm_cache": warm_p,
        "cold_over_hot": round(cold_ratio, 3), "warm_over_hot": round(warm_ratio, 3),
        "machine": machine(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
