"""Time travel to the middle of a 2,000-commit history, after compaction: Strata over the SQL port
vs delta-rs on local disk, same rows, same commits, same run.

    .venv/bin/python -m bench.tt_vs_delta [--commits 2000] [--rows-per-commit 1] [--runs 20]
                                          [--loader-threads 4] [--storage-wait 180] [--skip-delta]
                                          [--keep-stack]

Strata: a Duplicate Key table with time travel, `--commits` single-row `INSERT INTO t VALUES (i, 7i)`
(keys 0 … commits−1) by `--loader-threads` connections in two phases: the first half, then — once
every INSERT of it has returned (each returns after its commit is on the replica) and 5 ms more —
the client's UTC now with microseconds is the instant T, 5 ms later the second half. Then
`ADMIN COMPACT TABLE t WHERE TYPE = 'BASE'` (the worker also compacts on its own while loading),
and a wait until information_schema.rowsets shows at most `--max-live` visible rowsets. Timed
(p50 of --runs, after one warm-up): `SELECT * FROM t FOR TIME AS OF 'T'` fetched to the client
(must be exactly commits/2 rows: keys 0 … commits/2−1) and
`SELECT count(*) FROM t FOR TIME AS OF 'T' WHERE v % 2 = 0`.

delta-rs: `--commits` one-row `write_deltalake(path, …, mode="append")` under var/bench/delta/, then
`DeltaTable(path).optimize.compact()`. Timed: `DeltaTable(path, version=commits/2 − 1)
.to_pyarrow_table()` (delta versions start at 0, the first append being version 0, so version
999 is the state after the 1000th append — the same 1000 rows as Strata's T), and the same plus a
pyarrow filter/count of `v % 2 == 0`. The two sides' timed queries alternate run by run, so both
see the same background load on a shared machine.
With --rows-per-commit N > 1 each commit is one `INSERT … SELECT` of N rows (keys c·N … (c+1)·N − 1) on
one connection and one delta-rs append of the same rows; above 100k rows at T, `SELECT *` is replaced by
`SELECT count(*), sum(k), sum(v)` (checked against the first half's rows) and the speed goal compares
delta-rs' read with Strata's filtered count (pymysql would be what `SELECT *` measured).
Goal: Strata p50 (SELECT *) at least 5× faster than delta-rs p50 (open + to_pyarrow_table).
History storage, side by side: Strata's rowset files of the table (information_schema.rowsets, every
state) right after compaction and once the recycler has run (waiting up to --storage-wait s: the inputs
of a version-keeping compaction go after the recycler's grace), the instant read again then; delta-rs'
directory after optimize (every data file and the log: the history a time travel reads, until a VACUUM
past the retention). Goal: Strata after the recycler ≤ 1.5× delta-rs.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
import uuid
from datetime import UTC, datetime

from bench.stack import (
    BENCH_HOME,
    add_stack_args,
    bench_stack,
    emit,
    find_table,
    fresh_database,
    log,
    machine,
    on_connections,
    percentiles_ms,
    sql_connect,
    sql_projection_path,
)

GOAL_FACTOR = 5.0
STORAGE_GOAL = 1.5
TABLE_SQL = ("CREATE TABLE t (k BIGINT, v BIGINT) ENGINE=OLAP DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
             "PROPERTIES (\"replication_num\" = \"1\", \"enable_time_travel\" = \"true\")")


# ------------------------------------------------------------------ Strata


SEED = 1000
# Above this many rows at the instant, `SELECT *` is not fetched through pymysql (its cost would be the
# client's): the instant's rows are checked by count and sums, and the speed compared by the filtered count.
FETCH_ROWS = 100_000


def batch_inserts(cur, commits: range, per: int) -> float:
    """One `INSERT … SELECT` of `per` rows per commit: keys c·per … (c+1)·per − 1, v = 7k."""
    t0 = time.perf_counter()
    for c in commits:
        cur.execute(f"INSERT INTO t SELECT {c * per} + a.k * {SEED} + b.k, ({c * per} + a.k * {SEED} + b.k) * 7 "
                    f"FROM seed a, seed b WHERE a.k * {SEED} + b.k < {per}")
    return time.perf_counter() - t0


def parallel_inserts(s, db: str, keys: range, threads: int) -> float:
    """INSERTs of `keys`, one row each, over `threads` connections; returns the wall time."""
    def run(conn, t: int) -> None:
        with conn.cursor() as cur:
            for k in keys[t::threads]:
                cur.execute(f"INSERT INTO t VALUES ({k}, {k * 7})")
    return on_connections([sql_connect(s, db) for _ in range(threads)], run, "an INSERT")


def rowset_states(cur, db: str) -> dict[str, int]:
    cur.execute("SELECT STATE, count(*) FROM information_schema.rowsets "
                f"WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 't' GROUP BY STATE")
    return {state: int(n) for state, n in cur.fetchall()}


def strata_storage(cur, db: str) -> dict[str, int]:
    """Bytes of the table's rowset files by state (visible: the latest cover; stale: kept for history)."""
    cur.execute("SELECT STATE, count(*), sum(DATA_DISK_SIZE) FROM information_schema.rowsets "
                f"WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 't' GROUP BY STATE")
    found = {state: (int(n), int(size or 0)) for state, n, size in cur.fetchall()}
    return {"bytes": sum(size for _, size in found.values()), "files": sum(n for n, _ in found.values()),
            **{f"{state}_bytes": size for state, (_, size) in found.items()}}


