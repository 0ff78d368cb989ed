"""Mixed SQL load: concurrent clients reading, time-travelling and writing, with memory and crash watch.

    .venv/bin/python -m bench.load [--clients 32] [--duration-s 60] [--seed-rows 5000]
                                   [--mix reads=50,tt=20,writes=30] [--buckets 4] [--seed 1] [--keep-stack]

Three tables are created in a fresh database, all with time travel on and `--buckets` buckets:
`events` (Duplicate Key), `accounts` (Unique Key) and `counters` (Unique Key, 100 hot keys that
UPDATEs contend on); each is seeded with `--seed-rows` rows (counters: 100) in INSERTs of 500 rows.
Then `--clients` clients (one pymysql connection and one thread each, `SET time_zone = '+00:00'`)
run statements back to back for `--duration-s` seconds, each drawn by the `--mix` weights:

- reads: `point` (`SELECT … WHERE k = ?`), `count` (`SELECT count(*)`), `aggregate` (GROUP BY with
  count/sum/min/max), `scan` (a key range, ORDER BY k);
- tt: `tt_time` (`FOR TIME AS OF '<instant>'`: an instant recorded, in UTC, right after one of this
  run's writes to the table returned) and `tt_version` (`FOR VERSION AS OF n`, n at most the
  table's commits known so far: the seed's plus the INSERTs that returned), each as an aggregate,
  a point read or a key range;
- writes: `insert` (1 to 10 rows; new keys on events, upserts on accounts/counters), `update`
  (`UPDATE … SET v = v + 1 WHERE k = ?` on accounts, or on a hot key of counters) and `delete`
  (`DELETE FROM accounts WHERE k = ?`).

Every ~2 s the RSS (VmRSS) of the SQL server and the worker (pids from their pid files) is sampled.
After the load, every time-travel read is run again (by up to 8 connections) and its rows compared
with what it returned during the load: a past instant or version must read the same rows.
Goal: zero errors, both processes alive at the end with the pids they had at the start, memory
flat (each process: RSS at the end ≤ 1.5 × its RSS after warm-up), zero time-travel mismatches,
and the Unique Key tables holding one row per key at the end.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import itertools
import os
import random
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
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
    stack_pids,
    status_kb,
)
from schemas.config import Settings

TABLES = {"events": "DUPLICATE", "accounts": "UNIQUE", "counters": "UNIQUE"}
HOT_KEYS = 100
GROUPS = 16
SEED_BATCH = 500
SAMPLE_EVERY_S = 2.0
FLAT_FACTOR = 1.5
MAX_MESSAGES = 10
RECHECK_CONNECTIONS = 8
KINDS: dict[str, list[tuple[str, float]]] = {
    "reads": [("point", 0.4), ("count", 0.2), ("aggregate", 0.2), ("scan", 0.2)],
    "tt": [("tt_time", 0.6), ("tt_version", 0.4)],
    "writes": [("insert", 0.4), ("update", 0.35), ("delete", 0.25)],
}
RECONNECT_CODES = {2003, 2006, 2013, 2014, 2055}


def utc_instant() -> str:
    return datetime.now(tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def digest(rows: Any) -> tuple[int, str]:
    """Row count and a digest of the rows as a multiset (order-insensitive)."""
    lines = sorted(repr(tuple(r)) for r in rows)
    return len(lines), hashlib.sha1("\n".join(lines).encode()).hexdigest()


def parse_mix(text: str) -> dict[str, float]:
    mix: dict[str, float] = {}
    for part in text.split(","):
        name, _, weight = part.partition("=")
        name = name.strip()
        if name not in KINDS:
            raise SystemExit(f"bench/load: --mix: unknown group {name!r} (known: {', '.join(KINDS)})")
        mix[name] = float(weight)
    if not mix or sum(mix.values()) <= 0:
        raise SystemExit("bench/load: --mix needs a positive weight")
    return mix


# ------------------------------------------------------------------ shared state


@dataclass
class TableState:
    name: str
    model: str
    key_space: int  # keys of the seed: reads, updates and deletes pick from [0, key_space)
    commits: int = 0  # a lower bound of the table's commit number (dense 1..n)
    instants: list[str] = field(default_factory=list)  # recorded after writes returned
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record_write(self, inserted: bool) -> None:
        instant = utc_instant()
        with self.lock:
            if inserted:
                self.commits += 1
            self.instants.append(instant)

    def pick_instant(self, rng: random.Random) -> str:
        with self.lock:
            n = len(self.instants)
            # half the time one of the latest 20 (the hardest: just committed), else any of them
            idx = rng.randrange(max(0, n - 20), n) if rng.random() < 0.5 else rng.randrange(n)
            return self.instants[idx]

    def pick_version(self, rng: random.Random) -> int:
        with self.lock:
            return rng.randint(1, self.commits)


@dataclass
class TTRead:
    kind: str
    sql: str
    rows: int
    digest: str
    at_s: float  # offset into the load
    instant_age_ms: float | None  # for tt_time: how old the instant was when read


@dataclass
class Outcome:
    kind: str
    t0: float  # offset into the load, seconds
    latency_s: float
    ok: bool
    sql: str


@dataclass
class ClientLog:
    outcomes: list[Outcome] = field(default_factory=list)
    errors: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(dict))
    error_count: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    tt_reads: list[TTRead] = field(default_factory=list)
    reconnects: int = 0


# ------------------------------------------------------------------ statements


class Workload:
    def __init__(self, tables: dict[str, TableState], mix: dict[str, float], seed_rows: int) -> None:
        self.tables = tables
        self.names = list(tables)
        self.groups = list(mix)
        self.group_weights = [mix[g] for g in self.groups]
        self.new_keys = itertools.count(seed_rows)  # fresh keys for events (atomic under the GIL)

    def pick(self, rng: random.Random) -> str:
        group = rng.choices(self.groups, self.group_weights)[0]
        kinds = KINDS[group]
        return rng.choices([k for k, _ in kinds], [w for _, w in kinds])[0]

    def statement(self, kind: str, rng: random.Random) -> tuple[str, TableState, str | None]:
        """(sql, table, the instant named if any)."""
        if kind in ("insert", "update", "delete"):
            return self._write(kind, rng)
        t = self.tables[rng.choice(self.names)]
        k = rng.randrange(t.key_space)
        if kind == "point":
            return f"SELECT k, g, v, s FROM {t.name} WHERE k = {k}", t, None
        if kind == "count":
            return f"SELECT count(*) FROM {t.name}", t, None
        if kind == "aggregate":
            return (f"SELECT g, count(*), sum(v), min(v), max(v) FROM {t.name} GROUP BY g ORDER BY g", t, None)
        if kind == "scan":
            return f"SELECT k, v, s FROM {t.name} WHERE k BETWEEN {k} AND {k + 100} ORDER BY k", t, None
        instant = t.pick_instant(rng) if kind == "tt_time" else None
        clause = f"FOR TIME AS OF '{instant}'" if instant is not None else f"FOR VERSION AS OF {t.pick_version(rng)}"
        shape = rng.random()
        if shape < 0.4:
            sql = f"SELECT count(*), sum(v), min(k), max(k) FROM {t.name} {clause}"
        elif shape < 0.7:
            sql = f"SELECT k, g, v, s FROM {t.name} {clause} WHERE k = {k}"
        else:
            sql = f"SELECT k, v, s FROM {t.name} {clause} WHERE k BETWEEN {k} AND {k + 50} ORDER BY k"
        return sql, t, instant

    def _write(self, kind: str, rng: random.Random) -> tuple[str, TableState, str | None]:
        if kind == "insert":
            t = self.tables[rng.choice(self.names)]
            n = rng.randint(1, 10)
            if t.name == "events":
                keys = [next(self.new_keys) for _ in range(n)]
            else:
                keys = [rng.randrange(t.key_space) for _ in range(n)]
            values = ", ".join(f"({k}, {k % GROUPS}, {rng.randrange(1_000_000)}, 'i{rng.randrange(10**6)}')"
                               for k in keys)
            return f"INSERT INTO {t.name} VALUES {values}", t, None
        if kind == "update":
            t = self.tables["counters" if rng.random() < 0.4 else "accounts"]
            k = rng.randrange(t.key_space)
            return f"UPDATE {t.name} SET v = v + 1, s = 'u{rng.randrange(10**6)}' WHERE k = {k}", t, None
        t = self.tables["accounts"]
        return f"DELETE FROM {t.name} WHERE k = {rng.randrange(t.key_space)}", t, None


# ------------------------------------------------------------------ clients


def _session(s: Settings, db: str) -> Any:
    conn = sql_connect(s, db)
    with conn.cursor() as cur:
        cur.execute("SET time_zone = '+00:00'")
    return conn


def _lost_connection(exc: BaseException) -> bool:
    import pymysql

    if isinstance(exc, pymysql.err.InterfaceError):
        return True
    return isinstance(exc, pymysql.err.OperationalError) and bool(exc.args) and exc.args[0] in RECONNECT_CODES


def run_client(s: Settings, db: str, conn: Any, work: Workload, seed: int, start: threading.Barrier,
               t_start: list[float], deadline: list[float], out: ClientLog) -> None:
    rng = random.Random(seed)
    start.wait()
    t_zero = t_start[0]
    while True:
        now = time.perf_counter()
        if now >= deadline[0]:
            break
        kind = work.pick(rng)
        sql, table, instant = work.statement(kind, rng)
        t0 = time.perf_counter()
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                rows = cur.fetchall()
            latency = time.perf_counter() - t0
            out.outcomes.append(Outcome(kind, t0 - t_zero, latency, True, sql))
            if kind in ("insert", "update", "delete"):
                table.record_write(inserted=kind == "insert")
            elif kind in ("tt_time", "tt_version"):
                count, dig = digest(rows)
                age = None
                if instant is not None:
                    read_at = datetime.now(tz=UTC)
                    age = (read_at - datetime.strptime(instant, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=UTC)
                           ).total_seconds() * 1000 - latency * 1000
                out.tt_reads.append(TTRead(kind, sql, count, dig, round(t0 - t_zero, 3),
                                           None if age is None else round(age, 1)))
        except Exception as exc:  # noqa: BLE001 - counted and reported; the client goes on
            latency = time.perf_counter() - t0
            out.outcomes.append(Outcome(kind, t0 - t_zero, latency, False, sql))
            out.error_count[kind] += 1
            message = f"{type(exc).__name__}: {exc}"[:300]
            seen = out.errors[kind]
            if message in seen or len(seen) < MAX_MESSAGES:
                seen[message] = seen.get(message, 0) + 1
            if _lost_connection(exc):
                out.reconnects += 1
                try:
                    conn.close()
                except Exception:  # noqa: BLE001
                    pass
                for _ in range(30):
                    try:
                        conn = _session(s, db)
                        break
                    except Exception:  # noqa: BLE001 - the server may be restarting
                        time.sleep(1)
                else:
                    return
    conn.close()


# ------------------------------------------------------------------ memory / processes


def _alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


class MemorySampler(threading.Thread):
    def __init__(self, pids: dict[str, int | None], t_zero: float) -> None:
        super().__init__(daemon=True)
        self.pids = pids
        self.t_zero = t_zero
        self.samples: list[tuple[float, dict[str, int | None]]] = []
        self.stop = threading.Event()

    def sample(self) -> None:
        self.samples.append((round(time.perf_counter() - self.t_zero, 2),
                             {n: status_kb(p, 'VmRSS') for n, p in self.pids.items()}))

    def run(self) -> None:
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(SAMPLE_EVERY_S)


def memory_report(samples: list[tuple[float, dict[str, int | None]]], warmup_s: float) -> dict[str, Any]:
    out: dict[str, Any] = {"sample_every_s": SAMPLE_EVERY_S, "samples": len(samples), "warmup_s": warmup_s,
                           "rule": f"flat: RSS at the end <= {FLAT_FACTOR} x RSS at the first sample at or after "
                                   f"warm-up ({warmup_s} s into the load), per process"}
    flat = True
    for name in ("sql", "worker"):
        series = [(t, v[name]) for t, v in samples if v.get(name) is not None]
        if not series:
            out[name] = {"error": "no samples (process gone?)"}
            flat = False
            continue
        values = [v for _, v in series]
        idx = min(bisect.bisect_left([t for t, _ in series], warmup_s), len(series) - 1)
        after_warmup = series[idx][1]
        assert after_warmup is not None
        end = values[-1]
        assert end is not None
        ok = end <= FLAT_FACTOR * after_warmup
        flat = flat and ok
        post = series[idx:]
        slope = None
        if len(post) >= 2 and post[-1][0] > post[0][0]:
            slope = round(((post[-1][1] or 0) - (post[0][1] or 0)) / 1024 / (post[-1][0] - post[0][0]) * 60, 2)
        out[name] = {"start_mb": round((values[0] or 0) / 1024, 1), "after_warmup_mb": round(after_warmup / 1024, 1),
                     "end_mb": round(end / 1024, 1), "max_mb": round(max(v or 0 for v in values) / 1024, 1),
                     "growth_after_warmup_mb_per_min": slope, "end_over_after_warmup": round(end / after_warmup, 3),
                     "flat": ok, "series_mb": [round((v or 0) / 1024, 1) for v in values]}
    out["flat"] = flat
    return out


# ------------------------------------------------------------------ setup / recheck


def create_and_seed(s: Settings, db: str, seed_rows: int, buckets: int, rng: random.Random) -> dict[str, TableState]:
    conn = _session(s, db)
    tables: dict[str, TableState] = {}
    with conn.cursor() as cur:
        for name, model in TABLES.items():
            cur.execute(f"CREATE TABLE {name} (k BIGINT, g INT, v BIGINT, s VARCHAR(32)) ENGINE=OLAP {model} KEY(k) "
                        f"DISTRIBUTED BY HASH(k) BUCKETS {buckets} "
                        f'PROPERTIES ("replication_num" = "1", "enable_time_travel" = "true")')
            rows = HOT_KEYS if name == "counters" else seed_rows
            for lo in range(0, rows, SEED_BATCH):
                values = ", ".join(f"({k}, {k % GROUPS}, {rng.randrange(1_000_000)}, 'seed{k}')"
                                   for k in range(lo, min(rows, lo + SEED_BATCH)))
                cur.execute(f"INSERT INTO {name} VALUES {values}")
            cur.execute(f"SHOW TIME TRAVEL ON {name}")
            commits = max((int(r[4]) for r in cur.fetchall()), default=0)
            tables[name] = TableState(name, model, rows, commits=commits, instants=[utc_instant()])
            cur.execute(f"SELECT count(*) FROM {name}")
            (count,) = cur.fetchone()
            assert count == rows, f"{name}: seeded {rows} rows, counted {count}"
    conn.close()
    return tables


def recheck(s: Settings, db: str, reads: list[TTRead]) -> dict[str, Any]:
    """Every time-travel read again, after the load: the same rows as during it?"""
    mismatches: list[dict[str, Any]] = []
    errors: list[str] = []
    lock = threading.Lock()
    chunks = [reads[i::RECHECK_CONNECTIONS] for i in range(RECHECK_CONNECTIONS)]

    def work(chunk: list[TTRead]) -> None:
        if not chunk:
            return
        conn = _session(s, db)
        try:
            with conn.cursor() as cur:
                for r in chunk:
                    try:
                        cur.execute(r.sql)
                        count, dig = digest(cur.fetchall())
                    except Exception as exc:  # noqa: BLE001
                        with lock:
                            errors.append(f"{type(exc).__name__}: {exc}"[:300])
                        continue
                    if dig != r.digest:
                        with lock:
                            mismatches.append({"kind": r.kind, "sql": r.sql, "rows_during": r.rows,
                                               "rows_after": count, "read_at_s": r.at_s,
                                               "instant_age_ms": r.instant_age_ms})
        finally:
            conn.close()

    t0 = time.perf_counter()
    threads = [threading.Thread(target=work, args=(c,)) for c in chunks]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    by_kind: dict[str, int] = defaultdict(int)
    for m in mismatches:
        by_kind[m["kind"]] += 1
    return {"rechecked": len(reads), "mismatches": len(mismatches), "mismatches_by_kind": dict(by_kind),
            "mismatch_examples": sorted(mismatches, key=lambda m: m["read_at_s"])[:5],
            "errors": len(errors), "error_messages": sorted(set(errors))[:MAX_MESSAGES],
            "wall_s": round(time.perf_counter() - t0, 2)}


def unique_keys(s: Settings, db: str) -> dict[str, Any]:
    """Unique Key tables after the load: one row per key (count(*) = count(DISTINCT k))?"""
    conn = _session(s, db)
    out: dict[str, Any] = {}
    with conn.cursor() as cur:
        for name, model in TABLES.items():
            if model == "UNIQUE":
                cur.execute(f"SELECT count(*), count(DISTINCT k) FROM {name}")
                count, distinct = cur.fetchone()
                out[name] = {"rows": count, "distinct_keys": distinct, "ok": count == distinct}
    conn.close()
    return out


# ------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=32, help="concurrent connections (one thread each)")
    ap.add_argument("--duration-s", type=float, default=60.0, help="seconds of load")
    ap.add_argument("--seed-rows", type=int, default=5000, help="rows seeded into events and accounts")
    ap.add_argument("--mix", default="reads=50,tt=20,writes=30", help="group weights: reads, tt, writes")
    ap.add_argument("--buckets", type=int, default=4, help="buckets per table")
    ap.add_argument("--seed", type=int, default=1, help="random seed")
    add_stack_args(ap)
    args = ap.parse_args(argv)
    mix = parse_mix(args.mix)
    rng = random.Random(args.seed)

    with bench_stack(args.keep_stack) as s:
        db = fresh_database(s, "bench_load")
        log(f"load: seeding {', '.join(TABLES)} in {db} ({args.seed_rows} rows, {args.buckets} buckets) …")
        tables = create_and_seed(s, db, args.seed_rows, args.buckets, rng)
        work = Workload(tables, mix, args.seed_rows)
        pids_start = stack_pids(s)
        sessions = [_session(s, db) for _ in range(args.clients)]
        logs = [ClientLog() for _ in range(args.clients)]
        start = threading.Barrier(args.clients + 1)
        t_start = [0.0]
        deadline = [float("inf")]
        threads = [threading.Thread(target=run_client, daemon=True,
                                    args=(s, db, sessions[i], work, args.seed * 1000 + i, start, t_start,
                                          deadline, logs[i]))
                   for i in range(args.clients)]
        for th in threads:
            th.start()
        log(f"load: {args.clients} clients for {args.duration_s} s (mix {mix}) …")
        t_start[0] = time.perf_counter()
        deadline[0] = t_start[0] + args.duration_s
        sampler = MemorySampler(pids_start, t_start[0])
        sampler.start()
        start.wait()
        for th in threads:
            th.join(timeout=max(0.0, deadline[0] - time.perf_counter()) + 600)
        wall = time.perf_counter() - t_start[0]
        sampler.stop.set()
        sampler.join()
        sampler.sample()
        stuck = sum(th.is_alive() for th in threads)
        pids_end = stack_pids(s)
        alive = {n: _alive(pids_start[n]) and pids_end[n] == pids_start[n] for n in ("sql", "worker")}
        tt_reads = [r for lg in logs for r in lg.tt_reads]
        log(f"load: done ({wall:.1f} s); re-running {len(tt_reads)} time-travel reads …")
        check = recheck(s, db, tt_reads) if all(alive.values()) else {"skipped": "a process died"}
        unique_ok = unique_keys(s, db) if all(alive.values()) else {}

    outcomes = [o for lg in logs for o in lg.outcomes]
    kinds = sorted({o.kind for o in outcomes}, key=lambda k: [k2 for g in KINDS.values() for k2, _ in g].index(k))
    per_kind: dict[str, Any] = {}
    for kind in kinds:
        mine = [o for o in outcomes if o.kind == kind]
        ok = [o.latency_s for o in mine if o.ok]
        messages: dict[str, int] = {}
        for lg in logs:
            for m, c in lg.errors.get(kind, {}).items():
                if m in messages or len(messages) < MAX_MESSAGES:
                    messages[m] = messages.get(m, 0) + c
        per_kind[kind] = {"statements": len(mine), "ok": len(ok), "per_s": round(len(ok) / wall, 1),
                          "latency": percentiles_ms(ok) if ok else None,
                          "errors": {"count": sum(lg.error_count.get(kind, 0) for lg in logs),
                                     "messages": messages}}
    error_total = sum(v["errors"]["count"] for v in per_kind.values())
    ok_total = sum(v["ok"] for v in per_kind.values())
    windows: dict[int, list[float]] = defaultdict(list)
    for o in outcomes:
        if o.ok:
            windows[int(o.t0 // 10)].append(o.latency_s)
    timeline = [{"from_s": w * 10, "per_s": round(len(v) / 10, 1), "p99_ms": percentiles_ms(v)["p99_ms"]}
                for w, v in sorted(windows.items())]
    slowest = sorted((o for o in outcomes if o.ok), key=lambda o: -o.latency_s)[:8]
    warmup_s = round(min(15.0, args.duration_s / 4), 1)
    memory = memory_report(sampler.samples, warmup_s)
    no_crash = all(alive.values()) and stuck == 0
    mismatches = check.get("mismatches", 0) if "skipped" not in check else None
    unique_good = bool(unique_ok) and all(v["ok"] for v in unique_ok.values())
    goal_met = error_total == 0 and no_crash and memory["flat"] and mismatches == 0 and unique_good
    emit({
        "bench": "load",
        "goal": "zero errors; no crash (sql and worker alive at the end with their start pids); memory flat "
                f"(end RSS <= {FLAT_FACTOR} x RSS after warm-up); time-travel reads re-run after the load "
                "return the same rows; Unique Key tables hold one row per key at the end",
        "goal_met": goal_met,
        "statements": len(outcomes), "ok": ok_total, "errors": error_total,
        "throughput_per_s": round(ok_total / wall, 1), "wall_s": round(wall, 2),
        "groups": {g: {"statements": sum(per_kind.get(k, {}).get("statements", 0) for k, _ in ks),
                       "per_s": round(sum(per_kind.get(k, {}).get("ok", 0) for k, _ in ks) / wall, 1)}
                   for g, ks in KINDS.items()},
        "kinds": per_kind,
        "reconnects": sum(lg.reconnects for lg in logs), "clients_stuck_at_end": stuck,
        "processes": {"pids_start": pids_start, "pids_end": pids_end, "alive_same_pid": alive},
        "memory": memory,
        "time_travel_recheck": check,
        "unique_keys_at_end": unique_ok,
        "timeline_10s": timeline,
        "slowest": [{"kind": o.kind, "ms": round(o.latency_s * 1000, 1), "at_s": round(o.t0, 2), "sql": o.sql[:160]}
                    for o in slowest],
        "sizes": {"clients": args.clients, "duration_s": args.duration_s, "seed_rows": args.seed_rows,
                  "hot_keys": HOT_KEYS, "buckets": args.buckets, "mix": mix, "seed": args.seed,
                  "tables": {n: f"{m} KEY(k) (k BIGINT, g INT, v BIGINT, s VARCHAR(32)), time travel on"
                             for n, m in TABLES.items()},
                  "final_commits_known": {n: t.commits for n, t in tables.items()},
                  "instants_recorded": sum(len(t.instants) for t in tables.values()), "database": db},
        "machine": machine(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
