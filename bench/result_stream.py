"""A big result to a client: 1M rows of a Duplicate table fetched through the SQL port, against
DuckDB → Arrow of the same rows, with the SQL server's memory and another client's latency meanwhile.

    .venv/bin/python -m bench.result_stream [--rows 1000000] [--label streamed] [--env-stack]
                                            [--database NAME] [--no-mariadb] [--keep-stack]

- `pymysql` / `mysqldb`: `SELECT * FROM t` fetched whole by pymysql (default cursor) and by
  mysqlclient (MySQLdb), wall time, each run once;
- `mariadb`: the peer, a stock MariaDB server (Debian's mariadb-server, bench.mariadb_peer) of its own
  holding the same rows, fetched by the same two clients; `goal_met` holds Strata's time over its;
- `duckdb_arrow`: DuckDB in this process reading the table's rowset files into an Arrow table (the floor);
- `server_encoding` (--server-encoding): the server's share alone, in this process over the same
  rows: fetched as tuples and encoded value by value (before) vs Arrow batches encoded (after);
- `sql_rss_mb`: the SQL server's VmRSS (/proc/<pid>/status, sampled every 20 ms) before and at its
  peak during each fetch;
- `point_query`: another connection's `SELECT v FROM small WHERE k = 7` run back to back (in a
  process of its own) for 5 s while idle and while a second pymysql fetch streams
  (`pymysql_with_point_queries`): p50 / max. The goal's pymysql time is the first fetch's, made with
  nothing else running, as MariaDB's is: on two cores the prober and its queries take a core from the
  fetch.

Compare the server's paths by running it twice: `STRATA_SQL_STREAM_RESULTS=false` for the
fetched-whole path (before streaming), the default for streaming; `--label` names the run.
`--env-stack` measures the stack the environment points at (a worktree's own, helper_env.sh) rather
than the bench stack. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from bench.stack import (
    add_stack_args,
    bench_stack,
    emit,
    fresh_database,
    log,
    machine,
    percentiles_ms,
    sql_connect,
    table_rowset_files,
)
from schemas.config import Settings, load_settings

SEED = 1000
COLUMNS = "k BIGINT, name VARCHAR(64), amount DECIMAL(12,2), at DATETIME(3), day DATE, ratio DOUBLE"
QUERY = "SELECT k, name, amount, at, day, ratio FROM t"


def load(cur: Any, rows: int) -> float:
    t0 = time.perf_counter()
    cur.execute("CREATE TABLE seed (k BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                "PROPERTIES ('replication_num' = '1')")
    cur.execute("INSERT INTO seed VALUES " + ", ".join(f"({i})" for i in range(SEED)))
    cur.execute(f"CREATE TABLE t ({COLUMNS}) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                "PROPERTIES ('replication_num' = '1')")
    cur.execute(f"INSERT INTO t SELECT a.k * {SEED} + b.k, concat('customer-', a.k * {SEED} + b.k), "
                f"(a.k * {SEED} + b.k) / 100.0, date_add('2026-01-01 00:00:00.123', INTERVAL b.k SECOND), "
                f"date_add('2026-01-01', INTERVAL a.k DAY), (a.k * {SEED} + b.k) * 1.25 "
                f"FROM seed a, seed b WHERE a.k * {SEED} + b.k < {rows}")
    cur.execute("CREATE TABLE small (k BIGINT, v BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                "PROPERTIES ('replication_num' = '1')")
    cur.execute("INSERT INTO small VALUES " + ", ".join(f"({i}, {i * 10})" for i in range(100)))
    return time.perf_counter() - t0


def sql_server_pid(s: Settings) -> int:
    """The process listening on the SQL port."""
    out = subprocess.run(["ss", "-ltnpH", f"sport = :{s.sql_port}"], capture_output=True, text=True).stdout
    marker = "pid="
    at = out.find(marker)
    if at < 0:
        raise SystemExit(f"bench: no process listens on {s.sql_port}")
    return int(out[at + len(marker):].split(",")[0])


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Sampler(threading.Thread):
    """Calls `probe` back to back (or every `every_s`) until stopped; keeps what it returns."""

    def __init__(self, probe: Callable[[], float], every_s: float = 0.0) -> None:
        super().__init__(daemon=True)
        self.probe, self.every_s = probe, every_s
        self.samples: list[float] = []
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            self.samples.append(self.probe())
            if self.every_s:
                self.halt.wait(self.every_s)

    def stop(self) -> list[float]:
        self.halt.set()
        self.join()
        return self.samples


def _probe_loop(s: Settings, db: str, warm: int, stop: Any, out: Any) -> None:
    """In its own process (no GIL shared with the client fetching the big result): point queries
    back to back until `stop` is set; their latencies go to `out`."""
    conn = sql_connect(s, db)
    cur = conn.cursor()
    samples: list[float] = []
    for n in itertools.count():
        if n >= warm and stop.is_set():
            break
        t0 = time.perf_counter()
        cur.execute("SELECT v FROM small WHERE k = 7")
        assert cur.fetchall() == ((70,),)
        if n >= warm:  # the first queries of a connection bind and cache
            samples.append(time.perf_counter() - t0)
    conn.close()
    out.put(samples)


class PointQueries:
    """Another client's point queries, in a process of their own, while a block runs."""

    def __init__(self, s: Settings, db: str) -> None:
        ctx = multiprocessing.get_context("fork")
        self.stop, self.out = ctx.Event(), ctx.Queue()
        self.process = ctx.Process(target=_probe_loop, args=(s, db, 20, self.stop, self.out), daemon=True)

    def __enter__(self) -> PointQueries:
        self.process.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        deadline = time.monotonic() + 600
        while True:
            try:
                self.samples: list[float] = self.out.get(timeout=1)
                break
            except queue.Empty:
                # A prober that failed (its traceback is above) sends nothing: say so now, not in ten minutes.
                if not self.process.is_alive() or time.monotonic() > deadline:
                    raise SystemExit(f"bench: the point-query client ended (exit code {self.process.exitcode}) "
                                     "without its latencies") from None
        self.process.join()