def settled_storage(cur, db: str, wait_s: float) -> dict:
    """The table's storage once the recycler has removed what no read inside retention needs (stale
    rowsets replaced by a version-keeping compaction go after the recycler's grace), waiting up to `wait_s`."""
    t0 = time.perf_counter()
    while True:
        storage = strata_storage(cur, db)
        if not storage.get("stale_bytes") or time.perf_counter() - t0 > wait_s:
            return {**storage, "waited_s": round(time.perf_counter() - t0, 1)}
        time.sleep(2)


def directory_bytes(path) -> dict[str, int]:
    files = [f for f in path.rglob("*") if f.is_file()]
    return {"bytes": sum(f.stat().st_size for f in files), "files": len(files)}


def compact(cur, db: str, max_live: int, timeout: float, bench: str = "tt_vs_delta") -> dict:
    before = rowset_states(cur, db)
    log(f"{bench}: rowsets after the load: {before}")
    t0 = time.perf_counter()
    admin: dict = {}
    try:
        cur.execute("ADMIN COMPACT TABLE t WHERE TYPE = 'BASE'")
        admin = {"ok": True, "affected": cur.rowcount, "s": round(time.perf_counter() - t0, 2)}
    except Exception as exc:  # noqa: BLE001 — fall back to waiting for the worker
        admin = {"ok": False, "error": str(exc)}
        log(f"{bench}: ADMIN COMPACT failed ({exc}); waiting for the worker's compaction")
    while True:
        states = rowset_states(cur, db)
        if states.get("visible", 0) <= max_live:
            break
        if time.perf_counter() - t0 > timeout:
            raise SystemExit(f"bench/{bench}: still {states} rowsets after {timeout:.0f} s")
        time.sleep(0.5)
    return {"rowsets_before": before, "rowsets_after": states, "admin_compact": admin,
            "wait_s": round(time.perf_counter() - t0, 2)}


def tt_cover(s, db: str, ts_ms: int) -> dict:
    """The snapshot the server resolves at T, recomputed on a read-only open of its projection."""
    from projections.projection import Projection
    from projections.snapshot import resolve

    projection = Projection(sql_projection_path(s), read_only=True)
    try:
        snap = resolve(projection, find_table(projection, db, "t"), ts_ms)
        return {"versions": [p.version for p in snap.partitions], "cover_rowsets": len(snap.rowsets),
                "cover": [f"[{r.start_version}-{r.end_version}]" for r in snap.rowsets]}
    finally:
        projection.close()


# ------------------------------------------------------------------ delta-rs


class DeltaSide:
    def __init__(self) -> None:
        import pyarrow as pa

        self.pa = pa
        self.path = BENCH_HOME / "delta" / f"tt_vs_delta_{uuid.uuid4().hex[:8]}"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.schema = pa.schema([("k", pa.int64()), ("v", pa.int64())])

    def load(self, commits: int, per: int = 1) -> float:
        from deltalake import write_deltalake

        t0 = time.perf_counter()
        for k in range(commits):
            keys = list(range(k * per, (k + 1) * per))
            write_deltalake(str(self.path), self.pa.table({"k": keys, "v": [key * 7 for key in keys]},
                                                          schema=self.schema), mode="append")
            if k % 500 == 499:
                log(f"tt_vs_delta: delta-rs: {k + 1} appends ({time.perf_counter() - t0:.1f} s)")
        return time.perf_counter() - t0

    def compact(self) -> dict:
        from deltalake import DeltaTable

        t0 = time.perf_counter()
        metrics = DeltaTable(str(self.path)).optimize.compact()
        return {"s": round(time.perf_counter() - t0, 2), "version_after": DeltaTable(str(self.path)).version(),
                "metrics": {k: metrics.get(k) for k in ("numFilesAdded", "numFilesRemoved")}}

    def read(self, version: int) -> tuple[float, int]:
        from deltalake import DeltaTable

        t0 = time.perf_counter()
        table = DeltaTable(str(self.path), version=version).to_pyarrow_table()
        return time.perf_counter() - t0, table.num_rows

    def filter_count(self, version: int) -> tuple[float, int]:
        import pyarrow.compute as pc
        from deltalake import DeltaTable

        t0 = time.perf_counter()
        table = DeltaTable(str(self.path), version=version).to_pyarrow_table()
        n = pc.sum(pc.equal(pc.bit_wise_and(table["v"], 1), 0)).as_py()
        return time.perf_counter() - t0, n

    def storage(self) -> dict[str, int]:
        """Every file of the table: data files (the appends' and the compacted one, which keep the
        history until a VACUUM past the retention) and the log."""
        return directory_bytes(self.path)

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


