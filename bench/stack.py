"""The benchmarks' own throw-away stack: STRATA_HOME=var/bench, every port shifted by +30000
(or by $STRATA_BENCH_PORT_SHIFT).

Never the dev stack (9xxx), the test stack (`infra/test`, 19xxx) nor anyone else's (29xxx).

    with bench_stack(args) as s:      # starts the stack unless it already runs; stops it after
        conn = sql_connect(s)         # (unless --keep-stack, or it was already running)
        ...
    emit({...})                       # the one JSON object on stdout

Progress goes to stderr (`log`), so stdout carries only the result.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schemas.config import REPO_ROOT, Settings, load_settings

if TYPE_CHECKING:  # imported where used at run time: a benchmark that reads no projection loads none of it
    from projections.projection import Projection
    from projections.state import TableState

# STRATA_BENCH_PORT_SHIFT moves it when two engineers run benchmarks on one machine at once.
PORT_SHIFT = int(os.environ.get("STRATA_BENCH_PORT_SHIFT", "30000"))
BENCH_HOME = REPO_ROOT / "var" / "bench"
_PORTS = {
    "STRATA_KAFKA_PORT": 9092, "STRATA_KAFKA_CONTROLLER_PORT": 9093, "STRATA_KAFKA_SASL_LISTENER_PORT": 9094,
    "STRATA_MINIO_PORT": 9000,
    "STRATA_MINIO_CONSOLE_PORT": 9001, "STRATA_SQL_PORT": 9030, "STRATA_HTTP_PORT": 8030,
    "STRATA_WORKER_PORT": 6066, "STRATA_ARROW_FLIGHT_SQL_PORT": 9090,
}
# The stack runs with the defaults otherwise: a setting one bench needs is that bench's (`worker_with`).
BENCH_ENV: dict[str, str] = {"STRATA_HOME": str(BENCH_HOME),
                             **{k: str(v + PORT_SHIFT) for k, v in _PORTS.items()}}
COMPONENTS = ("kafka", "minio", "worker", "sql")


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def apply_env() -> Settings:
    """Points this process (and `schemas.config.settings()`) at the bench stack."""
    os.environ.update(BENCH_ENV)
    os.environ.pop("STRATA_CONFIG", None)
    from schemas.config import settings

    settings.cache_clear()
    s = load_settings()
    assert s.sql_port == _PORTS["STRATA_SQL_PORT"] + PORT_SHIFT and s.home == BENCH_HOME, "bench env not applied"
    return s


def add_stack_args(parser: argparse.ArgumentParser, *, env_stack: bool = False) -> None:
    """--keep-stack, and with `env_stack` --env-stack (for `bench_stack(env_stack=…)`)."""
    parser.add_argument("--keep-stack", action="store_true",
                        help="leave the bench stack running afterwards (next runs start faster)")
    if env_stack:
        parser.add_argument("--env-stack", action="store_true",
                            help="run on the healthy stack this shell's STRATA_* settings name (left as it is) "
                                 "instead of the bench stack")


def _seed_opt(s: Settings) -> None:
    """Hard-links the dev stack's installed Kafka jars / MinIO binary into var/bench/opt when the
    bench home lacks them, so a first run does not rebuild MinIO with `go install`."""
    from infra.layout import Layout

    src = Layout(Settings(home=REPO_ROOT / "var")).opt_dir
    dst = Layout(s).opt_dir
    for name in (f"kafka-{s.kafka_version}", f"minio-{s.minio_version}"):
        if (src / name).is_dir() and not (dst / name).exists():
            dst.mkdir(parents=True, exist_ok=True)
            try:
                shutil.copytree(src / name, dst / name, copy_function=os.link)
            except OSError:
                shutil.rmtree(dst / name, ignore_errors=True)
                shutil.copytree(src / name, dst / name)
            log(f"bench: seeded {dst / name} from {src / name}")


def _unhealthy(s: Settings) -> list[str]:
    from infra.health import probe

    return [f"{n}: {r}" for n in COMPONENTS if (r := probe(n, s))]


def _infra(cmd: str, *args: str, extra_env: dict[str, str] | None = None) -> None:
    env = dict(os.environ, **BENCH_ENV, **(extra_env or {}))
    proc = subprocess.run([str(REPO_ROOT / "infra" / cmd), *args], cwd=REPO_ROOT, env=env,
                          stdout=sys.stderr, stderr=sys.stderr)
    if proc.returncode != 0:
        raise SystemExit(f"bench: infra/{cmd} {' '.join(args)} failed ({proc.returncode})")


@contextlib.contextmanager
def bench_stack(keep: bool = False, *, env_stack: bool = False) -> Iterator[Settings]:
    """The bench stack's settings, the stack healthy; stopped at exit if this call started it.
    `env_stack`: the running stack this process' STRATA_* environment names instead (a developer's own,
    left as it is)."""
    if env_stack:
        s = load_settings()
        problems = _unhealthy(s)
        if problems:
            raise SystemExit("bench: the stack of this environment is not healthy: " + "; ".join(problems))
        log(f"bench: on the running stack of this environment (STRATA_HOME={s.home}, SQL {s.sql_port})")
        yield s
        return
    s = apply_env()
    started = False
    if _unhealthy(s):
        _seed_opt(s)
        log(f"bench: starting the bench stack (STRATA_HOME={s.home}, SQL {s.sql_port}) …")
        t0 = time.monotonic()
        _infra("up", "--detach")
        started = True
        log(f"bench: stack up in {time.monotonic() - t0:.1f} s")
        problems = _unhealthy(s)
        if problems:
            raise SystemExit("bench: stack not healthy after infra/up: " + "; ".join(problems))
    else:
        log("bench: bench stack already running; leaving it up afterwards")
    try:
        yield s
    finally:
        if started and not keep:
            log("bench: stopping the bench stack (pass --keep-stack to keep it)")
            _infra("down")


@contextlib.contextmanager
def worker_with(s: Settings, settings: dict[str, str]) -> Iterator[None]:
    """The stack's worker restarted with `settings` (STRATA_* variables) for the block, then restarted
    as the stack runs it. For a setting only one bench wants: bench.fast_start's checkpoint every 10 s
    made every other bench run beside a worker tarring and uploading its whole projection (485 MB after
    a fast_start --million) every 10 s while anything was written."""
    _restart_worker(s, settings)
    try:
        yield
    finally:
        _restart_worker(s, {})


def _restart_worker(s: Settings, settings: dict[str, str]) -> None:
    pid = stack_pids(s)["worker"]
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
    _infra("up", "--detach", extra_env=settings)


@contextlib.contextmanager
def more_sql_servers(s: Settings, count: int) -> Iterator[list[tuple[Settings, int]]]:
    """`count` more SQL servers on the stack for the block (README: several SQL servers): each a
    process of its own (its own GIL) with its own SQL, HTTP and Flight ports (the stack's + 10·i) and
    its own projection replica (`sql-<port>`, kept for the next run: a new one catches up from the log
    first); yields what a client of each uses and its pid, once each is healthy; stopped (SIGTERM) after."""
    from infra.health import probe

    servers: list[tuple[subprocess.Popen[bytes], Settings]] = []
    try:
        for i in range(1, count + 1):
            ports = {"sql_port": s.sql_port + 10 * i, "http_port": s.http_port + 10 * i,
                     "arrow_flight_sql_port": s.arrow_flight_sql_port + 10 * i if s.arrow_flight_sql_port else 0}
            env = {**os.environ, **{f"STRATA_{k.upper()}": str(v) for k, v in ports.items()}}
            logged = (s.home / "run" / f"sql-more-{ports['sql_port']}.log").open("ab")
            process = subprocess.Popen([sys.executable, "-m", "query.start"], cwd=REPO_ROOT, env=env,
                                       stdout=logged, stderr=subprocess.STDOUT, start_new_session=True)
            logged.close()
            servers.append((process, s.model_copy(update=ports)))
        for process, extra in servers:
            deadline = time.monotonic() + 300
            while (problem := probe("sql", extra)) is not None:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"bench: the SQL server on {extra.sql_port} did not start: {problem} "
                                     f"(see {s.home / 'run'}/sql-more-{extra.sql_port}.log)")
                time.sleep(0.5)
        log(f"bench: {count} more SQL servers on ports {[extra.sql_port for _, extra in servers]}")
        yield [(extra, process.pid) for process, extra in servers]
    finally:
        for process, _ in servers:
            process.terminate()
        for process, _ in servers:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# ------------------------------------------------------------------ SQL helpers


def sql_connect(s: Settings, db: str | None = None, *, autocommit: bool = True) -> Any:
    import pymysql

    conn = pymysql.connect(host=s.sql_host, port=s.sql_port, user="root", password="",
                           autocommit=autocommit, read_timeout=3600, write_timeout=3600)
    if db:
        # Not `connect(database=db)`: the server ignores the handshake's database (mysql-mimic sets
        # its own Session.database; StrataSession keeps SessionState.database) → "No database selected".
        with conn.cursor() as cur:
            cur.execute(f"USE {db}")
    return conn


def fresh_database(s: Settings, prefix: str) -> str:
    """A new, uniquely named database (benchmarks never share tables across runs)."""
    name = f"{prefix}_{time.strftime('%H%M%S')}_{uuid.uuid4().hex[:6]}"
    conn = sql_connect(s)
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {name}")
    conn.close()
    return name


def create_table_sql(name: str, model: str, buckets: int = 1, properties: dict[str, str] | None = None) -> str:
    """`(k BIGINT, v BIGINT)` in the given keys model ('DUPLICATE', 'UNIQUE', 'AGGREGATE'), with
    `properties` added to `"replication_num" = "1"`."""
    value = "v BIGINT SUM" if model == "AGGREGATE" else "v BIGINT"
    props = ", ".join(f'"{k}" = "{v}"' for k, v in {"replication_num": "1", **(properties or {})}.items())
    return (f"CREATE TABLE {name} (k BIGINT, {value}) ENGINE=OLAP {model} KEY(k) "
            f"DISTRIBUTED BY HASH(k) BUCKETS {buckets} PROPERTIES ({props})")


# ------------------------------------------------------------------ results


def stack_pids(s: Settings) -> dict[str, int | None]:
    """The SQL server's, the worker's and the Kafka broker's pids, from their pid files (None: not running)."""
    from infra.layout import Layout

    lay = Layout(s)
    pids: dict[str, int | None] = {}
    for name in ("sql", "worker", "kafka"):
        try:
            pids[name] = int(lay.pid_file(name).read_text().strip())
        except (OSError, ValueError):
            pids[name] = None
    return pids


def worker_gauges(s: Settings, prefix: str) -> dict[str, float]:
    """The worker's unlabelled metrics named `prefix…`, by the rest of their name."""
    with urllib.request.urlopen(f"http://127.0.0.1:{s.worker_port}/metrics", timeout=5) as resp:  # noqa: S310
        text = resp.read().decode()
    return {m.group(1): float(m.group(2))
            for m in re.finditer(rf"^{re.escape(prefix)}(\w+) ([0-9.e+-]+)$", text, re.M)}


def sequencer_gauges(s: Settings) -> dict[str, float]:
    """The worker's `strata_sequencer_*` gauges (`commands_applied`, `transactions`, …)."""
    return worker_gauges(s, "strata_sequencer_")


def process_cpu_s(pid: int | None) -> float | None:
    """User + system CPU seconds of a process (all its threads) so far; None when it is gone."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def settle(pids: Sequence[int | None], *, busy_cpu_s_per_s: float = 0.15, window_s: float = 1.0,
           limit_s: float = 180.0) -> float:
    """Waits until the processes together use under `busy_cpu_s_per_s` CPU over a `window_s` window
    (what an earlier run left to do, such as compaction of the rows it loaded, is done) or `limit_s`
    passed; returns the seconds waited. A measured run then pays for its own work only."""
    started = time.monotonic()
    while time.monotonic() - started < limit_s:
        before = [process_cpu_s(p) for p in pids]
        time.sleep(window_s)
        after = [process_cpu_s(p) for p in pids]
        used = sum(a - b for a, b in zip(after, before, strict=True) if a is not None and b is not None)
        if used / window_s < busy_cpu_s_per_s:
            break
    return time.monotonic() - started


def status_kb(pid: int | None, field: str) -> int | None:
    """A kB field of /proc/<pid>/status (VmRSS, VmHWM: the peak RSS); None when the process is gone."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def reset_peak_rss(pid: int | None) -> bool:
    """Starts VmHWM afresh (`5` into /proc/<pid>/clear_refs), so it measures what comes next; False
    when the kernel or the permissions refuse (VmHWM is then the peak since the process started)."""
    if pid is None:
        return False
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def machine() -> dict[str, Any]:
    return {"nproc": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
            "load_average": [round(load, 2) for load in os.getloadavg()],
            "note": "shared machine: another engineer's infra/test stack may run concurrently"}


def percentiles_ms(samples_s: Sequence[float]) -> dict[str, float]:
    ms = sorted(x * 1000 for x in samples_s)

    def pct(p: float) -> float:
        idx = min(len(ms) - 1, max(0, round(p / 100 * (len(ms) - 1))))
        return round(ms[idx], 3)

    return {"p50_ms": pct(50), "p99_ms": pct(99), "mean_ms": round(statistics.fmean(ms), 3),
            "min_ms": round(ms[0], 3), "max_ms": round(ms[-1], 3), "n": len(ms)}


def emit(result: dict[str, Any]) -> None:
    print(json.dumps(result, default=str), flush=True)


def sql_projection_path(s: Settings) -> Path:
    """The SQL server's projection replica (RocksDB; a read-only open works while it runs)."""
    return s.state_dir / f"sql-{s.sql_port}"


def find_table(projection: Projection, db: str, table: str) -> TableState:
    """A table the benchmark created, from a projection it opened."""
    database = projection.database_by_name(db)
    assert database is not None, f"no database {db} in the projection"
    found = projection.table_by_name(database.db_id, table)
    assert found is not None, f"no table {db}.{table} in the projection"
    return found


def table_rowset_files(s: Settings, db: str, table: str) -> list[str]:
    """Absolute paths of a table's live rowset files, read from the SQL server's projection."""
    from projections.projection import Projection
    from storage.tiers import LocalTiers

    tiers = LocalTiers.from_config(s)
    projection = Projection(sql_projection_path(s), read_only=True)
    try:
        found = find_table(projection, db, table)
        return [str(tiers.locate(r.rowset.tier, r.rowset.path))
                for r in projection.rowset_records(found.table_id) if r.stale_ts_ms is None]
    finally:
        projection.close()


def on_connections(connections: list[Any], work: Callable[[Any, int], None], what: str) -> float:
    """Runs `work(connection, i)` for every connection at once, each on a thread; closes them all and
    returns the wall time. The first failure ends the benchmark, naming `what`."""
    failures: list[BaseException] = []

    def run(i: int) -> None:
        try:
            work(connections[i], i)
        except BaseException as exc:  # noqa: BLE001 - reported once every thread is done
            failures.append(exc)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(connections))]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    for connection in connections:
        connection.close()
    if failures:
        raise SystemExit(f"bench: {what} failed: {failures[0]!r}")
    return seconds