def fetch(connect: Callable[[], Any], pid: int, expected: int) -> dict[str, Any]:
    conn = connect()
    cur = conn.cursor()
    base = rss_mb(pid)
    memory = Sampler(lambda: rss_mb(pid), every_s=0.02)
    memory.start()
    t0 = time.perf_counter()
    cur.execute(QUERY)
    rows = cur.fetchall()
    elapsed = time.perf_counter() - t0
    peak = max(memory.stop(), default=base)
    assert len(rows) == expected, (len(rows), expected)
    conn.close()
    return {"seconds": round(elapsed, 3), "rows": len(rows), "sql_rss_mb": {"before": round(base, 1),
            "peak": round(peak, 1), "growth": round(peak - base, 1)}}


# The same rows as `load` makes, in MariaDB: k = a.k * SEED + b.k, so b.k = k % SEED and a.k = k DIV SEED.
MARIADB_COLUMNS = "k BIGINT, name VARCHAR(64), amount DECIMAL(12,2), at DATETIME(3), day DATE, ratio DOUBLE"


def mariadb_peer(rows: int) -> dict[str, Any]:
    """The same rows served by a stock MariaDB server (bench.mariadb_peer) to pymysql and mysqlclient."""
    from bench.mariadb_peer import MariadbMissing, mariadb_server

    try:
        with mariadb_server() as peer:
            conn = peer.connect()
            with conn.cursor() as cur:
                cur.execute("CREATE DATABASE b")
                cur.execute("USE b")  # the SEQUENCE engine's seq_0_to_n tables live in the current database
                cur.execute(f"CREATE TABLE b.t ({MARIADB_COLUMNS}, KEY (k))")
                cur.execute(f"INSERT INTO b.t SELECT seq, concat('customer-', seq), seq / 100.0, "
                            f"TIMESTAMP'2026-01-01 00:00:00.123' + INTERVAL (seq % {SEED}) SECOND, "
                            f"DATE'2026-01-01' + INTERVAL (seq DIV {SEED}) DAY, seq * 1.25 FROM seq_0_to_{rows - 1}")
            conn.close()
            pid = int(subprocess.run(["ss", "-ltnpH", f"sport = :{peer.port}"], capture_output=True,
                                     text=True).stdout.split("pid=")[1].split(",")[0])

            def mysqldb_connect() -> Any:
                import MySQLdb

                return MySQLdb.connect(host=peer.host, port=peer.port, user="root", passwd="", database="b")
            log("result_stream: the same rows from MariaDB …")
            return {"version": peer.version, "pymysql": fetch(lambda: peer.connect("b"), pid, rows),
                    "mysqldb": fetch(mysqldb_connect, pid, rows)}
    except MariadbMissing as exc:
        return {"error": str(exc)}


