"""1M rows through Arrow Flight SQL against DuckDB → Arrow of the same rows, in one run.

    .venv/bin/python -m bench.flight_sql [--rows 1000000] [--runs 2] [--env-stack] [--database NAME]
                                         [--keep-stack]

- `adbc_flightsql`: `SELECT * FROM t` through ADBC's flightsql driver (`fetch_arrow_table`), as a
  client sees it: login, GetFlightInfo (the statement runs), DoGet (the batches stream);
- `pyarrow_flight`: the same statement through pyarrow.flight (GetFlightInfo + DoGet `read_all`);
- `duckdb_arrow`: DuckDB in this process reading the table's rowset files into an Arrow table (the peer);
- `ratio`: adbc_flightsql / duckdb_arrow (best of `--runs` each); the goal is ≤ 2×;
- `sql_rss_mb`: the SQL server's VmRSS before and at its peak (sampled every 20 ms) during each
  Flight fetch: the rows are streamed a batch at a time, so it should grow by a few batches only.

The table is bench.result_stream's (six columns: BIGINT, VARCHAR, DECIMAL, DATETIME(3), DATE, DOUBLE).
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from bench.result_stream import QUERY, Sampler, duckdb_arrow, loaded_database, rss_mb, sql_server_pid
from bench.stack import add_stack_args, bench_stack, emit, log, machine, table_rowset_files
from schemas.config import Settings

GOAL_RATIO = 2.0


def _uri(s: Settings) -> str:
    return f"grpc://{s.sql_host}:{s.arrow_flight_sql_port}"


def adbc_fetch(s: Settings, db: str) -> int:
    import adbc_driver_flightsql.dbapi as flightsql

    with flightsql.connect(_uri(s), db_kwargs={"username": "root", "password": s.root_password.get_secret_value()},
                           autocommit=True) as conn, conn.cursor() as cur:
        cur.execute(f"{QUERY.replace(' FROM t', f' FROM {db}.t')}")
        return int(cur.fetch_arrow_table().num_rows)


def pyarrow_fetch(s: Settings, db: str) -> int:
    import pyarrow.flight as flight

    from query.flight import messages as m

    client = flight.FlightClient(_uri(s))
    try:
        options = flight.FlightCallOptions(headers=[client.authenticate_basic_token(
            "root", s.root_password.get_secret_value())])
        sql = QUERY.replace(" FROM t", f" FROM {db}.t")
        info = client.get_flight_info(flight.FlightDescriptor.for_command(
            m.pack(m.STATEMENT_QUERY, m.message((1, sql)))), options)
        return sum(client.do_get(e.ticket, options).read_all().num_rows for e in info.endpoints)
    finally:
        client.close()


def measured(fetch: Any, s: Settings, db: str, pid: int, expected: int, runs: int) -> dict[str, Any]:
    seconds, growth = [], []
    for _ in range(runs):
        base = rss_mb(pid)
        memory = Sampler(lambda: rss_mb(pid), every_s=0.02)
        memory.start()
        t0 = time.perf_counter()
        got = fetch(s, db)
        seconds.append(time.perf_counter() - t0)
        growth.append(max(memory.stop(), default=base) - base)
        assert got == expected, (got, expected)
    return {"best_s": round(min(seconds), 3), "seconds": [round(x, 3) for x in seconds], "rows": expected,
            "sql_rss_growth_mb": [round(g, 1) for g in growth]}


def run(s: Settings, rows: int, runs: int, database: str | None) -> dict[str, Any]:
    db, load_s = loaded_database(s, "flight_sql", rows, database)
    pid = sql_server_pid(s)
    log("flight_sql: ADBC …")
    by_adbc = measured(adbc_fetch, s, db, pid, rows, runs)
    log(f"flight_sql: ADBC {by_adbc}")
    by_pyarrow = measured(pyarrow_fetch, s, db, pid, rows, runs)
    log(f"flight_sql: pyarrow.flight {by_pyarrow}")
    files = table_rowset_files(s, db, "t")
    direct = [duckdb_arrow(files) for _ in range(runs)]
    best_direct = min(d["seconds"] for d in direct)
    assert all(d["rows"] == rows for d in direct)
    ratio = round(by_adbc["best_s"] / best_direct, 2) if best_direct else None
    return {"load_s": load_s, "adbc_flightsql": by_adbc, "pyarrow_flight": by_pyarrow,
            "duckdb_arrow": {"best_s": best_direct, "seconds": [d["seconds"] for d in direct], "rows": rows},
            "ratio": ratio, "goal_met": ratio is not None and ratio <= GOAL_RATIO, "database": db}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=2, help="fetches per client (the best counts)")
    ap.add_argument("--database", help="a database an earlier run loaded (--rows of them): no load")
    add_stack_args(ap, env_stack=True)
    args = ap.parse_args(argv)
    with bench_stack(args.keep_stack, env_stack=args.env_stack) as s:
        result = run(s, args.rows, args.runs, args.database)
    emit({"bench": "flight_sql", "goal": f"Arrow Flight SQL (ADBC) within {GOAL_RATIO:g}x of DuckDB -> Arrow",
          **result, "sizes": {"rows": args.rows, "runs": args.runs}, "machine": machine()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
