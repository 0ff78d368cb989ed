"""Fault harness ("Trust" item 4): a mixed workload under random `kill -9` of every process.

    .venv/bin/python -m bench.fault_harness --duration-s 600 --faults 30 [--seed 1] [--keep-stack]

The workload, on one database of the stack:

- `main`, a Unique Key table with time travel and a storage policy (cooldown_ttl 1 s on a bucket of
  the stack's MinIO), written by one client: labelled INSERTs, UPDATE of one key to a value never
  used before, DELETE of one key, ADD / DROP COLUMN, RESTORE TABLE … TO TIME AS OF a recorded
  instant, ADMIN COMPACT; its rowsets cool to MinIO in the background.
- `feed`, a Duplicate Key table a routine load job fills from a topic that a producer thread keeps
  writing (`{"id": n}`, n = 0, 1, 2 …, idempotent producer).

Meanwhile a fault thread `kill -9`s the worker, the SQL server, the Kafka broker or MinIO (by the
pid in the stack's pid file, round robin in a shuffled order) at random moments and restarts them
with `infra/up --detach`.

The oracle (an in-memory model of `main`) counts a write only once it is known to have landed:

- A statement that answers OK landed.
- A statement that failed is ambiguous (its command may be on the log, or still in the SQL server's
  producer queue). The client waits until the stack is healthy and then *fences*: a labelled INSERT
  of a fence row through the SQL server, retried by label until it answers OK or 5001. Commands of
  one table go to one `strata.commands` partition in order (one idempotent producer per SQL
  server; a killed server's queue dies with it), so once the fence is applied so is anything the
  failed statement sent. Then the table's state says whether it landed: a labelled INSERT is
  retried by label (5001 = it had landed); an UPDATE landed iff the key holds its unique value; a
  DELETE iff the key is gone; ADD/DROP COLUMN iff DESC shows it; a RESTORE iff the rows (fence row
  aside) equal the oracle's snapshot of the target instant. Not landed → retried, like a client.
- After each resolved step the instant of `main`'s latest commit (`SHOW TIME TRAVEL`) is recorded
  with a copy of the oracle.

Afterwards, with the stack healthy: `main` equals the oracle, `FOR TIME AS OF` every recorded
instant equals the oracle then, `main` has exactly one load commit per landed INSERT (a label
applied twice would show as two), every produced id is in `feed` exactly once (acknowledged ids
must be there; ids whose delivery was not confirmed at most once), and the SQL server's projection
has the checksum of a fresh replay of `strata.events` (`projections.replay`, what `strata replay` /
`strata checksum` run) at the same offsets. Prints one JSON object.

`run_harness()` is the whole run against whatever stack `schemas.config.load_settings()` points at;
tests/streams/test_fault_harness.py drives a short one on the test stack.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pymysql

from schemas.config import REPO_ROOT, Settings

KINDS = ("worker", "sql", "kafka", "minio")
FENCE_BASE = 1_000_000  # fence rows' keys; workload keys are below
UPDATE_BASE = 10_000_000  # UPDATE values: UPDATE_BASE + step number, never reused
Row = dict[str, Any]


def _log(*parts: object) -> None:
    print(f"[fault-harness {time.strftime('%H:%M:%S')}]", *parts, file=sys.stderr, flush=True)


def _instant(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _ms(text: str) -> int:
    return int(datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=UTC).timestamp() * 1000)


def _norm(v: Any) -> Any:
    return int(v) if isinstance(v, int | float) and not isinstance(v, bool) else v


def _sorted_rows(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted((tuple(_norm(v) for v in r) for r in rows),
                  key=lambda r: tuple((0, 0) if v is None else (1, v) for v in r))


# ------------------------------------------------------------------ the oracle


@dataclass
class Oracle:
    """A Unique Key table: key `k` → row; columns in order with their defaults."""

    columns: list[tuple[str, int | None]] = field(default_factory=lambda: [("k", None), ("v", None)])
    rows: dict[int, Row] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [n for n, _ in self.columns]

    def insert(self, batch: list[Row]) -> None:
        for row in batch:
            self.rows[row["k"]] = {n: row.get(n, d) for n, d in self.columns}

    def add_column(self, name: str, default: int) -> None:
        self.columns.append((name, default))
        for r in self.rows.values():
            r[name] = default

    def drop_column(self, name: str) -> None:
        self.columns = [c for c in self.columns if c[0] != name]
        for r in self.rows.values():
            r.pop(name, None)

    def result(self, *, without: set[int] | None = None) -> list[tuple[Any, ...]]:
        return _sorted_rows([tuple(r[n] for n in self.names) for k, r in self.rows.items()
                             if not without or k not in without])


# ------------------------------------------------------------------ SQL client


class Client:
    """One MySQL connection, reopened after any connection error."""

    def __init__(self, s: Settings, db: str | None = None) -> None:
        self.s = s
        self.db = db
        self.conn: Any = None

    def _open(self) -> Any:
        if self.conn is None:
            self.conn = pymysql.connect(host=self.s.sql_host, port=self.s.sql_port, user="root", password="",
                                        autocommit=True, connect_timeout=5, read_timeout=120, write_timeout=120)
            if self.db:
                with self.conn.cursor() as cur:
                    cur.execute(f"USE {self.db}")
        return self.conn

    def drop(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # noqa: BLE001 - closing a broken connection
                pass
        self.conn = None

    def run(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        try:
            with self._open().cursor() as cur:
                cur.execute(sql)
                names = [d[0] for d in cur.description] if cur.description else []
                return names, list(cur.fetchall())
        except (pymysql.err.OperationalError, pymysql.err.InterfaceError, OSError) as exc:
            if not isinstance(exc, pymysql.err.OperationalError) or exc.args[0] in (0, 2003, 2006, 2013, 2014):
                self.drop()
            raise

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        return self.run(sql)[1]


def _code(exc: BaseException) -> int | None:
    """The MySQL error code, or Doris' own code for the errors the server sends as 1105 with
    `errCode = N, detailMessage = …` (5001 "label already used": MariaDB's clients keep 5000-5999)."""
    if not (isinstance(exc, pymysql.MySQLError) and exc.args and isinstance(exc.args[0], int)):
        return None
    code: int = exc.args[0]
    doris = re.match(r"errCode = (\d+),", str(exc.args[1]) if len(exc.args) > 1 else "")
    return int(doris.group(1)) if code == 1105 and doris else code


# ------------------------------------------------------------------ the stack


class Stack:
    """Health probes, kills by pid file and `infra/up --detach`, serialised. (The scale-out
    rehearsal, bench/scale_out.py, gives the harness a cluster with the same methods.)"""

    kinds: tuple[str, ...] = KINDS

    def __init__(self, s: Settings) -> None:
        from infra.layout import Layout

        self.s = s
        self.layout = Layout(s)
        self.lock = threading.Lock()
        self.up_runs: list[float] = []
        self.up_failures: list[str] = []

    def unhealthy(self) -> list[str]:
        from infra.health import probe

        return [n for n in self.kinds if probe(n, self.s) is not None]

    def pid(self, kind: str) -> int | None:
        from infra.supervisor import running_pid

        return running_pid(self.layout.pid_file(kind))

    def kill(self, kind: str) -> int | None:
        pid = self.pid(kind)
        if pid is None:
            return None
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while self.pid(kind) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        return pid

    def up(self) -> bool:
        with self.lock:
            t0 = time.monotonic()
            proc = subprocess.run([str(REPO_ROOT / "infra" / "up"), "--detach"], cwd=REPO_ROOT,
                                  env=dict(os.environ), capture_output=True, text=True, timeout=400)
            self.up_runs.append(time.monotonic() - t0)
            if proc.returncode != 0:
                self.up_failures.append((proc.stdout + proc.stderr)[-1500:])
                _log("infra/up --detach failed:", (proc.stdout + proc.stderr)[-500:])
                return False
            return True

    def wait_healthy(self, timeout: float = 400.0, heal_after: float = 25.0) -> float:
        """Waits until every component answers; runs `infra/up --detach` itself when one stays down
        (a process that died of another one's fault). Returns the seconds waited."""
        t0 = time.monotonic()
        last_heal = t0
        while True:
            down = self.unhealthy()
            if not down:
                return time.monotonic() - t0
            if time.monotonic() - t0 > timeout:
                raise RuntimeError(f"stack not healthy after {timeout:.0f} s: {down}")
            if time.monotonic() - last_heal > heal_after and not self.lock.locked():
                _log(f"still down after {time.monotonic() - last_heal:.0f} s: {down}; starting them again")
                self.up()
                last_heal = time.monotonic()
            time.sleep(0.3)


class FaultInjector(threading.Thread):
    """Kills `faults` processes, one every duration/faults seconds (± jitter), each kind in turn
    (shuffled rounds), and restarts the stack after a random down time."""

    def __init__(self, stack: Stack, duration_s: float, faults: int, rng: random.Random, down_max_s: float) -> None:
        super().__init__(name="fault-injector", daemon=True)
        self.stack = stack
        self.faults = faults
        self.interval = duration_s / max(faults, 1)
        self.rng = rng
        self.down_max_s = down_max_s
        self.stop_event = threading.Event()
        self.log: list[dict[str, Any]] = []
        self.by_kind: Counter[str] = Counter()
        order: list[str] = []
        while len(order) < faults:
            round_ = list(stack.kinds)
            rng.shuffle(round_)
            order.extend(round_)
        self.order = order[:faults]

    def run(self) -> None:
        t0 = time.monotonic()
        for i, kind in enumerate(self.order):
            at = t0 + (i + 0.5 + self.rng.uniform(-0.35, 0.35)) * self.interval
            while time.monotonic() < at and not self.stop_event.is_set():
                time.sleep(0.1)
            if self.stop_event.is_set():
                return
            if self.stack.unhealthy():  # let the previous restart finish before the next kill
                try:
                    self.stack.wait_healthy(heal_after=15)
                except RuntimeError as exc:
                    _log("fault thread:", exc)
            pid = self.stack.kill(kind)
            killed_at = time.monotonic() - t0
            down = self.rng.uniform(0.2, self.down_max_s)
            _log(f"fault {i + 1}/{self.faults}: kill -9 {kind} (pid {pid}); up again in {down:.1f} s")
            time.sleep(down)
            t_up = time.monotonic()
            ok = self.stack.up()
            self.by_kind[kind] += 1 if pid is not None else 0
            self.log.append({"kind": kind, "pid": pid, "at_s": round(killed_at, 1), "down_s": round(down, 2),
                             "up_s": round(time.monotonic() - t_up, 1), "up_ok": ok})


# ------------------------------------------------------------------ the feed (routine load)


class FeedProducer(threading.Thread):
    """Writes `{"id": n, "v": 2n}` to the job's topic, `batch` records every `pause_s`, and keeps
    what the broker acknowledged, what failed, and what was sent."""

    def __init__(self, s: Settings, topic: str, batch: int = 20, pause_s: float = 0.1) -> None:
        super().__init__(name="feed-producer", daemon=True)
        self.s = s
        self.topic = topic
        self.batch = batch
        self.pause_s = pause_s
        self.stop_event = threading.Event()
        self.sent = 0
        self.acked: set[int] = set()
        self.failed: dict[int, str] = {}
        self.fatal: list[str] = []

    def _producer(self) -> Any:
        from confluent_kafka import Producer

        return Producer({"bootstrap.servers": self.s.kafka_bootstrap, "enable.idempotence": True, "acks": "all",
                         "linger.ms": 5, "message.timeout.ms": 300000, "log_level": 2})

    def run(self) -> None:
        producer = self._producer()

        def delivered(err: Any, msg: Any) -> None:
            n = int(json.loads(msg.value())["id"])
            if err is None:
                self.acked.add(n)
            else:
                self.failed[n] = str(err)

        try:
            while not self.stop_event.is_set():
                for _ in range(self.batch):
                    n = self.sent
                    value = json.dumps({"id": n, "v": 2 * n}).encode()
                    while True:
                        try:
                            producer.produce(self.topic, value, on_delivery=delivered)
                            break
                        except BufferError:
                            producer.poll(0.1)
                    self.sent += 1
                producer.poll(0)
                time.sleep(self.pause_s)
            left = producer.flush(300)
            if left:
                self.fatal.append(f"{left} records still undelivered after flush(300)")
        except Exception as exc:  # noqa: BLE001 - reported in the result
            self.fatal.append(repr(exc))
            producer.flush(60)


# ------------------------------------------------------------------ the harness


@dataclass
class HarnessConfig:
    duration_s: float = 600.0
    faults: int = 30
    seed: int | None = None
    keys: int = 40
    down_max_s: float = 4.0
    max_attempts: int = 12


@dataclass
class Step:
    kind: str
    sql: str
    label: str | None = None
    # after a fence: did it land? (None: nothing to check — a labelled INSERT is retried by label)
    landed: Callable[[list[str], dict[int, Row]], bool] | None = None
    apply: Callable[[], None] = lambda: None


class Harness:
    def __init__(self, s: Settings, cfg: HarnessConfig, stack: Stack | None = None) -> None:
        self.s = s
        self.cfg = cfg
        self.seed = cfg.seed if cfg.seed is not None else random.randrange(1 << 30)
        self.rng = random.Random(self.seed)
        self.run_id = uuid.uuid4().hex[:8]
        self.db = f"fault_{self.run_id}"
        self.stack = stack or Stack(s)
        self.client = Client(s, self.db)
        self.oracle = Oracle()
        self.history: dict[int, tuple[list[str], list[tuple[Any, ...]]]] = {}
        self.snapshots: dict[int, Oracle] = {}
        self.fences = 0
        self.next_column = 1
        self.loads_landed = 0  # INSERTs (and fences) known to have landed: one load commit each
        self.ops: Counter[str] = Counter()
        self.landed: Counter[str] = Counter()
        self.ambiguous: Counter[str] = Counter()
        self.retries: Counter[str] = Counter()
        self.gave_up: list[str] = []
        self.errors: Counter[str] = Counter()
        self.mismatches: list[str] = []
        self.instant_conflicts = 0
        self.live_checks = 0
        self.remote_rowsets_seen = 0
        self.healthy_wait_s = 0.0
        self.step_no = 0

    # -------------------------------------------------------------- helpers

    def _err(self, exc: BaseException) -> None:
        text = str(exc.args[1] if isinstance(exc, pymysql.MySQLError) and len(exc.args) > 1 else exc)
        self.errors[f"{_code(exc)}: {text[:90]}"] += 1

    def read(self, sql: str, timeout: float = 300.0) -> tuple[list[str], list[tuple[Any, ...]]]:
        """A read, retried (waiting for the stack) until it answers."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.client.run(sql)
            except (pymysql.MySQLError, OSError) as exc:
                if time.monotonic() > deadline:
                    raise
                self._err(exc)
                self.healthy_wait_s += self.stack.wait_healthy()
                time.sleep(0.3)

    def state(self) -> tuple[list[str], dict[int, Row]]:
        names, rows = self.read("SELECT * FROM main")
        return names, {int(r[0]): dict(zip(names, (_norm(v) for v in r), strict=True)) for r in rows}

    def record_instant(self) -> None:
        try:
            rows = self.client.rows("SHOW TIME TRAVEL ON main")
        except (pymysql.MySQLError, OSError) as exc:
            self._err(exc)
            return  # a missed instant only means one check fewer
        if not rows:
            return
        ms = _ms(rows[-1][2])
        entry = (list(self.oracle.names), self.oracle.result())
        if ms in self.history and self.history[ms] != entry:
            self.instant_conflicts += 1
            self.mismatches.append(f"instant {_instant(ms)} recorded twice with different oracle states")
        self.history[ms] = entry
        self.snapshots[ms] = copy.deepcopy(self.oracle)

    def fence(self) -> None:
        """Waits for the stack, then a labelled INSERT of a fence row until it is known to have
        landed: everything a failed statement sent before it is applied by then. The oracle gets
        the fence row from `apply_fence` (after the failed statement is resolved)."""
        self.fences += 1
        label = f"fence_{self.run_id}_{self.fences}"
        sql = f"INSERT INTO main WITH LABEL {label} (k, v) VALUES ({FENCE_BASE + self.fences}, {self.fences})"
        for attempt in range(50):
            self.healthy_wait_s += self.stack.wait_healthy()
            try:
                self.client.run(sql)
                return
            except (pymysql.MySQLError, OSError) as exc:
                if attempt > 0 and _code(exc) == 5001:
                    return
                self._err(exc)
                time.sleep(0.5)
        raise RuntimeError(f"fence {label} never landed")

    def apply_fence(self) -> None:
        self.oracle.insert([{"k": FENCE_BASE + self.fences, "v": self.fences}])
        self.loads_landed += 1

    def execute(self, step: Step) -> None:
        """Runs a step until it is known to have landed (or gives up after max_attempts)."""
        self.ops[step.kind] += 1
        for attempt in range(self.cfg.max_attempts):
            try:
                self.client.run(step.sql)
                landed = True
            except (pymysql.MySQLError, OSError) as exc:
                if step.label is not None and attempt > 0 and _code(exc) == 5001:
                    landed = True  # the retry of a labelled INSERT: an earlier attempt had loaded it
                else:
                    if step.label is not None and attempt == 0 and _code(exc) == 5001:
                        raise RuntimeError(f"harness bug: label {step.label} reused") from exc
                    self._err(exc)
                    landed = False
            if landed:
                if attempt:
                    self.retries[step.kind] += 1
                step.apply()
                self.landed[step.kind] += 1
                return
            # Ambiguous: fence, then learn from the state whether it landed.
            self.ambiguous[step.kind] += 1
            self.fence()
            if step.landed is not None:
                names, state = self.state()
                if step.landed(names, state):
                    step.apply()
                    self.apply_fence()
                    self.landed[step.kind] += 1
                    self.retries[step.kind] += 1 if attempt else 0
                    return
            self.apply_fence()
            if step.landed is not None:
                # Known not to have landed: the state is the oracle's. (A labelled INSERT is only
                # known after its retry: recording the fence's instant now could miss it.)
                self.record_instant()
            self.retries[step.kind] += 1
        self.gave_up.append(step.sql)

    # -------------------------------------------------------------- the steps

    def _value_sql(self, v: Any) -> str:
        return "NULL" if v is None else str(v)

    def step_insert(self) -> Step:
        label = f"ins_{self.run_id}_{self.step_no}"
        batch: list[Row] = []
        for _ in range(self.rng.randint(1, 5)):
            row: Row = {"k": self.rng.randrange(self.cfg.keys), "v": self.rng.randrange(1000)}
            for name, _default in self.oracle.columns[2:]:
                row[name] = self.rng.choice([None, self.rng.randrange(100)])
            batch.append(row)
        names = self.oracle.names
        values = ", ".join("(" + ", ".join(self._value_sql(r.get(n)) for n in names) + ")" for r in batch)

        def apply() -> None:
            self.oracle.insert(batch)
            self.loads_landed += 1

        return Step("insert", f"INSERT INTO main WITH LABEL {label} ({', '.join(names)}) VALUES {values}",
                    label=label, apply=apply)

    def step_update(self) -> Step:
        k = self.rng.randrange(self.cfg.keys)
        value = UPDATE_BASE + self.step_no
        existed = k in self.oracle.rows

        def landed(_names: list[str], state: dict[int, Row]) -> bool:
            return not existed or state.get(k, {}).get("v") == value

        def apply() -> None:
            if k in self.oracle.rows:
                self.oracle.rows[k]["v"] = value

        return Step("update", f"UPDATE main SET v = {value} WHERE k = {k}", landed=landed, apply=apply)

    def step_delete(self) -> Step:
        k = self.rng.randrange(self.cfg.keys)
        existed = k in self.oracle.rows

        def landed(_names: list[str], state: dict[int, Row]) -> bool:
            return not existed or k not in state

        def apply() -> None:
            self.oracle.rows.pop(k, None)

        return Step("delete", f"DELETE FROM main WHERE k = {k}", landed=landed, apply=apply)

    def step_add_column(self) -> Step:
        name = f"c{self.run_id[:4]}_{self.next_column}"
        self.next_column += 1
        default = self.rng.randrange(10)
        return Step("add_column", f'ALTER TABLE main ADD COLUMN {name} INT DEFAULT "{default}"',
                    landed=lambda names, _state: name in names,
                    apply=lambda: self.oracle.add_column(name, default))

    def step_drop_column(self) -> Step:
        name = self.rng.choice(self.oracle.names[2:])
        return Step("drop_column", f"ALTER TABLE main DROP COLUMN {name}",
                    landed=lambda names, _state: name not in names,
                    apply=lambda: self.oracle.drop_column(name))

    def step_restore(self) -> Step:
        target = self.rng.choice(sorted(self.snapshots))
        then = self.snapshots[target]

        def landed(names: list[str], state: dict[int, Row]) -> bool:
            fence_key = FENCE_BASE + self.fences
            rows = _sorted_rows([tuple(r[n] for n in names) for k, r in state.items() if k != fence_key])
            return names == then.names and rows == then.result(without={fence_key})

        def apply() -> None:
            self.oracle = copy.deepcopy(then)

        return Step("restore", f"RESTORE TABLE main TO TIME AS OF '{_instant(target)}'", landed=landed, apply=apply)

    def step_compact(self) -> Step:
        kind = self.rng.choice(["BASE", "CUMULATIVE"])
        # Changes no row: once the stack is back, there is nothing to learn and nothing to retry.
        return Step("compact", f"ADMIN COMPACT TABLE main WHERE TYPE = '{kind}'", landed=lambda _n, _s: True)

    def check_tiers(self) -> None:
        self.ops["cooldown_check"] += 1
        try:
            rows = self.client.rows(f"SELECT TIER, count(*) FROM information_schema.rowsets WHERE TABLE_SCHEMA = "
                                    f"'{self.db}' AND TABLE_NAME = 'main' GROUP BY TIER")
        except (pymysql.MySQLError, OSError) as exc:
            self._err(exc)
            return
        self.remote_rowsets_seen = max(self.remote_rowsets_seen,
                                       sum(int(n) for t, n in rows if str(t).startswith("remote")))

    def live_check(self) -> None:
        """The latest state against the oracle, while faults go on (only a read that answers counts)."""
        self.ops["live_check"] += 1
        try:
            names, rows = self.client.run("SELECT * FROM main")
        except (pymysql.MySQLError, OSError) as exc:
            self._err(exc)
            return
        self.live_checks += 1
        if names != self.oracle.names or _sorted_rows(rows) != self.oracle.result():
            self.mismatches.append(f"live read at step {self.step_no} differs from the oracle")

    def one_step(self) -> None:
        self.step_no += 1
        choices: list[tuple[int, Callable[[], Step | None]]] = [
            (40, self.step_insert), (20, self.step_update), (10, self.step_delete), (4, self.step_compact),
            (4, lambda: self.step_add_column() if len(self.oracle.columns) < 5 else None),
            (4, lambda: self.step_drop_column() if len(self.oracle.columns) > 2 else None),
            (3, lambda: self.step_restore() if self.snapshots else None),
            (4, lambda: self.check_tiers()), (4, lambda: self.live_check()),
        ]
        pick = self.rng.choices([c for _, c in choices], weights=[w for w, _ in choices])[0]
        step = pick()
        if step is None:
            return
        self.execute(step)
        self.record_instant()

    # -------------------------------------------------------------- setup, run, verify

    def setup(self) -> str:
        from minio import Minio

        from streams.producer import create_topic

        s = self.s
        admin = Client(s)
        admin.run(f"CREATE DATABASE {self.db}")
        bucket = f"fault-{self.run_id}"
        Minio(s.minio_endpoint, s.minio_root_user, s.minio_root_password.get_secret_value(),
              secure=False).make_bucket(bucket)
        name = f"fault_{self.run_id}"
        admin.run(f'CREATE RESOURCE "{name}" PROPERTIES ("type"="s3", "s3.endpoint"="http://{s.minio_endpoint}", '
                  f'"s3.region"="us-east-1", "s3.bucket"="{bucket}", "s3.root.path"="fault/{name}", '
                  f'"s3.access_key"="{s.minio_root_user}", '
                  f'"s3.secret_key"="{s.minio_root_password.get_secret_value()}", "use_path_style"="true")')
        admin.run(f'CREATE STORAGE POLICY {name} PROPERTIES ("storage_resource"="{name}", "cooldown_ttl"="1")')
        admin.drop()
        self.client.run("CREATE TABLE main (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 3 "
                        f'PROPERTIES ("enable_time_travel" = "true", "storage_policy" = "{name}")')
        self.client.run("CREATE TABLE feed (id BIGINT, v BIGINT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2")
        topic = f"strata.ingest.{self.db}.feed"
        create_topic(topic, partitions=2)
        self.client.run(f'CREATE ROUTINE LOAD {self.db}.feed_job ON feed PROPERTIES ("format" = "json", '
                        f'"max_batch_interval" = "0.5", "max_error_number" = "1000") FROM KAFKA '
                        f'("kafka_broker_list" = "{s.kafka_bootstrap}", "kafka_topic" = "{topic}", '
                        f'"property.kafka_default_offsets" = "OFFSET_BEGINNING")')
        return topic

    def run(self) -> dict[str, Any]:
        t_start = time.monotonic()
        _log(f"seed {self.seed}, database {self.db}, {self.cfg.duration_s:.0f} s, {self.cfg.faults} faults")
        self.healthy_wait_s += self.stack.wait_healthy()
        topic = self.setup()
        producer = FeedProducer(self.s, topic)
        producer.start()
        injector = FaultInjector(self.stack, self.cfg.duration_s, self.cfg.faults, random.Random(self.rng.random()),
                                 self.cfg.down_max_s)
        injector.start()
        t_work = time.monotonic()
        try:
            # The duration is a minimum: every scheduled fault happens under the workload.
            while time.monotonic() - t_work < self.cfg.duration_s or injector.is_alive():
                self.one_step()
                if time.monotonic() - t_work > self.cfg.duration_s + 900:
                    injector.stop_event.set()
        finally:
            injector.stop_event.set()
            injector.join(timeout=600)
            producer.stop_event.set()
        workload_s = time.monotonic() - t_work
        _log(f"workload done after {workload_s:.0f} s, {self.step_no} steps; verifying")
        self.stack.up()
        self.healthy_wait_s += self.stack.wait_healthy()
        producer.join(timeout=400)
        t_verify = time.monotonic()
        feed = self.verify_feed(producer)
        main = self.verify_main()
        replay = self.verify_replay()
        verify_s = time.monotonic() - t_verify
        lost = main["rows_lost"] + feed["acked_ids_lost"]
        duplicates = feed["duplicate_rows"] + main["load_commits_extra"]
        mismatches = (main["latest_mismatch"] + main["time_travel_mismatches"] + len(self.mismatches)
                      + (0 if replay["checksum_equal"] else 1))
        return {
            "bench": "fault_harness",
            "goal": "kill -9 of worker, sql, kafka and minio under a mixed workload: 0 acknowledged rows lost, "
                    "0 duplicates, 0 mismatches (latest, every recorded FOR TIME AS OF, replay checksum)",
            "goal_met": bool(lost == 0 and duplicates == 0 and mismatches == 0 and not self.gave_up
                             and sum(injector.by_kind.values()) >= self.cfg.faults and not producer.fatal),
            "rows_lost": lost, "duplicates": duplicates, "mismatches": mismatches,
            "operations": {"total": sum(self.ops.values()), "by_kind": dict(self.ops),
                           "landed": dict(self.landed), "ambiguous": dict(self.ambiguous),
                           "retried": dict(self.retries), "fences": self.fences, "gave_up": self.gave_up[:10],
                           "live_checks": self.live_checks},
            "faults": {"injected": sum(injector.by_kind.values()), "by_kind": dict(injector.by_kind),
                       "restarts_s": [f["up_s"] for f in injector.log], "log": injector.log,
                       "extra_infra_up_runs": len(self.stack.up_runs) - len(injector.log),
                       "infra_up_failures": self.stack.up_failures[:3]},
            "main": main, "feed": feed, "replay": replay,
            "mismatch_details": self.mismatches[:20],
            "errors_seen": dict(self.errors.most_common(15)),
            "time": {"total_s": round(time.monotonic() - t_start, 1), "workload_s": round(workload_s, 1),
                     "verify_s": round(verify_s, 1), "waiting_for_health_s": round(self.healthy_wait_s, 1)},
            "sizes": {"duration_s": self.cfg.duration_s, "faults": self.cfg.faults, "keys": self.cfg.keys,
                      "seed": self.seed, "database": self.db, "steps": self.step_no},
        }

    def verify_feed(self, producer: FeedProducer) -> dict[str, Any]:
        acked = producer.acked
        expected = len(acked)
        deadline = time.monotonic() + 300
        count, last, stable_since = 0, -1, time.monotonic()
        paused: list[str] = []
        while time.monotonic() < deadline:
            count = int(self.read("SELECT count(*) FROM feed")[1][0][0])
            if count != last:
                last, stable_since = count, time.monotonic()
            if count >= expected and time.monotonic() - stable_since > 3:
                break
            if time.monotonic() - stable_since > 10:
                names, rows = self.read("SHOW ROUTINE LOAD FOR feed_job")
                job = dict(zip(names, rows[0], strict=True))
                if job.get("State") == "PAUSED":
                    paused.append(str(job.get("OtherMsg") or job.get("ReasonOfStateChanged"))[:300])
                    _log("routine load job PAUSED:", paused[-1], "— resuming")
                    self.read("RESUME ROUTINE LOAD FOR feed_job")
                stable_since = time.monotonic()
            time.sleep(0.5)
        counts = dict(self.read("SELECT id, count(*) FROM feed GROUP BY id")[1])
        present = {int(k) for k in counts}
        names, rows = self.read("SHOW ROUTINE LOAD FOR feed_job")
        job = dict(zip(names, rows[0], strict=True))
        return {
            "produced": producer.sent, "acked": expected, "delivery_failed": len(producer.failed),
            "rows": sum(int(c) for c in counts.values()), "distinct_ids": len(present),
            "acked_ids_lost": len(acked - present),
            "lost_sample": sorted(acked - present)[:10],
            "duplicate_rows": sum(int(c) - 1 for c in counts.values() if int(c) > 1),
            "duplicate_sample": sorted(int(k) for k, c in counts.items() if int(c) > 1)[:10],
            "never_sent_ids": len({i for i in present if i >= producer.sent or i < 0}),
            "unconfirmed_ids_loaded": len(present - acked),
            "job_state": job.get("State"), "job_paused_during_run": paused,
            "producer_errors": producer.fatal[:3],
        }

    def verify_main(self) -> dict[str, Any]:
        names, state = self.state()
        oracle_keys = set(self.oracle.rows)
        got_rows = _sorted_rows([tuple(r[n] for n in names) for r in state.values()])
        latest_mismatch = int(names != self.oracle.names or got_rows != self.oracle.result())
        rows_lost = len(oracle_keys - set(state))
        extra = len(set(state) - oracle_keys)
        if latest_mismatch:
            self.mismatches.append(f"latest: columns {names} vs {self.oracle.names}; lost keys "
                                   f"{sorted(oracle_keys - set(state))[:10]}, "
                                   f"extra {sorted(set(state) - oracle_keys)[:10]}")
        bad_instants = []
        for ms, (cols, rows) in sorted(self.history.items()):
            got_names, got = self.read(f"SELECT * FROM main FOR TIME AS OF '{_instant(ms)}'")
            if got_names != cols or _sorted_rows(got) != rows:
                bad_instants.append(_instant(ms))
        if bad_instants:
            self.mismatches.append(f"FOR TIME AS OF differs at {len(bad_instants)} instants, first "
                                   f"{bad_instants[:5]}")
        commits = self.read("SHOW TIME TRAVEL ON main")[1]
        kinds = Counter(str(r[6]) for r in commits)
        load_commits = kinds.get("load", 0)
        tiers = dict(self.read(f"SELECT TIER, count(*) FROM information_schema.rowsets WHERE TABLE_SCHEMA = "
                               f"'{self.db}' AND TABLE_NAME = 'main' GROUP BY TIER")[1])
        return {
            "rows": len(state), "columns": names, "rows_lost": rows_lost, "rows_extra": extra,
            "latest_mismatch": latest_mismatch, "instants_checked": len(self.history),
            "time_travel_mismatches": len(bad_instants), "instant_conflicts": self.instant_conflicts,
            "commits_by_kind": dict(kinds), "loads_landed": self.loads_landed,
            "load_commits_extra": max(0, load_commits - self.loads_landed),
            "load_commits_missing": max(0, self.loads_landed - load_commits),
            "rowsets_by_tier": {str(k): int(v) for k, v in tiers.items()},
            "remote_rowsets_seen_during_run": self.remote_rowsets_seen,
        }

    def sequencer_states(self) -> list[Any]:
        """The sequencers' projections on this machine (one per worker that ever led)."""
        state = self.s.state_dir
        return [p for p in [state / "sequencer", *sorted(state.glob("worker-*/sequencer"))] if p.is_dir()]

    def verify_replay(self) -> dict[str, Any]:
        """The SQL server's projection against a fresh replay of strata.events, at equal offsets."""
        from projections.replay import checksum, replay

        into = self.s.state_dir / f"replay-fault-{self.run_id}"
        live_path = self.s.state_dir / f"sql-{self.s.sql_port}"
        out: dict[str, Any] = {"checksum_equal": False, "attempts": 0}
        try:
            for attempt in range(8):
                out["attempts"] = attempt + 1
                self.read("SELECT count(*) FROM main")  # the replica catches up with the log's end
                before, before_offsets = checksum(live_path)
                result = replay(self.s, into)
                replayed, replayed_offsets = checksum(into)
                after, after_offsets = checksum(live_path)
                out.update({"events": result.events, "replay_s": round(result.seconds, 2),
                            "live_checksum": after, "replay_checksum": replayed,
                            "decode_errors": result.decode_errors})
                if replayed_offsets in (before_offsets, after_offsets):
                    live = before if replayed_offsets == before_offsets else after
                    out["checksum_equal"] = live == replayed
                    out["live_checksum"] = live
                    for sequencer in self.sequencer_states():
                        seq_sum, seq_offsets = checksum(sequencer)
                        if seq_offsets == replayed_offsets:
                            out["sequencer_checksum_equal"] = seq_sum == replayed
                    return out
                time.sleep(2)  # agents still writing (cooldowns, compactions): try again
            out["note"] = "the log kept moving; offsets never matched"
            return out
        finally:
            shutil.rmtree(into, ignore_errors=True)

    def cleanup(self) -> None:
        try:
            self.client.run("STOP ROUTINE LOAD FOR feed_job")
        except (pymysql.MySQLError, OSError) as exc:
            _log("cleanup:", exc)


def run_harness(s: Settings, cfg: HarnessConfig, *, keep_data: bool = False,
                stack: Stack | None = None) -> dict[str, Any]:
    """One run against the stack `s` (which must be up; `stack` kills and restarts its processes,
    the local stack's by default); returns the result (the JSON object)."""
    harness = Harness(s, cfg, stack)
    try:
        return harness.run()
    finally:
        if not keep_data:
            harness.cleanup()
        harness.client.drop()


def main(argv: list[str] | None = None) -> int:
    from bench.stack import add_stack_args, bench_stack, emit, machine

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration-s", type=float, default=600.0, help="minimum seconds of workload under faults")
    ap.add_argument("--faults", type=int, default=30, help="processes to kill -9 (worker, sql, kafka, minio in turn)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keys", type=int, default=40, help="distinct keys of the Unique Key table")
    ap.add_argument("--down-max-s", type=float, default=4.0, help="longest pause between a kill and infra/up")
    add_stack_args(ap)
    args = ap.parse_args(argv)
    cfg = HarnessConfig(duration_s=args.duration_s, faults=args.faults, seed=args.seed, keys=args.keys,
                        down_max_s=args.down_max_s)
    with bench_stack(args.keep_stack) as s:
        result = run_harness(s, cfg)
        Stack(s).wait_healthy()
    emit({**result, "machine": machine()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