def duckdb_arrow(files: list[str]) -> dict[str, Any]:
    import duckdb

    con = duckdb.connect()
    listing = ", ".join(f"'{f}'" for f in files)
    t0 = time.perf_counter()
    table = con.sql(f"SELECT * FROM read_parquet([{listing}])").to_arrow_table()
    return {"seconds": round(time.perf_counter() - t0, 3), "rows": table.num_rows}


def server_encoding(files: list[str]) -> dict[str, Any]:
    """The server's share alone, in this process over the same rows (no socket, no client): the rows
    fetched as tuples and encoded one value at a time, against Arrow batches encoded a batch at a time."""
    import datetime as dt

    import duckdb

    from query.wire.columns import describe
    from query.wire.stream import WireStream
    from query.wire.text_batches import encode_text_rows

    con = duckdb.connect()
    sql = f"SELECT * FROM read_parquet([{', '.join(repr(f) for f in files)}])"
    t0 = time.perf_counter()
    result = con.execute(sql)
    names, types = [d[0] for d in result.description], [str(d[1]) for d in result.description]
    rows = result.fetchall()
    fetched = time.perf_counter() - t0
    columns = describe(names, types, rows, dt.UTC)
    stream = WireStream(None, None, 1 << 30)  # type: ignore[arg-type]  # only its buffer is written
    for start in range(0, len(rows), 10_000):
        stream.write_text_rows(rows[start:start + 10_000], columns)
        stream._buffer = bytearray()
    row_at_a_time = time.perf_counter() - t0
    del rows
    t0 = time.perf_counter()
    seq, count = 0, 0
    for batch in con.sql(sql).to_arrow_reader(16_384):
        encoded = encode_text_rows(batch, columns, seq)
        seq, count = encoded.next_seq, count + encoded.rows
    return {"tuples_fetch_s": round(fetched, 3), "tuples_fetch_and_encode_s": round(row_at_a_time, 3),
            "batches_read_and_encode_s": round(time.perf_counter() - t0, 3), "rows": count}


def loaded_database(s: Settings, bench: str, rows: int, database: str | None) -> tuple[str, float | None]:
    """(the database holding the table `t` of `rows` rows, seconds its load took): a fresh one loaded
    now, or `database` as an earlier run left it (no load)."""
    if database is not None:
        conn = sql_connect(s)
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT COUNT(*) FROM information_schema.tables "
                            "WHERE table_schema = %s AND table_name = 't'", (database,))
                if cur.fetchall()[0][0] != 1:
                    raise SystemExit(f"bench/{bench}: --database {database}: no table t there on this stack")
                cur.execute(f"SELECT COUNT(*) FROM `{database}`.t")
                if (found := cur.fetchall()[0][0]) != rows:
                    raise SystemExit(f"bench/{bench}: --database {database}: t holds {found:,} rows, "
                                     f"not --rows {rows:,}")
        finally:
            conn.close()
        return database, None
    db = fresh_database(s, f"bench_{bench}")
    conn = sql_connect(s, db)
    with conn.cursor() as cur:
        log(f"{bench}: loading {rows:,} rows …")
        load_s = round(load(cur, rows), 2)
    conn.close()
    return db, load_s