# ------------------------------------------------------------------ main


def timed(cur, sql: str) -> tuple[float, list]:
    t0 = time.perf_counter()
    cur.execute(sql)
    rows = cur.fetchall()
    return time.perf_counter() - t0, rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commits", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--loader-threads", type=int, default=4)
    ap.add_argument("--max-live", type=int, default=5, help="wait until at most this many visible rowsets")
    ap.add_argument("--compaction-timeout", type=float, default=300)
    ap.add_argument("--rows-per-commit", type=int, default=1,
                    help="rows per commit; above 1, each commit is one INSERT … SELECT (one connection) and one "
                         "delta-rs append of that many rows")
    ap.add_argument("--skip-delta", action="store_true")
    ap.add_argument("--storage-wait", type=float, default=180.0,
                    help="wait up to this long for the recycler (grace 120 s by default) before measuring history "
                         "storage")
    add_stack_args(ap)
    args = ap.parse_args(argv)
    half = args.commits // 2
    per = args.rows_per_commit
    if half < 1 or not 1 <= per <= SEED * SEED:
        raise SystemExit(f"bench/tt_vs_delta: --commits must be >= 2, --rows-per-commit in 1 … {SEED * SEED}")
    at_instant = half * per  # keys 0 … at_instant − 1
    fetch = at_instant <= FETCH_ROWS

    with bench_stack(args.keep_stack) as s:
        db = fresh_database(s, "bench_ttdelta")
        conn = sql_connect(s, db)
        cur = conn.cursor()
        cur.execute(TABLE_SQL)
        if per == 1:
            log(f"tt_vs_delta: Strata: {args.commits} single-row INSERTs over {args.loader_threads} connections …")
        else:
            cur.execute("CREATE TABLE seed (k BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                        "PROPERTIES (\"replication_num\" = \"1\")")
            cur.execute("INSERT INTO seed VALUES " + ", ".join(f"({i})" for i in range(SEED)))
            log(f"tt_vs_delta: Strata: {args.commits} INSERT … SELECTs of {per} rows …")
        load1 = parallel_inserts(s, db, range(half), args.loader_threads) if per == 1 else \
            batch_inserts(cur, range(half), per)
        time.sleep(0.005)
        instant = datetime.now(tz=UTC)
        time.sleep(0.005)
        load2 = parallel_inserts(s, db, range(half, args.commits), args.loader_threads) if per == 1 else \
            batch_inserts(cur, range(half, args.commits), per)
        t_text = instant.strftime("%Y-%m-%d %H:%M:%S.%f")
        t_ms = int(instant.timestamp() * 1000)
        log(f"tt_vs_delta: Strata loaded in {load1 + load2:.1f} s; T = '{t_text}' (UTC)")
        compaction = compact(cur, db, args.max_live, args.compaction_timeout)
        log(f"tt_vs_delta: compacted: {compaction['rowsets_after']} (waited {compaction['wait_s']} s)")
        cover = tt_cover(s, db, t_ms)
        storage_compacted = strata_storage(cur, db)

        delta = None if args.skip_delta else DeltaSide()
        delta_info: dict = {}
        try:
            if delta is not None:
                log(f"tt_vs_delta: delta-rs: {args.commits} appends of {per} row(s) …")
                delta_info["load_s"] = round(delta.load(args.commits, per), 2)
                delta_info["compact"] = delta.compact()
                delta_info["storage"] = delta.storage()
                log(f"tt_vs_delta: delta-rs compacted: {delta_info['compact']}")

            select_all = f"SELECT * FROM t FOR TIME AS OF '{t_text}'" if fetch else \
                f"SELECT count(*), sum(k), sum(v) FROM t FOR TIME AS OF '{t_text}'"
            count_sql = f"SELECT count(*) FROM t FOR TIME AS OF '{t_text}' WHERE v % 2 = 0"
            _, rows = timed(cur, select_all)  # warm-up, and the correctness check
            if fetch:
                keys = sorted(r[0] for r in rows)
                correct = keys == list(range(at_instant)) and all(v == k * 7 for k, v in rows)
            else:
                total = at_instant * (at_instant - 1) // 2
                correct = [tuple(int(x) for x in rows[0])] == [(at_instant, total, 7 * total)]
            _, (count_row,) = timed(cur, count_sql)
            want_even = (at_instant + 1) // 2  # v = 7k is even exactly when k is
            if delta is not None:
                _, delta_rows = delta.read(half - 1)
                _, delta_even = delta.filter_count(half - 1)
                correct = correct and delta_rows == at_instant and delta_even == want_even
            samples: dict[str, list[float]] = {"strata_select_all": [], "strata_filter_count": [],
                                               "delta_read": [], "delta_filter_count": []}
            log(f"tt_vs_delta: timing {args.runs} runs of each query, alternating …")
            for _ in range(args.runs):
                samples["strata_select_all"].append(timed(cur, select_all)[0])
                if delta is not None:
                    samples["delta_read"].append(delta.read(half - 1)[0])
                samples["strata_filter_count"].append(timed(cur, count_sql)[0])
                if delta is not None:
                    samples["delta_filter_count"].append(delta.filter_count(half - 1)[0])
            # Latest state, for scale.
            latest_samples = [timed(cur, "SELECT * FROM t" if fetch else "SELECT count(*), sum(k), sum(v) FROM t")[0]
                              for _ in range(5)]
            log(f"tt_vs_delta: history storage, waiting up to {args.storage_wait:.0f} s for the recycler …")
            storage_settled = settled_storage(cur, db, args.storage_wait)
            # The instant still reads the same rows once the recycler has run.
            _, rows_settled = timed(cur, select_all)
            correct = correct and sorted(rows_settled) == sorted(rows)
        finally:
            conn.close()
            if delta is not None:
                delta.close()

    strata_read = percentiles_ms(samples["strata_select_all"])
    strata_count = percentiles_ms(samples["strata_filter_count"])
    strata = {"select_all": {**strata_read, "sql": "SELECT *" if fetch else "SELECT count(*), sum(k), sum(v)",
                             "rows": len(rows) if fetch else at_instant, "exactly_the_first_half": correct},
              "filter_count": {**strata_count, "result": count_row[0], "expected": want_even},
              "latest_select_all": percentiles_ms(latest_samples),
              "load": {"phase1_s": round(load1, 2), "phase2_s": round(load2, 2),
                       "ms_per_commit": round((load1 + load2) * 1000 / args.commits, 2),
                       "threads": args.loader_threads},
              "instant": t_text, "compaction": compaction, "snapshot_at_instant": cover, "database": db,
              "storage": {"after_compaction": storage_compacted, "after_recycler": storage_settled}}
    ratio = ratio_count = storage_ratio = None
    if delta is not None:
        delta_read = percentiles_ms(samples["delta_read"])
        delta_count = percentiles_ms(samples["delta_filter_count"])
        delta_info["read"] = {**delta_read, "rows": delta_rows, "version": half - 1}
        delta_info["filter_count"] = {**delta_count, "result": delta_even}
        # Above FETCH_ROWS, delta-rs' read (open + to_pyarrow_table) is compared with the filtered count.
        ratio = round(delta_read["p50_ms"] / (strata_read if fetch else strata_count)["p50_ms"], 2)
        ratio_count = round(delta_count["p50_ms"] / strata_count["p50_ms"], 2)
        storage_ratio = round(storage_settled["bytes"] / delta_info["storage"]["bytes"], 3)
    ok = correct and count_row[0] == want_even
    emit({
        "bench": "tt_vs_delta",
        "goal": f"Strata `SELECT * … FOR TIME AS OF` mid-history (after compaction) p50 at least {GOAL_FACTOR}x "
                "faster than delta-rs DeltaTable(path, version=mid).to_pyarrow_table() p50, exactly the "
                "mid-history rows",
        "storage_goal": f"Strata's history storage (after the recycler) at most {STORAGE_GOAL}x delta-rs' (every "
                        "file, compacted, not vacuumed)",
        "goal_met": None if ratio is None or storage_ratio is None else bool(
            ok and ratio >= GOAL_FACTOR and storage_ratio <= STORAGE_GOAL),
        "speedup_delta_over_strata_p50": ratio,
        "storage_strata_over_delta": storage_ratio,
        "speedup_filter_count_p50": ratio_count,
        "correct": ok,
        "strata": strata,
        "delta_rs": delta_info or None,
        "sizes": {"commits": args.commits, "rows_per_commit": per, "rows_at_instant": at_instant, "runs": args.runs,
                  "table": "DUPLICATE KEY(k) (k BIGINT, v BIGINT), 1 bucket, enable_time_travel",
                  "delta_version_read": half - 1, "delta_path": "var/bench/delta/<random> (removed after)"},
        "machine": machine(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
