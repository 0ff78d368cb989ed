"""The scale-out rehearsal's cluster on one machine: three Kafka brokers on loopback (replication
factor 3, min.insync.replicas 2, one KRaft quorum), MinIO, two worker processes sharing the
partitions (STRATA_WORKER_INSTANCE a / b) and two SQL servers, all under one STRATA_HOME.

    with ScaleOutCluster(Path("/tmp/rehearsal"), base_port=23000) as cluster:   # start() … stop()
        s = cluster.settings_for("sql-a")      # what a client of sql-a uses
        cluster.kill("kafka-2")                # kill -9, waits for the exit
        cluster.restart("kafka-2")             # starts it again, waits until healthy
        assert cluster.unhealthy() == []

Every process is `.venv/bin/python -m <module>` as in the Procfile (the brokers via
`infra.kafka_node run`, which execs the JVM, so a pid is the broker's), in its own session, its
output in home/logs/<name>.log. Ports, from base_port:

    kafka-N   base+10(N-1) (client), +1 (controller), +2 (Strata)  N = 1, 2, 3
    minio     base+30, console base+31
    worker-a  base+40              worker-b  base+41
    sql-a     base+50, http base+51     sql-b   base+60, http base+61

``python -m bench.scale_out --up-only [--home H] [--base-port P]`` starts everything, kills
kafka-2, shows that an acks=all write to an RF 3 / min.insync 2 scratch topic still succeeds,
restarts kafka-2, waits for the ISR to be whole again, stops everything and prints one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from bench.fault_harness import Stack
from infra import kafka_node, minio_node
from infra.health import kafka_ok, minio_ok, sql_ok, worker_ok
from infra.layout import REPO_ROOT, VENV_PYTHON, Layout
from infra.testenv import TEST_OVERRIDES
from schemas.config import Settings, load_settings
from schemas.topics import COMMANDS_TOPIC, DLQ_TOPIC, EVENTS_TOPIC, LEADER_TOPIC, WORKERS_TOPIC

BROKERS = ("kafka-1", "kafka-2", "kafka-3")
WORKERS = ("worker-a", "worker-b")
SQL_SERVERS = ("sql-a", "sql-b")
NAMES = (*BROKERS, "minio", *WORKERS, *SQL_SERVERS)
REPLICATION_FACTOR = 3
MIN_INSYNC_REPLICAS = 2
INTERNAL_TOPICS = (COMMANDS_TOPIC, EVENTS_TOPIC, DLQ_TOPIC, WORKERS_TOPIC, LEADER_TOPIC)
# Inherited variables that would point a process at another stack: every process gets its own.
_PLACEMENT_KEYS = ("STRATA_CONFIG", "STRATA_HOME", "STRATA_KAFKA_BROKERS", "STRATA_KAFKA_HOST",
                   "STRATA_KAFKA_NODE_ID", "STRATA_KAFKA_VOTERS", "STRATA_WORKER_INSTANCE",
                   "STRATA_KAFKA_STRATA_LISTENERS", "STRATA_KAFKA_CLIENT_PROPERTIES", "STRATA_KAFKA_SASL_PASSWORD")


def log(*parts: object) -> None:
    print("scale-out:", *parts, file=sys.stderr, flush=True)


class ClusterError(RuntimeError):
    """A process of the cluster did not start, died, or the cluster is not as specified."""


@dataclass
class Process:
    """One process of the cluster: how to start it, and the running incarnation (if any)."""

    name: str
    kind: str  # kafka | minio | worker | sql
    module: str
    args: tuple[str, ...]
    ports: dict[str, int]
    env: dict[str, str]
    popen: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen is not None and self.popen.poll() is None else None

    @property
    def alive(self) -> bool:
        return self.pid is not None


@dataclass
class ScaleOutCluster:
    home: Path
    # Below Linux's ephemeral range (32768–60999): there, a client reconnecting to a dead broker can
    # be given the broker's own port as its local one and hold it (a self-connect, then TIME-WAIT).
    base_port: int = 23000
    kafka_heap: str = "512m"
    # Installed Kafka jars / MinIO binaries to hard-link into home/opt when missing there (saves the
    # Maven fetch and the `go install` of MinIO); the install functions run for whatever is still missing.
    seed_opt: Sequence[Path] = (REPO_ROOT / "var" / "opt",)
    processes: dict[str, Process] = field(init=False, default_factory=dict)
    # Every time a start had to wait for a port held by a client's socket (see wait_ports_free).
    port_waits: list[dict[str, Any]] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.home = Path(self.home).resolve()
        if not 1024 <= self.base_port <= 65535 - 61:
            raise ValueError(f"base_port {self.base_port}: the cluster needs base_port … base_port+61")
        b = self.base_port
        host = "127.0.0.1"
        broker_ports = {n: (b + 10 * i, b + 10 * i + 1) for i, n in enumerate(BROKERS)}
        # Outside clients (the fault harness's feed producer) use the plain listeners; Strata's
        # processes the brokers' Strata listeners (SCRAM, with the home's password).
        self.bootstrap = ",".join(f"{host}:{client}" for client, _ in broker_ports.values())
        self.strata_listeners = ",".join(f"{host}:{client + 2}" for client, _ in broker_ports.values())
        self.voters = ",".join(f"{i + 1}@{host}:{ctl}" for i, (_, ctl) in enumerate(broker_ports.values()))
        minio = {"minio_port": b + 30, "minio_console_port": b + 31}
        common = {
            "STRATA_HOME": str(self.home),
            "STRATA_KAFKA_HOST": host,
            "STRATA_KAFKA_BROKERS": self.bootstrap,
            "STRATA_KAFKA_STRATA_LISTENERS": self.strata_listeners,
            # The single-broker fields of a client point at kafka-1 (the bootstrap list wins anyway).
            "STRATA_KAFKA_PORT": str(broker_ports["kafka-1"][0]),
            "STRATA_KAFKA_CONTROLLER_PORT": str(broker_ports["kafka-1"][1]),
            "STRATA_KAFKA_SASL_LISTENER_PORT": str(broker_ports["kafka-1"][0] + 2),
            "STRATA_KAFKA_REPLICATION_FACTOR": str(REPLICATION_FACTOR),
            "STRATA_KAFKA_MIN_INSYNC_REPLICAS": str(MIN_INSYNC_REPLICAS),
            "STRATA_MINIO_PORT": str(minio["minio_port"]),
            "STRATA_MINIO_CONSOLE_PORT": str(minio["minio_console_port"]),
            # Clients of the cluster (settings_for a broker / MinIO) see sql-a and worker-a.
            "STRATA_SQL_PORT": str(b + 50), "STRATA_HTTP_PORT": str(b + 51), "STRATA_WORKER_PORT": str(b + 40),
            "STRATA_ARROW_FLIGHT_SQL_PORT": str(b + 52),
        }
        inherited = {k: v for k, v in os.environ.items()
                     if k not in _PLACEMENT_KEYS and not (k.startswith("STRATA_") and k.endswith("_PORT"))}
        base = {**{k: v for k, v in TEST_OVERRIDES.items() if k not in os.environ}, **inherited,
                "PYTHONUNBUFFERED": "1", **common}

        def add(name: str, kind: str, module: str, args: tuple[str, ...], ports: dict[str, int],
                extra: dict[str, str] | None = None) -> None:
            env = {**base, **{f"STRATA_{k.upper()}": str(v) for k, v in ports.items()}, **(extra or {})}
            self.processes[name] = Process(name, kind, module, args, ports, env)

        for i, name in enumerate(BROKERS):
            client, ctl = broker_ports[name]
            add(name, "kafka", "infra.kafka_node", ("run",),
                {"kafka_port": client, "kafka_controller_port": ctl, "kafka_sasl_listener_port": client + 2},
                {"STRATA_KAFKA_NODE_ID": str(i + 1), "STRATA_KAFKA_VOTERS": self.voters,
                 "STRATA_KAFKA_HEAP": self.kafka_heap})
        add("minio", "minio", "infra.minio_node", ("run",), minio)
        for i, name in enumerate(WORKERS):
            add(name, "worker", "streams.worker", (), {"worker_port": b + 40 + i},
                {"STRATA_WORKER_INSTANCE": name.removeprefix("worker-")})
        for i, name in enumerate(SQL_SERVERS):
            add(name, "sql", "query.start", (), {"sql_port": b + 50 + 10 * i, "http_port": b + 51 + 10 * i,
                                                  "arrow_flight_sql_port": b + 52 + 10 * i})

    # ------------------------------------------------------------ settings and health

    def settings_for(self, name: str) -> Settings:
        """The settings of process `name` (its home, ports, brokers): what a client of it uses."""
        env = self._proc(name).env
        fields: dict[str, Any] = {k.removeprefix("STRATA_").lower(): v for k, v in env.items()
                                  if k.startswith("STRATA_")}
        return load_settings(**{k: v for k, v in fields.items() if k in Settings.model_fields})

    @property
    def settings(self) -> Settings:
        """A client's settings for the whole cluster (bootstrap = the three brokers, sql-a, worker-a)."""
        return self.settings_for("kafka-1").model_copy(update={"kafka_node_id": 1, "kafka_voters": None})

    def problem(self, name: str) -> str | None:
        """None when `name` runs and answers its probe, else why not."""
        proc = self._proc(name)
        if not proc.alive:
            code = proc.popen.returncode if proc.popen is not None else None
            return "not started" if proc.popen is None else f"exited ({code})"
        s = self.settings_for(name)
        if proc.kind == "kafka":
            # This broker alone must answer, and as itself (kafka_ok would accept any of the three):
            # its plain listener for the health probe, its Strata listener for the registration.
            alone = s.model_copy(update={"kafka_brokers": None, "kafka_strata_listeners": None})
            reason = kafka_ok(alone)
            if reason is None and s.kafka_node_id not in self._broker_ids(alone):
                reason = f"node {s.kafka_node_id} not registered yet"
            return reason
        probe: Callable[[Settings], str | None] = {"minio": minio_ok, "worker": worker_ok, "sql": sql_ok}[proc.kind]
        return probe(s)

    def healthy(self, name: str) -> bool:
        return self.problem(name) is None

    def unhealthy(self) -> list[str]:
        """The processes that are not running or do not answer."""
        return [n for n in self.processes if not self.healthy(n)]

    def registered_brokers(self, timeout: float = 3.0) -> list[int]:
        """Node ids of the brokers the cluster's metadata lists now."""
        return self._broker_ids(self.settings, timeout)

    @staticmethod
    def _broker_ids(s: Settings, timeout: float = 3.0) -> list[int]:
        from infra.topics import admin_client

        try:
            return sorted(admin_client(s).list_topics(timeout=timeout).brokers)
        except Exception:  # KafkaException, or a timeout while brokers start
            return []

    # ------------------------------------------------------------ processes

    def _proc(self, name: str) -> Process:
        try:
            return self.processes[name]
        except KeyError:
            raise KeyError(f"no process {name!r} (one of {', '.join(NAMES)})") from None

    def log_file(self, name: str) -> Path:
        return self.home / "logs" / f"{name}.log"

    def spawn(self, name: str) -> int:
        """Starts `name` (not waiting for it); its pid."""
        proc = self._proc(name)
        if proc.alive:
            raise ClusterError(f"{name} already runs (pid {proc.pid})")
        self.wait_ports_free(name)
        path = self.log_file(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        argv = [str(VENV_PYTHON), "-m", proc.module, *proc.args]
        with open(path, "ab") as out:
            out.write(f"\n=== strata: starting {name} at {time.strftime('%F %T')}: {' '.join(argv)}\n".encode())
            out.flush()
            proc.popen = subprocess.Popen(argv, cwd=REPO_ROOT, env=proc.env, stdin=subprocess.DEVNULL,
                                          stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        proc.starts += 1
        return proc.popen.pid

    def wait_ports_free(self, name: str, timeout: float = 150.0) -> float:
        """Waits until no socket holds a port of `name`; seconds waited. A listener there is a conflict
        (StrataError at once). Otherwise it is a client's socket: the ports sit in Linux's ephemeral
        range (32768-60999), and a client that keeps reconnecting to a killed process's port gets it,
        now and then, as its own local port — a TCP self-connect — which then blocks the port for the
        connection's life plus TIME-WAIT (60 s)."""
        from infra.toolchain import _listening_inodes, check_ports_free, port_in_use

        def holders(ports: list[int]) -> list[str]:
            sockets = subprocess.run(["ss", "-tan"], capture_output=True, text=True).stdout.splitlines()
            return [" ".join(line.split()) for line in sockets if any(f":{p} " in line for p in ports)][:10]

        proc = self._proc(name)
        t0 = time.monotonic()
        held: list[str] = []
        while taken := [p for p in proc.ports.values() if port_in_use("127.0.0.1", p)]:
            if any(_listening_inodes(p) for p in taken):
                check_ports_free(name, [(k, "127.0.0.1", p) for k, p in proc.ports.items()])
            held = held or holders(taken)
            if time.monotonic() - t0 > timeout:
                raise ClusterError(f"{name}: port(s) {taken} still taken after {timeout:g} s:\n"
                                   + "\n".join(holders(taken)))
            time.sleep(0.5)
        if not held:
            return 0.0
        waited = round(time.monotonic() - t0, 2)
        self.port_waits.append({"name": name, "seconds": waited, "sockets": held})
        log(f"{name}: waited {waited} s for its port(s) {list(proc.ports.values())} to be free: {held}")
        return waited

    def wait_healthy(self, names: Sequence[str], timeout: float = 180.0, bind_retries: int = 3) -> dict[str, float]:
        """Blocks until every one of `names` is healthy; seconds each took. ClusterError on a death or timeout.

        A process that died because a port of its was taken (a client's self-connect, see
        wait_ports_free: peers connect to a broker's address before it listens) is started again, up to
        `bind_retries` times; each retry is recorded in `port_waits`.
        """
        t0 = time.monotonic()
        deadline = t0 + timeout
        pending = list(names)
        took: dict[str, float] = {}
        reasons: dict[str, str | None] = {}
        retries = dict.fromkeys(names, 0)
        while pending:
            for name in list(pending):
                reasons[name] = self.problem(name)
                if reasons[name] is None:
                    took[name] = round(time.monotonic() - t0, 2)
                    pending.remove(name)
                elif not self._proc(name).alive:
                    if retries[name] < bind_retries and "already in use" in self._tail(name, 200).lower():
                        retries[name] += 1
                        log(f"{name} could not bind its port ({reasons[name]}): starting it again")
                        self.port_waits.append({"name": name, "retry_after_bind_failure": retries[name]})
                        t = time.monotonic()
                        self.spawn(name)  # waits until the ports are free
                        deadline += time.monotonic() - t
                        continue
                    raise ClusterError(f"{name} {reasons[name]}\n--- tail of {self.log_file(name)} ---\n"
                                       + self._tail(name))
            if pending and time.monotonic() > deadline:
                name = pending[0]
                raise ClusterError(f"{', '.join(pending)} not healthy after {timeout:g} s — {name}: {reasons[name]}"
                                   f"\n--- tail of {self.log_file(name)} ---\n" + self._tail(name))
            if pending:
                time.sleep(0.3)
        return took

    def _tail(self, name: str, lines: int = 25) -> str:
        from infra.supervisor import log_tail

        return log_tail(self.log_file(name), lines)

    def kill(self, name: str, sig: int = signal.SIGKILL, timeout: float = 30.0) -> int | None:
        """Sends `sig` (kill -9 by default) to `name`'s process group and waits for the exit; the pid killed."""
        proc = self._proc(name)
        pid = proc.pid
        if pid is None or proc.popen is None:
            return None
        try:
            os.killpg(pid, sig)  # its own session: the group is the process and what it started
        except ProcessLookupError:
            pass
        try:
            proc.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            if sig == signal.SIGKILL:
                raise ClusterError(f"{name} (pid {pid}) survived SIGKILL for {timeout:g} s") from None
            raise
        return pid

    def restart(self, name: str, timeout: float = 180.0) -> float:
        """Kills `name` if it runs, starts it again and waits until healthy; seconds to healthy."""
        self.kill(name)
        t0 = time.monotonic()
        self.spawn(name)
        self.wait_healthy([name], timeout)
        return round(time.monotonic() - t0, 2)

    # ------------------------------------------------------------ whole cluster

    def install(self) -> dict[str, float]:
        """Seeds home/opt, installs what is still missing, prepares the shared directories."""
        lay = Layout(self.settings)
        timings: dict[str, float] = {}
        for src in self.seed_opt:
            for dist in (lay.kafka_dist, lay.minio_dist):
                if (Path(src) / dist.name).is_dir() and not dist.exists():
                    dist.parent.mkdir(parents=True, exist_ok=True)
                    try:
                        shutil.copytree(Path(src) / dist.name, dist, copy_function=os.link)
                    except OSError:
                        shutil.rmtree(dist, ignore_errors=True)
                        shutil.copytree(Path(src) / dist.name, dist)
                    log(f"seeded {dist} from {src}")
        for what, fn in (("kafka_install_s", kafka_node.install), ("minio_install_s", minio_node.install)):
            t = time.monotonic()
            if fn(lay, quiet=True):
                timings[what] = round(time.monotonic() - t, 2)
        s = self.settings
        for d in (s.state_dir, s.ssd_dir, s.hdd_dir, self.home / "logs"):
            d.mkdir(parents=True, exist_ok=True)
        kafka_node.shared_cluster_id(lay)  # before the nodes race to format their storage
        return timings

    def start(self, timeout: float = 240.0) -> dict[str, Any]:
        """Brings the whole cluster up, in waves (brokers, topics, MinIO, then the apps); seconds per step."""
        t0 = time.monotonic()
        timings = self.start_infra(timeout)
        timings.update(self.start_apps(timeout))
        timings["total_s"] = round(time.monotonic() - t0, 2)
        return timings

    def start_infra(self, timeout: float = 240.0) -> dict[str, Any]:
        """Installs, starts the three brokers (until all are registered), creates the topics, starts MinIO."""
        from infra.toolchain import _listening_inodes, check_ports_free

        timings: dict[str, Any] = self.install()
        for proc in self.processes.values():  # every listener in the way before starting anything
            check_ports_free(proc.name, [(k, "127.0.0.1", p) for k, p in proc.ports.items() if _listening_inodes(p)])

        t = time.monotonic()
        for name in BROKERS:
            self.spawn(name)
        timings["brokers_healthy_s"] = self.wait_healthy(BROKERS, timeout)
        while self.registered_brokers() != [1, 2, 3]:
            if time.monotonic() - t > timeout:
                raise ClusterError(f"the cluster lists brokers {self.registered_brokers()}, want [1, 2, 3]")
            time.sleep(0.3)
        timings["brokers_registered_s"] = round(time.monotonic() - t, 2)

        t = time.monotonic()
        timings["topic_actions"] = self.ensure_topics()
        timings["topics_s"] = round(time.monotonic() - t, 2)

        t = time.monotonic()
        self.spawn("minio")
        self.wait_healthy(["minio"], timeout)
        timings["minio_s"] = round(time.monotonic() - t, 2)
        return timings

    def start_apps(self, timeout: float = 240.0) -> dict[str, Any]:
        """Starts the workers and the SQL servers and waits until each answers."""
        t = time.monotonic()
        apps = (*WORKERS, *SQL_SERVERS)
        for name in apps:
            if not self._proc(name).alive:
                self.spawn(name)
        healthy = self.wait_healthy(apps, timeout)
        return {"apps_healthy_s": healthy, "apps_s": round(time.monotonic() - t, 2)}

    def ensure_topics(self, timeout: float = 60.0) -> list[str]:
        """Secures the brokers (credential, ACLs), creates Strata's topics with RF 3 / min.insync 2 and
        checks that is what the cluster has."""
        from infra.kafka_acl import secure
        from infra.topics import ensure_and_check

        actions = secure(self.settings)
        more, problems = ensure_and_check(self.settings, timeout)
        actions += more
        if problems:
            raise ClusterError("topics are not as specified: " + "; ".join(problems))
        for name, desc in self.describe_topics().items():
            rfs = {len(p["replicas"]) for p in desc["partitions"]}
            if rfs != {REPLICATION_FACTOR} or desc["min.insync.replicas"] != str(MIN_INSYNC_REPLICAS):
                raise ClusterError(f"{name}: replication {sorted(rfs)}, min.insync.replicas "
                                   f"{desc['min.insync.replicas']}; want {REPLICATION_FACTOR} / {MIN_INSYNC_REPLICAS}")
        return actions

    def describe_topics(self, topics: Sequence[str] = INTERNAL_TOPICS, timeout: float = 10.0) -> dict[str, Any]:
        """Per topic: min.insync.replicas, and per partition its leader, replicas and ISR."""
        from confluent_kafka.admin import ConfigResource, ResourceType

        from infra.topics import admin_client

        admin = admin_client(self.settings)
        md = admin.list_topics(timeout=timeout)
        out: dict[str, Any] = {}
        for name in topics:
            t = md.topics.get(name)
            if t is None or t.error is not None:
                out[name] = {"error": str(t.error) if t is not None else "missing", "partitions": [],
                             "min.insync.replicas": None}
                continue
            parts = sorted(t.partitions.values(), key=lambda p: p.id)
            out[name] = {"partitions": [{"partition": p.id, "leader": p.leader, "replicas": list(p.replicas),
                                         "isr": list(p.isrs)} for p in parts]}
        present = [n for n in topics if "error" not in out[n]]
        if present:
            futures = admin.describe_configs([ConfigResource(ResourceType.TOPIC, n) for n in present],
                                             request_timeout=timeout)
            for res, fut in futures.items():
                out[res.name]["min.insync.replicas"] = fut.result(timeout=timeout)["min.insync.replicas"].value
        return out

    def wait_isr(self, size: int, topics: Sequence[str] = INTERNAL_TOPICS, timeout: float = 120.0) -> float:
        """Waits until every partition of `topics` has `size` in-sync replicas; seconds it took."""
        t0 = time.monotonic()
        while True:
            try:
                desc = self.describe_topics(topics)
                if all(len(p["isr"]) == size for d in desc.values() for p in d["partitions"]) and all(
                        d["partitions"] for d in desc.values()):
                    return round(time.monotonic() - t0, 2)
            except Exception:  # a broker restarting: ask again
                pass
            if time.monotonic() - t0 > timeout:
                raise ClusterError(f"ISR of {', '.join(topics)} not {size} after {timeout:g} s")
            time.sleep(0.5)

    def stop(self, timeout: float = 20.0) -> dict[str, str]:
        """SIGTERM to the apps, then MinIO, then the brokers; SIGKILL what outlives `timeout`. How each ended."""
        ended: dict[str, str] = {}
        # The brokers together: one stopped after the others has no controller quorum left and waits
        # for one (its controlled shutdown) until killed.
        for wave in ((*SQL_SERVERS, *WORKERS), ("minio",), BROKERS):
            running = [n for n in wave if self._proc(n).alive]
            for name in running:
                try:
                    os.killpg(self._proc(name).pid or 0, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + timeout
            for name in running:
                popen = self._proc(name).popen
                assert popen is not None
                try:
                    popen.wait(timeout=max(0.1, deadline - time.monotonic()))
                    ended[name] = f"exited ({popen.returncode})"
                except subprocess.TimeoutExpired:
                    self.kill(name)
                    ended[name] = f"SIGKILL after {timeout:g} s"
        return ended

    def describe(self) -> dict[str, Any]:
        """The processes: pid, ports, log."""
        return {n: {"pid": p.pid, "ports": p.ports, "starts": p.starts, "log": str(self.log_file(n))}
                for n, p in self.processes.items()}

    def __enter__(self) -> ScaleOutCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


# ---------------------------------------------------------------- CLI


def _create_scratch_topic(cluster: ScaleOutCluster) -> str:
    from confluent_kafka.admin import NewTopic

    from infra.topics import admin_client

    name = f"scale-out.scratch.{uuid.uuid4().hex[:8]}"
    admin = admin_client(cluster.settings)
    new = NewTopic(name, num_partitions=3, replication_factor=REPLICATION_FACTOR,
                   config={"min.insync.replicas": str(MIN_INSYNC_REPLICAS)})
    for fut in admin.create_topics([new], request_timeout=20).values():
        fut.result(timeout=20)
    return name


def _produce(cluster: ScaleOutCluster, topic: str, n: int = 30, timeout: float = 60.0) -> dict[str, Any]:
    """`n` records with acks=all, idempotent; how many were acknowledged (and any errors)."""
    from confluent_kafka import Producer

    acked: list[tuple[int, int]] = []
    errors: list[str] = []

    def delivered(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(str(err))
        else:
            acked.append((msg.partition(), msg.offset()))

    t0 = time.monotonic()
    producer = Producer(cluster.settings.kafka_client(**{"acks": "all", "enable.idempotence": True,
                                                         "message.timeout.ms": int(timeout * 1000)}))
    for i in range(n):
        producer.produce(topic, key=str(i).encode(), value=f"rehearsal {i}".encode(), on_delivery=delivered)
    left = producer.flush(timeout + 5)
    return {"sent": n, "acked": len(acked), "errors": errors[:5], "unflushed": left,
            "partitions": sorted({p for p, _ in acked}), "seconds": round(time.monotonic() - t0, 2)}


def up_only(cluster: ScaleOutCluster) -> dict[str, Any]:
    result: dict[str, Any] = {"home": str(cluster.home), "base_port": cluster.base_port,
                              "bootstrap": cluster.bootstrap, "voters": cluster.voters}
    t0 = time.monotonic()
    try:
        log(f"starting the cluster in {cluster.home} (ports {cluster.base_port}…{cluster.base_port + 61}) …")
        t = time.monotonic()
        result["start"] = cluster.start_infra()
        try:
            result["start"].update(cluster.start_apps())
        except ClusterError as exc:  # the broker part of the rehearsal needs no app: go on, report it
            result["apps_error"] = str(exc)
        result["start"]["total_s"] = round(time.monotonic() - t, 2)
        result["processes"] = cluster.describe()
        result["topics"] = cluster.describe_topics()
        result["unhealthy_after_start"] = cluster.unhealthy()
        scratch = _create_scratch_topic(cluster)
        cluster.wait_isr(3, [scratch])
        result["scratch_topic"] = scratch

        log("killing kafka-2 …")
        t = time.monotonic()
        killed = cluster.kill("kafka-2")
        result["kill_kafka_2"] = {"pid": killed, "seconds": round(time.monotonic() - t, 2)}
        result["isr_2_after_kill_s"] = cluster.wait_isr(2, [*INTERNAL_TOPICS, scratch], timeout=60)
        result["brokers_with_kafka_2_down"] = cluster.registered_brokers()
        result["produce_with_kafka_2_down"] = _produce(cluster, scratch)
        result["topics_with_kafka_2_down"] = {scratch: cluster.describe_topics([scratch])[scratch],
                                              COMMANDS_TOPIC: cluster.describe_topics([COMMANDS_TOPIC])[COMMANDS_TOPIC]}
        result["unhealthy_with_kafka_2_down"] = cluster.unhealthy()

        log("restarting kafka-2 …")
        result["restart_kafka_2_healthy_s"] = cluster.restart("kafka-2")
        result["isr_3_after_restart_s"] = cluster.wait_isr(3, [*INTERNAL_TOPICS, scratch])
        result["topics_after_restart"] = cluster.describe_topics([*INTERNAL_TOPICS, scratch])
        result["produce_after_restart"] = _produce(cluster, scratch)
        result["unhealthy_after_restart"] = cluster.unhealthy()
        down = result["produce_with_kafka_2_down"]
        result["ok"] = (down["acked"] == down["sent"] and not down["errors"]
                        and result["produce_after_restart"]["acked"] == result["produce_after_restart"]["sent"]
                        and not result["unhealthy_after_restart"] and "apps_error" not in result)
    except ClusterError as exc:
        result["ok"] = False
        result["error"] = str(exc)
    finally:
        if "scratch_topic" in result:
            from infra.topics import admin_client

            with contextlib.suppress(Exception):  # best effort: only a leftover topic otherwise
                for fut in admin_client(cluster.settings).delete_topics([result["scratch_topic"]]).values():
                    fut.result(timeout=20)
        log("stopping …")
        t = time.monotonic()
        result["stop"] = cluster.stop()
        result["stop_s"] = round(time.monotonic() - t, 2)
        result["port_waits"] = cluster.port_waits
        result["total_s"] = round(time.monotonic() - t0, 2)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.scale_out", description=__doc__.split("\n\n")[0])
    ap.add_argument("--up-only", action="store_true",
                    help="start the cluster, kill and restart kafka-2 around an acks=all write, stop, print JSON")
    ap.add_argument("--home", type=Path, default=REPO_ROOT / "var" / "scale-out")
    ap.add_argument("--base-port", type=int, default=23000)
    ap.add_argument("--duration-s", type=float, default=300.0, help="minimum seconds of workload under faults")
    ap.add_argument("--faults", type=int, default=10, help="kills: a broker and the leading worker in turn")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--down-max-s", type=float, default=12.0,
                    help="longest pause before a killed process is started again (past the workers' 6 s "
                         "session: the other worker takes the sequencer over)")
    ap.add_argument("--seed-opt", type=Path, action="append", default=[],
                    help="an installed opt/ directory to hard-link Kafka / MinIO from (repeatable)")
    args = ap.parse_args(argv)
    cluster = ScaleOutCluster(args.home, args.base_port, seed_opt=[*args.seed_opt, REPO_ROOT / "var" / "opt"])
    if args.up_only:
        result = up_only(cluster)
    else:
        from bench.fault_harness import HarnessConfig

        result = rehearse(cluster, HarnessConfig(duration_s=args.duration_s, faults=args.faults, seed=args.seed,
                                                 down_max_s=args.down_max_s))
    from bench.stack import emit, machine

    emit({**result, "machine": machine()})
    return 0 if result.get("ok", result.get("goal_met")) else 1



# ------------------------------------------------------------ the rehearsal: the fault harness on the cluster


class ClusterFaults(Stack):
    """The fault harness's view of the cluster (a bench.fault_harness.Stack): a "broker"
    fault kill -9s one of the three brokers, a "worker" fault the worker that leads (so the
    sequencer moves to the other); `up` starts again whatever is down. The injector waits for the
    cluster to be whole before each kill, so at most one broker and one worker are down at once."""

    kinds: tuple[str, ...] = ("broker", "worker")

    def __init__(self, cluster: ScaleOutCluster, rng: Any) -> None:
        # Not Stack.__init__: the cluster has no local stack's layout or pid files.
        import threading

        self.s = cluster.settings
        self.cluster = cluster
        self.rng = rng
        self.lock = threading.Lock()
        self.up_runs: list[float] = []
        self.up_failures: list[str] = []
        self.killed: list[str] = []
        # Per worker kill: who led while it was down (the other one, once its session expired).
        self.led_while_down: list[dict[str, str | None]] = []

    def unhealthy(self) -> list[str]:
        return self.cluster.unhealthy()

    def leader(self) -> str | None:
        import urllib.request

        for name in WORKERS:
            port = self.cluster.settings_for(name).worker_port
            with contextlib.suppress(OSError, ValueError):
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
                    if json.loads(answer.read()).get("leader"):
                        return name
        return None

    def kill(self, kind: str) -> int | None:
        name = (self.leader() or self.rng.choice(WORKERS)) if kind == "worker" else self.rng.choice(BROKERS)
        self.killed.append(name)
        return self.cluster.kill(name)

    def up(self) -> bool:
        with self.lock:
            t0 = time.monotonic()
            down = [n for n in NAMES if not self.cluster._proc(n).alive]
            for name in down:
                if name in WORKERS:
                    self.led_while_down.append({"killed": name, "leader": self.leader()})
            try:
                for name in down:
                    self.cluster.spawn(name)
                self.cluster.wait_healthy(down, 300)
                return True
            except ClusterError as exc:
                self.up_failures.append(str(exc)[-1500:])
                log("restart failed:", str(exc)[-300:])
                return False
            finally:
                self.up_runs.append(time.monotonic() - t0)


def _second_server_reads(harness: Any, s_b: Settings) -> dict[str, Any]:
    """sql-b, the SQL server the workload never wrote through, reads what the oracle holds: the
    latest state and every recorded instant."""
    from bench.fault_harness import Client, _instant, _sorted_rows

    client = Client(s_b, harness.db)
    try:
        names, rows = client.run("SELECT * FROM main")
        latest_equal = names == harness.oracle.names and _sorted_rows(rows) == harness.oracle.result()
        bad = [ms for ms, (cols, want) in sorted(harness.history.items())
               if (got := client.run(f"SELECT * FROM main FOR TIME AS OF '{_instant(ms)}'"))[0] != cols
               or _sorted_rows(got[1]) != want]
        feed = int(client.rows("SELECT count(*) FROM feed")[0][0])
    finally:
        client.drop()
    return {"latest_equal": latest_equal, "instants_checked": len(harness.history), "instants_differing": len(bad),
            "feed_rows": feed}


def rehearse(cluster: ScaleOutCluster, cfg: Any) -> dict[str, Any]:
    """The fault harness's mixed workload (bench/fault_harness.py) through sql-a while a broker and
    the leading worker are killed in turn; then sql-b is read against the oracle too."""
    import random

    from bench.fault_harness import Harness
    from schemas.config import settings

    t0 = time.monotonic()
    out: dict[str, Any] = {"bench": "scale_out",
                           "goal": "3 brokers (RF 3, min.insync 2), 2 workers, 2 SQL servers; kill -9 of a broker and "
                                   "of the leading worker in turn under the fault harness's workload: 0 lost, "
                                   "0 duplicates, 0 mismatches, on both SQL servers"}
    try:
        out["start"] = cluster.start()
        out["topics"] = {t: d.get("min.insync.replicas") for t, d in cluster.describe_topics().items()}
        s_a = cluster.settings_for("sql-a")
        # The harness's own clients (topic creation, the feed producer) read the process settings.
        for key, value in cluster._proc("sql-a").env.items():
            if key.startswith("STRATA_"):
                os.environ[key] = value
        settings.cache_clear()
        faults = ClusterFaults(cluster, random.Random(cfg.seed))
        harness = Harness(s_a, cfg, faults)
        result = harness.run()
        faults.wait_healthy()
        second = _second_server_reads(harness, cluster.settings_for("sql-b"))
        result["faults"]["processes_killed"] = dict(sorted(
            {n: faults.killed.count(n) for n in set(faults.killed)}.items()))
        result["sql_b"] = second
        result["faults"]["leader_while_worker_down"] = faults.led_while_down
        result["faults"]["sequencer_failovers"] = sum(1 for d in faults.led_while_down
                                                      if d["leader"] not in (None, d["killed"]))
        mismatches = result["mismatches"] + (0 if second["latest_equal"] else 1) + second["instants_differing"]
        out.update(result)
        out.update({"bench": "scale_out", "mismatches": mismatches,
                    "sizes": {**result["sizes"], "brokers": len(BROKERS), "workers": len(WORKERS),
                              "sql_servers": len(SQL_SERVERS), "replication_factor": REPLICATION_FACTOR,
                              "min_insync_replicas": MIN_INSYNC_REPLICAS},
                    "goal_met": bool(result["goal_met"] and mismatches == 0
                                     and second["feed_rows"] == result["feed"]["rows"]),
                    "port_waits": cluster.port_waits})
    finally:
        out["stop"] = cluster.stop()
        out["total_s"] = round(time.monotonic() - t0, 1)
    return out


if __name__ == "__main__":
    sys.exit(main())