def run(s: Settings, rows: int, database: str | None, encode: bool, mariadb: bool) -> dict[str, Any]:
    db, load_s = loaded_database(s, "result_stream", rows, database)
    pid = sql_server_pid(s)

    def pymysql_connect() -> Any:
        return sql_connect(s, db)

    def mysqldb_connect() -> Any:
        import MySQLdb

        return MySQLdb.connect(host=s.sql_host, port=s.sql_port, user="root", passwd="", database=db)

    by_pymysql = fetch(pymysql_connect, pid, rows)
    log(f"result_stream: pymysql {by_pymysql}")
    with PointQueries(s, db) as idle:
        time.sleep(5)
    log("result_stream: pymysql fetch again, point queries alongside …")
    with PointQueries(s, db) as busy:
        time.sleep(1)  # past the prober's warm-up
        alongside = fetch(pymysql_connect, pid, rows)
    log(f"result_stream: pymysql with point queries alongside {alongside}")
    by_mysqldb = fetch(mysqldb_connect, pid, rows)
    log(f"result_stream: mysqldb {by_mysqldb}")
    files = table_rowset_files(s, db, "t")
    direct = duckdb_arrow(files)
    encoding = server_encoding(files) if encode else None
    peer = mariadb_peer(rows) if mariadb else None
    return {"load_s": load_s, "pymysql": by_pymysql, "pymysql_with_point_queries": alongside, "mysqldb": by_mysqldb,
            "duckdb_arrow": direct, "server_encoding": encoding, "mariadb": peer,
            "goal_met": _goal_met(by_pymysql, by_mysqldb, peer, alongside),
            "point_query": {"idle": percentiles_ms(idle.samples), "while_streaming": percentiles_ms(busy.samples)},
            "database": db}


GOAL_SHARE_OF_MARIADB = 1.5
GOAL_GROWTH_MB = 200


def _goal_met(by_pymysql: dict[str, Any], by_mysqldb: dict[str, Any], peer: dict[str, Any] | None,
              alongside: dict[str, Any]) -> Any:
    """Issue 20: each client within 1.5× of MariaDB's time, SQL-server memory growth under 200 MB (in
    every fetch, the one with point queries alongside too)."""
    if peer is None or "error" in peer:
        return None
    ratios = {client: round(ours["seconds"] / peer[client]["seconds"], 2)
              for client, ours in (("pymysql", by_pymysql), ("mysqldb", by_mysqldb))}
    growth = max(fetched["sql_rss_mb"]["growth"] for fetched in (by_pymysql, by_mysqldb, alongside))
    return {"strata_over_mariadb": ratios, "met": all(r <= GOAL_SHARE_OF_MARIADB for r in ratios.values())
            and growth < GOAL_GROWTH_MB}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--label", default="", help="names the run (e.g. the server's sql_stream_results)")
    ap.add_argument("--server-encoding", action="store_true",
                    help="also time the server's fetch + encoding alone, in this process (both paths)")
    ap.add_argument("--database", help="a database an earlier run loaded (--rows of them): no load")
    ap.add_argument("--no-mariadb", action="store_true",
                    help="skip the peer: a stock MariaDB server (Debian's mariadb-server) serving the same rows")
    add_stack_args(ap, env_stack=True)
    args = ap.parse_args(argv)
    if args.env_stack:
        result = run(load_settings(), args.rows, args.database, args.server_encoding, not args.no_mariadb)
    else:
        with bench_stack(args.keep_stack) as s:
            result = run(s, args.rows, args.database, args.server_encoding, not args.no_mariadb)
    emit({"bench": "result_stream", "label": args.label,
          "goal": f"each client within {GOAL_SHARE_OF_MARIADB}x of a stock MariaDB serving the same rows, SQL-server "
                  f"memory growth under {GOAL_GROWTH_MB} MB; other clients' point queries within a few ms of idle",
          **result, "sizes": {"rows": args.rows},
          "env_sql_stream_results": os.environ.get("STRATA_SQL_STREAM_RESULTS", "default (true)"),
          "machine": machine()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
