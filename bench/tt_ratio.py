"""Time-travel query latency ÷ latest query latency on the same compacted table, through the SQL port.

    .venv/bin/python -m bench.tt_ratio [--commits 200] [--rows-per-commit 1000] [--buckets 1]
                                       [--runs 20] [--keep-stack]

A Duplicate Key table with time travel gets --commits `INSERT INTO t SELECT …` of --rows-per-commit
rows each (200k rows over 200 commits by default; the worker compacts on its own meanwhile). The
instant T is taken in the middle: after commit commits/2 has returned, 5 ms later, the client's UTC
now with microseconds (5 ms before the next commit). Then `ADMIN COMPACT TABLE t WHERE TYPE = 'BASE'`
and a wait until information_schema.rowsets shows at most --max-live visible rowsets.
Timed, alternating, p50 of --runs each after one warm-up:
- latest: `SELECT count(*), sum(v) FROM t`
- time travel: `SELECT count(*), sum(v) FROM t FOR TIME AS OF 'T'`
Both results are checked against the rows loaded. The snapshots' covers (rowset files read) are
recomputed on a read-only open of the SQL server's projection.
Goal: p50(time travel) / p50(latest) <= 1.2. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime

from bench.stack import (
    add_stack_args,
    bench_stack,
    create_table_sql,
    emit,
    find_table,
    fresh_database,
    log,
    machine,
    percentiles_ms,
    sql_connect,
    sql_projection_path,
)
from bench.tt_vs_delta import compact, timed

GOAL_RATIO = 1.2
SEED = 1000


def covers(s, db: str, ts_ms: int) -> dict:
    from projections.projection import Projection
    from projections.snapshot import resolve

    projection = Projection(sql_projection_path(s), read_only=True)
    try:
        table = find_table(projection, db, "t")
        out = {}
        for name, ts in (("latest", None), ("time_travel", ts_ms)):
            snap = resolve(projection, table, ts)
            out[name] = {"versions": [p.version for p in snap.partitions], "cover_rowsets": len(snap.rowsets),
                         "cover": [f"b{r.bucket}[{r.start_version}-{r.end_version}]" for r in snap.rowsets]}
        return out
    finally:
        projection.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--rows-per-commit", type=int, default=1000)
    ap.add_argument("--buckets", type=int, default=1)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--max-live", type=int, default=None,
                    help="wait until at most this many visible rowsets (default: 2 per bucket)")
    ap.add_argument("--compaction-timeout", type=float, default=300)
    add_stack_args(ap)
    args = ap.parse_args(argv)
    per = args.rows_per_commit
    if per > SEED * SEED:
        raise SystemExit(f"bench/tt_ratio: at most {SEED * SEED} rows per commit")
    half = args.commits // 2
    max_live = args.max_live if args.max_live is not None else 2 * args.buckets

    with bench_stack(args.keep_stack) as s:
        db = fresh_database(s, "bench_ttratio")
        conn = sql_connect(s, db)
        cur = conn.cursor()
        cur.execute(create_table_sql("seed", "DUPLICATE"))
        cur.execute("INSERT INTO seed VALUES " + ", ".join(f"({i}, 0)" for i in range(SEED)))
        cur.execute(create_table_sql("t", "DUPLICATE", args.buckets, properties={"enable_time_travel": "true"}))
        log(f"tt_ratio: {args.commits} INSERT … SELECTs of {per} rows …")
        t0 = time.perf_counter()
        instant = None
        for c in range(args.commits):
            # Row i of commit c: k = c·per + i, v = i % 1000.
            cur.execute(f"INSERT INTO t SELECT {c * per} + a.k * 1000 + b.k, (a.k * 1000 + b.k) % 1000 "
                        f"FROM seed a, seed b WHERE a.k * 1000 + b.k < {per}")
            if c + 1 == half:
                time.sleep(0.005)
                instant = datetime.now(tz=UTC)
                time.sleep(0.005)
        load_s = time.perf_counter() - t0
        assert instant is not None
        t_text = instant.strftime("%Y-%m-%d %H:%M:%S.%f")
        log(f"tt_ratio: loaded in {load_s:.1f} s; T = '{t_text}' (UTC)")
        compaction = compact(cur, db, max_live, args.compaction_timeout, "tt_ratio")
        log(f"tt_ratio: compacted: {compaction['rowsets_after']} (waited {compaction['wait_s']} s)")
        snapshots = covers(s, db, int(instant.timestamp() * 1000))

        latest_sql = "SELECT count(*), sum(v) FROM t"
        tt_sql = f"SELECT count(*), sum(v) FROM t FOR TIME AS OF '{t_text}'"
        _, latest_rows = timed(cur, latest_sql)
        _, tt_rows = timed(cur, tt_sql)
        total_rows, tt_rows_expected = args.commits * per, half * per
        per_commit_sum = sum(i % 1000 for i in range(per))  # v = (row index within its commit) % 1000
        expected = {"latest": [total_rows, args.commits * per_commit_sum],
                    "time_travel": [tt_rows_expected, half * per_commit_sum]}
        got = {"latest": [int(x) for x in latest_rows[0]], "time_travel": [int(x) for x in tt_rows[0]]}
        samples: dict[str, list[float]] = {"latest": [], "time_travel": []}
        log(f"tt_ratio: {args.runs} runs of each query, alternating …")
        for _ in range(args.runs):
            samples["time_travel"].append(timed(cur, tt_sql)[0])
            samples["latest"].append(timed(cur, latest_sql)[0])
        conn.close()

    latest, travel = percentiles_ms(samples["latest"]), percentiles_ms(samples["time_travel"])
    ratio = round(travel["p50_ms"] / latest["p50_ms"], 3)
    correct = got == expected
    emit({
        "bench": "tt_ratio",
        "goal": f"p50 of `SELECT count(*), sum(v) FROM t FOR TIME AS OF <mid>` / p50 of the same latest <= "
                f"{GOAL_RATIO} (compacted table)",
        "goal_met": bool(correct and ratio <= GOAL_RATIO),
        "ratio_p50_tt_over_latest": ratio,
        "ratio_mean_tt_over_latest": round(travel["mean_ms"] / latest["mean_ms"], 3),
        "latest": latest,
        "time_travel": travel,
        "correct": correct,
        "results": got,
        "expected": expected,
        "snapshots": snapshots,
        "compaction": compaction,
        "load_s": round(load_s, 2),
        "instant": t_text,
        "sizes": {"commits": args.commits, "rows_per_commit": per, "rows": args.commits * per,
                  "rows_at_instant": half * per, "buckets": args.buckets, "runs": args.runs,
                  "table": "DUPLICATE KEY(k) (k BIGINT, v BIGINT), enable_time_travel", "database": db},
        "machine": machine(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
