"""Single-row INSERT latency: Strata over the MySQL protocol vs delta-rs appends on local disk.

    .venv/bin/python -m bench.insert_latency [--rows 200] [--warmup 5] [--keep-stack]

Strata: N `INSERT INTO t VALUES (i, i)` through pymysql on a Duplicate Key table (each writes a
Parquet rowset, fsyncs it, proposes CommitRowsets and waits for its event on the replica).
delta-rs: N `write_deltalake(path, one_row_table, mode="append")` under var/bench/delta/.
By default the two alternate (one INSERT, one append, …) so both see the same background load on a
shared machine; --sequential runs all of one, then all of the other.
Goal: Strata p50 ≤ delta-rs p50. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
import uuid

from bench.stack import (
    BENCH_HOME,
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


class StrataSide:
    def __init__(self, s) -> None:
        self.db = fresh_database(s, "bench_insert")
        self.conn = sql_connect(s, self.db)
        self.cur = self.conn.cursor()
        self.cur.execute(create_table_sql("t", "DUPLICATE"))

    def insert(self, i: int) -> float:
        t0 = time.perf_counter()
        self.cur.execute(f"INSERT INTO t VALUES ({i}, {i * 7})")
        return time.perf_counter() - t0

    def close(self, expected: int) -> None:
        self.cur.execute("SELECT count(*) FROM t WHERE k >= 0")
        (count,) = self.cur.fetchone()
        self.conn.close()
        if count != expected:
            raise SystemExit(f"bench/insert_latency: expected {expected} rows in {self.db}.t, found {count}")


class DeltaSide:
    def __init__(self) -> None:
        import pyarrow as pa

        self.pa = pa
        self.path = BENCH_HOME / "delta" / f"insert_latency_{uuid.uuid4().hex[:8]}"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.schema = pa.schema([("k", pa.int64()), ("v", pa.int64())])

    def insert(self, i: int) -> float:
        from deltalake import write_deltalake

        one = self.pa.table({"k": [i], "v": [i * 7]}, schema=self.schema)
        t0 = time.perf_counter()
        write_deltalake(str(self.path), one, mode="append")
        return time.perf_counter() - t0

    def close(self) -> int:
        from deltalake import DeltaTable

        version = DeltaTable(str(self.path)).version()
        shutil.rmtree(self.path, ignore_errors=True)
        return version


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=200, help="timed single-row inserts per system")
    ap.add_argument("--warmup", type=int, default=5, help="untimed inserts first (connections, caches)")
    ap.add_argument("--skip-delta", action="store_true")
    ap.add_argument("--sequential", action="store_true",
                    help="all Strata inserts, then all delta-rs appends (default: alternate them)")
    add_stack_args(ap)
    args = ap.parse_args(argv)

    with bench_stack(args.keep_stack) as s:
        strata = StrataSide(s)
        delta = None if args.skip_delta else DeltaSide()
        sides = [("strata", strata)] + ([("delta", delta)] if delta else [])
        for i in range(args.warmup):
            for _, side in sides:
                side.insert(-1 - i)
        samples: dict[str, list[float]] = {name: [] for name, _ in sides}
        walls = dict.fromkeys(samples, 0.0)
        order = "interleaved" if not args.sequential else "sequential"
        log(f"insert_latency: {args.rows} single-row INSERTs (SQL port {s.sql_port}) and "
            f"{0 if delta is None else args.rows} delta-rs appends, {order} …")
        if args.sequential:
            for name, side in sides:
                t0 = time.perf_counter()
                samples[name] = [side.insert(i) for i in range(args.rows)]
                walls[name] = time.perf_counter() - t0
        else:  # alternate, so both see the same background load on a shared machine
            for i in range(args.rows):
                for name, side in sides:
                    samples[name].append(side.insert(i))
            walls = {name: sum(v) for name, v in samples.items()}
        strata.close(args.rows)
        version = delta.close() if delta else None
    ours_ms = percentiles_ms(samples["strata"])
    theirs_ms = None if delta is None else percentiles_ms(samples["delta"])
    theirs = None if theirs_ms is None else {**theirs_ms, "wall_s": round(walls["delta"], 2), "final_version": version}
    ours = {**ours_ms, "wall_s": round(walls["strata"], 2), "database": strata.db}
    met = None if theirs_ms is None else ours_ms["p50_ms"] <= theirs_ms["p50_ms"]
    emit({
        "bench": "insert_latency",
        "goal": "Strata single-row INSERT p50 <= delta-rs write_deltalake append p50",
        "goal_met": met,
        "strata": ours,
        "delta_rs": theirs,
        "ratio_p50_strata_over_delta": None if theirs_ms is None else round(ours_ms["p50_ms"] / theirs_ms["p50_ms"], 3),
        "sizes": {"rows": args.rows, "warmup": args.warmup, "order": order,
                  "table": "DUPLICATE KEY(k) (k BIGINT, v BIGINT), 1 bucket",
                  "delta_path": "var/bench/delta/<random> (removed after)"},
        "machine": machine(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
