"""Fast start: how long a new SQL server with an empty state directory takes to answer its first
query, restoring the worker's newest projection checkpoint (projections.checkpoints) versus folding
the whole log from offset 0 — side by side in one run, on one log.

    .venv/bin/python -m bench.fast_start [--commands 2000] [--million] [--keep-stack]

1. A log of --commands CommitRowsets (bench.replay's way: one real rowset as the template, the
   commands straight onto strata.commands), sequenced and followed by the live SQL server.
   --million makes it 1,000,000 (the goal's log).
2. The worker's leader uploads checkpoints every STRATA_PROJECTION_SNAPSHOT_INTERVAL_S (the bench
   restarts the worker with 10 s for its run, `bench.stack.worker_with`); the bench waits for one
   holding the whole log.
3. Two new SQL servers (own ports, so own empty `state/sql-<port>`) are started one after the other:
   with restore (the default) and with STRATA_PROJECTION_SNAPSHOT_RESTORE=false. Each is timed from
   its process start to its first `SELECT count(*) FROM probe` answered.
4. Both are stopped and their projections' checksums compared with the live server's.
Goal: on a log of ≥ 1,000,000 events, first query answered in < 15 s with a checkpoint. One JSON object.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import uuid

from bench import stack
from bench.replay import (
    events_end_offset,
    produce_commands,
    sql_catch_up,
    template_rowset,
    wait_sequenced,
)
from projections.checkpoints import MANIFEST, Manifest, checkpoint_store
from projections.replay import checksum as projection_checksum
from schemas.config import REPO_ROOT, Settings

GOAL_FIRST_QUERY_S = 15.0
GOAL_LOG_EVENTS = 1_000_000
# The worker setting the bench shortens for its run: it waits for a checkpoint holding its whole log.
CHECKPOINT_INTERVAL = "STRATA_PROJECTION_SNAPSHOT_INTERVAL_S"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_checkpoint(s: Settings, timeout: float) -> Manifest:
    """The manifest once it names a checkpoint at the live SQL server's position (caught up with the
    whole log: nothing else writes to the bench stack meanwhile)."""
    store = checkpoint_store(s)
    _, live = projection_checksum(stack.sql_projection_path(s))
    deadline = time.monotonic() + timeout
    while True:
        try:
            manifest = Manifest.from_json(store.read_bytes(MANIFEST, 1 << 20))
            if manifest.offsets == live:
                return manifest
        except Exception:  # noqa: BLE001 - none yet (no bucket, no manifest): keep waiting
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"bench/fast_start: no checkpoint at the log's end after {timeout:.0f}s; "
                             "is the worker's STRATA_PROJECTION_SNAPSHOT_INTERVAL_S > 0?")
        time.sleep(1.0)


def first_query_s(s: Settings, db: str, *, restore: bool, timeout: float) -> tuple[float | None, int]:
    """Starts a new SQL server on free ports (an empty state dir) and times its first answer (None:
    it gave up, e.g. its catch-up with the log outlasted its limit); the server is stopped before
    returning (its port, for its projection's path)."""
    import pymysql

    port, http, flight = free_port(), free_port(), free_port()
    # Every port a SQL server listens on is its own: the live server holds the stack's.
    env = {**os.environ, **stack.BENCH_ENV, "STRATA_SQL_PORT": str(port), "STRATA_HTTP_PORT": str(http),
           "STRATA_ARROW_FLIGHT_SQL_PORT": str(flight),
           "STRATA_PROJECTION_SNAPSHOT_RESTORE": "true" if restore else "false"}
    logfile = s.run_dir / f"fast-start-sql-{port}.log"
    t0 = time.perf_counter()
    with open(logfile, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "query.start"], cwd=REPO_ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        while True:
            if proc.poll() is not None:
                stack.log(f"fast_start: the new SQL server exited ({proc.returncode}) unanswered; see {logfile}")
                return None, port
            try:
                conn = pymysql.connect(host=s.sql_host, port=port, user="root", password="", database=db,
                                       connect_timeout=2)
                try:
                    with conn.cursor() as cur:
                        cur.execute("SELECT count(*) FROM probe")
                        cur.fetchall()
                finally:
                    conn.close()
                return time.perf_counter() - t0, port
            except pymysql.err.MySQLError:
                if time.perf_counter() - t0 > timeout:
                    raise SystemExit(f"bench/fast_start: no answer after {timeout:.0f}s; see {logfile}") from None
                time.sleep(0.1)
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commands", type=int, default=2000, help="CommitRowsets commands to produce")
    ap.add_argument("--million", action="store_true", help=f"a log of {GOAL_LOG_EVENTS:,} commands (the goal)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds to wait for each step")
    stack.add_stack_args(ap)
    args = ap.parse_args(argv)
    commands = GOAL_LOG_EVENTS if args.million else args.commands
    run_id = uuid.uuid4().hex[:8]

    with stack.bench_stack(args.keep_stack) as s, stack.worker_with(s, {CHECKPOINT_INTERVAL: "10"}):
        db = stack.fresh_database(s, "bench_fast_start")
        conn = stack.sql_connect(s, db)
        with conn.cursor() as cur:
            cur.execute(stack.create_table_sql("pad", "DUPLICATE", properties={"disable_auto_compaction": "true"}))
            cur.execute(stack.create_table_sql("probe", "DUPLICATE", properties={"disable_auto_compaction": "true"}))
            cur.execute("INSERT INTO pad VALUES (1, 1)")
            cur.execute("INSERT INTO probe VALUES (1, 1)")
        conn.close()
        table_id, template = template_rowset(s, db, "pad")
        g0 = stack.sequencer_gauges(s)
        stack.log(f"fast_start: producing {commands:,} CommitRowsets …")
        t0 = time.perf_counter()
        produce_commands(s, table_id, template, commands, run_id)
        wait_sequenced(s, g0.get("commands_applied", 0) + commands, g0.get("commands_rejected", 0), t0, args.timeout)
        sql_catch_up(s, db, args.timeout)
        end = events_end_offset(s)
        stack.log(f"fast_start: log of {end:,} offsets; waiting for a checkpoint holding it …")
        manifest = wait_checkpoint(s, args.timeout)
        stack.log(f"fast_start: checkpoint {manifest.key} ({manifest.size:,} bytes); starting a new SQL server …")
        restored_s, restored_port = first_query_s(s, db, restore=True, timeout=args.timeout)
        stack.log(f"fast_start: first query after {restored_s} s with the checkpoint; now without …")
        replayed_s, replayed_port = first_query_s(s, db, restore=False, timeout=args.timeout)
        stack.log(f"fast_start: first query after {replayed_s} s from offset 0")
        live, live_offsets = projection_checksum(stack.sql_projection_path(s))
        # Each new server's projection as it stopped: both must equal the live one, the restored one
        # (checkpoint + tail) and the one folded from offset 0 alike.
        compared = {how: projection_checksum(s.state_dir / f"sql-{port}")
                    for how, port, took in (("with_checkpoint", restored_port, restored_s),
                                            ("from_offset_0", replayed_port, replayed_s)) if took is not None}

    equal = bool(compared) and all(c == (live, live_offsets) for c in compared.values())
    stack.emit({
        "bench": "fast_start",
        "goal": f"a new SQL server on a log of >= {GOAL_LOG_EVENTS:,} events answers its first query in "
                f"< {GOAL_FIRST_QUERY_S:.0f} s (checkpoint restored, then the tail); checksums equal",
        "goal_met": bool(end >= GOAL_LOG_EVENTS and restored_s is not None and restored_s < GOAL_FIRST_QUERY_S
                         and "with_checkpoint" in compared and equal),
        "first_query_s": {"with_checkpoint": restored_s and round(restored_s, 2),
                          "from_offset_0": replayed_s and round(replayed_s, 2),
                          "speedup": round(replayed_s / restored_s, 2) if restored_s and replayed_s else None,
                          "note": "None: the server gave up before answering (its catch-up limit, 300 s)"},
        "checkpoint": {"object": manifest.key, "bytes": manifest.size,
                       "events_position": sum(manifest.offsets.values())},
        "checksums_equal": equal,
        "checksums_compared": sorted(compared),
        "live_checksum": live,
        "sizes": {"commands": commands, "log_end_offset": end, "database": db},
        "machine": stack.machine(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
