"""The Kafka broker: install its jars, write its config, format its storage, run it.

``python -m infra.kafka_node install|prepare|run``. ``run`` replaces itself (exec) with the JVM,
so the pid a supervisor sees is the broker's.
"""

from __future__ import annotations

import base64
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from infra.layout import INFRA_DIR, Layout
from infra.toolchain import StrataError, check_component_ports, find_tool, java_major
from schemas.config import Settings, settings

POM = INFRA_DIR / "kafka" / "pom.xml"
SEVEN_DAYS_MS = 7 * 24 * 3600 * 1000


def is_installed(lay: Layout) -> bool:
    stamp = lay.kafka_stamp
    return (
        stamp.is_file()
        and stamp.read_text().strip() == lay.s.kafka_version
        and any(lay.kafka_libs.glob(f"kafka_2.13-{lay.s.kafka_version}.jar"))
    )


def install(lay: Layout, quiet: bool = False) -> bool:
    """Copies kafka_2.13 and its dependencies into opt/kafka-<ver>/libs. False when already there."""
    if is_installed(lay):
        return False
    mvn = find_tool("mvn")
    java_major()
    lay.opt_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".kafka-{lay.s.kafka_version}-", dir=lay.opt_dir))
    try:
        libs = tmp / "libs"
        cmd = [mvn, "-q", "-B", "-f", str(POM), "dependency:copy-dependencies",
               f"-Dkafka.version={lay.s.kafka_version}", f"-Dstrata.libs={libs}"]
        if not quiet:
            print(f"strata: fetching Kafka {lay.s.kafka_version} jars with Maven …", flush=True)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or not any(libs.glob("kafka_2.13-*.jar")):
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
            raise StrataError(f"mvn could not fetch Kafka {lay.s.kafka_version} jars:\n{tail}")
        (tmp / "INSTALLED").write_text(lay.s.kafka_version + "\n")
        if lay.kafka_dist.exists():
            shutil.rmtree(lay.kafka_dist)
        tmp.rename(lay.kafka_dist)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(INFRA_DIR / "kafka" / "target", ignore_errors=True)
    return True


def new_cluster_id() -> str:
    """A Kafka Uuid in its string form (url-safe base64 of 16 bytes), as StorageTool random-uuid makes."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


def voters(s: Settings) -> str:
    """The KRaft controller quorum (controller.quorum.voters): the configured one, else this node alone."""
    return s.kafka_voters or f"{s.kafka_node_id}@{s.kafka_host}:{s.kafka_controller_port}"


def voter_ids(text: str) -> list[int]:
    """The node ids of a voters string ("1@h:p,2@h:p"); StrataError when it is malformed."""
    ids: list[int] = []
    for entry in (e.strip() for e in text.split(",") if e.strip()):
        node, sep, address = entry.partition("@")
        host, colon, port = address.rpartition(":")
        if not (sep and colon and host and node.isdigit() and port.isdigit()):
            raise StrataError(f"STRATA_KAFKA_VOTERS: {entry!r} is not <node id>@<host>:<port>")
        ids.append(int(node))
    if not ids or len(set(ids)) != len(ids):
        raise StrataError(f"STRATA_KAFKA_VOTERS: {text!r} names no node or one node twice")
    return ids


def shared_cluster_id(lay: Layout) -> str:
    """The home's cluster id (home/kafka/cluster.id), made by whichever node gets there first.

    Every node of one cluster must format its storage with the same id, and the nodes of a local
    cluster may prepare at the same moment: the file appears atomically (link of a complete
    temporary file), so a node never reads a half-written id nor replaces another's.
    """
    path = lay.kafka_cluster_id
    if not path.is_file():
        _create_once(path, new_cluster_id(), 0o644)
    return path.read_text().strip()


def _create_once(path: Path, text: str, mode: int) -> None:
    """Makes `path` hold `text` unless a concurrent caller made it first: a complete temporary file
    (created with `mode` from the first byte) is linked into place, so a reader never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "w") as fh:
        fh.write(text + "\n")
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass  # another node won
    finally:
        tmp.unlink(missing_ok=True)


def ensure_kafka_password(s: Settings) -> str:
    """The Strata principal's password: read from the home's password file, made there (mode 0600)
    on first use. Like `shared_cluster_id`, the file appears atomically: the nodes of a local
    cluster prepare at once and must all get the same password."""
    path = s.kafka_password_file
    if not path.is_file():
        # url-safe: nothing that needs quoting in a JAAS line or in --add-scram's [name=…,password=…]
        _create_once(path, secrets.token_urlsafe(32), 0o600)
    password = s.local_kafka_password()
    if password is None or not all(c.isalnum() or c in "-_" for c in password):
        raise StrataError(f"{path}: holds no usable password (letters, digits, - and _ only); "
                          "delete it and the Kafka storage to start over")
    return password


def _security(s: Settings, password: str) -> dict[str, str]:
    """Authentication and authorization of the local broker (see README, Security).

    Three listeners: PLAINTEXT for outside clients of user topics (anonymous); the Strata listener
    (SASL_PLAINTEXT, SCRAM-SHA-512), which Strata's processes and the brokers among themselves use;
    and the controller listener, authenticated too (SASL PLAIN: SCRAM credentials live in the
    metadata log the controllers serve, so they cannot authenticate the controllers themselves).
    Were the controller listener plain, its ANONYMOUS principal would have to be a super user, and
    ANONYMOUS is also whoever connects to the plain listener. User:strata is the only super user;
    StandardAuthorizer keeps ACLs in the metadata log, and a resource without any ACL stays open
    (user topics), while Strata's resources get ACLs at start (infra/kafka_acl.py).
    """
    user = s.kafka_sasl_listener_user
    return {
        "inter.broker.listener.name": "SASL_PLAINTEXT",
        "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config":
            f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{user}" '
            f'password="{password}";',
        "sasl.mechanism.controller.protocol": "PLAIN",
        "listener.name.controller.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.controller.plain.sasl.jaas.config":
            "org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="{user}" password="{password}" user_{user}="{password}";',
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": f"User:{user}",
        "allow.everyone.if.no.acl.found": "true",
    }


def server_properties(s: Settings, lay: Layout) -> str:
    h = s.kafka_host
    quorum = voters(s)
    if s.kafka_node_id not in voter_ids(quorum):  # every node is broker and controller
        raise StrataError(f"STRATA_KAFKA_VOTERS: {quorum!r} does not name this node ({s.kafka_node_id})")
    if s.kafka_min_insync_replicas > s.kafka_replication_factor:
        raise StrataError(f"STRATA_KAFKA_MIN_INSYNC_REPLICAS={s.kafka_min_insync_replicas} exceeds "
                          f"STRATA_KAFKA_REPLICATION_FACTOR={s.kafka_replication_factor}: acks=all could never succeed")
    rf, isr = str(s.kafka_replication_factor), str(s.kafka_min_insync_replicas)
    clients = f"PLAINTEXT://{h}:{s.kafka_port},SASL_PLAINTEXT://{h}:{s.kafka_sasl_listener_port}"
    props = {
        "node.id": str(s.kafka_node_id),
        "process.roles": "broker,controller",
        "listeners": f"{clients},CONTROLLER://{h}:{s.kafka_controller_port}",
        "advertised.listeners": clients,
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
        "controller.listener.names": "CONTROLLER",
        **_security(s, ensure_kafka_password(s)),
        "controller.quorum.voters": quorum,
        "log.dirs": str(lay.kafka_data),
        "num.partitions": str(s.topic_partitions),
        # Strata's topics are created with an explicit factor (infra/topics.py); these cover Kafka's
        # own: the consumer offsets and the transaction state the sequencer's commits depend on.
        "default.replication.factor": rf,
        "min.insync.replicas": isr,
        "offsets.topic.replication.factor": rf,
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.replication.factor": rf,
        "transaction.state.log.min.isr": isr,
        "transaction.state.log.num.partitions": "1",
        "group.initial.rebalance.delay.ms": "0",
        "auto.create.topics.enable": "false",
        "log.retention.hours": "168",
        "log.segment.bytes": str(256 * 1024 * 1024),
        "num.recovery.threads.per.data.dir": "2",
        "unclean.leader.election.enable": "false",
        "delete.topic.enable": "true",
        # After a kill -9 the controller refuses the restarted broker's registration until the old
        # incarnation's session expires (default 9 s); local nodes (one, or a few on loopback) can
        # afford a short one.
        "broker.heartbeat.interval.ms": "1000",
        "broker.session.timeout.ms": "3000",
    }
    head = "# Generated by infra/kafka_node.py from schemas/config.py — edits are overwritten.\n"
    return head + "".join(f"{k}={v}\n" for k, v in props.items())


def java_base(s: Settings, lay: Layout) -> list[str]:
    return [
        find_tool("java"),
        f"-Xmx{s.kafka_heap}", f"-Xms{s.kafka_heap}",
        "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:+ExitOnOutOfMemoryError",
        "-Djava.awt.headless=true",
        f"-Dkafka.logs.dir={lay.kafka_logs}",
        f"-Dlog4j.configuration=file:{lay.kafka_log4j}",
        "-cp", f"{lay.kafka_libs}/*",
    ]


def _write_private(path: Path, text: str) -> None:
    """Writes `text` to `path`, readable by its owner only from the first byte on."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an older file may have been made with wider permissions
    with os.fdopen(fd, "w") as fh:
        fh.write(text)


def prepare(s: Settings, lay: Layout, quiet: bool = False) -> None:
    """Writes server.properties and formats storage on first use (kept: cluster id, meta.properties).

    The format stores the Strata principal's SCRAM credential in the cluster's bootstrap metadata, so
    the brokers can authenticate to each other from their first start. A storage formatted before the
    Strata listener existed has none: infra/kafka_acl.py adds it through the admin API at start.
    """
    if not is_installed(lay):
        install(lay, quiet=quiet)
    for d in (lay.kafka_home, lay.kafka_data, lay.kafka_logs):
        d.mkdir(parents=True, exist_ok=True)
    _write_private(lay.kafka_config, server_properties(s, lay))  # it holds the Strata principal's password
    cluster_id = shared_cluster_id(lay)
    if (lay.kafka_data / "meta.properties").is_file():
        return
    password = ensure_kafka_password(s)
    cmd = java_base(s, lay)
    # The format tool needs no big heap.
    cmd = [c for c in cmd if not c.startswith(("-Xmx", "-Xms"))] + ["-Xmx256m"]
    # The credential goes in an argument file (java @file, mode 0600) rather than on the command
    # line, which any local user can read in /proc while the tool runs.
    argfile = lay.kafka_home / f".format-args.{os.getpid()}"
    _write_private(argfile, "\n".join([
        "kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", str(lay.kafka_config), "--ignore-formatted",
        "--add-scram", f"SCRAM-SHA-512=[name={s.kafka_sasl_listener_user},password={password}]"]) + "\n")
    try:
        proc = subprocess.run([*cmd, f"@{argfile}"], capture_output=True, text=True)
    finally:
        argfile.unlink(missing_ok=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-10:]).replace(password, "******")
        raise StrataError(f"kafka storage format failed in {lay.kafka_data}:\n{tail}")
    if not quiet:
        print(f"strata: formatted Kafka storage in {lay.kafka_data} (cluster {cluster_id})", flush=True)


def run(s: Settings, lay: Layout) -> None:
    """Checks ports, prepares, then execs the broker (never returns)."""
    check_component_ports(s, ["kafka"])
    prepare(s, lay)
    cmd = java_base(s, lay) + ["kafka.Kafka", str(lay.kafka_config)]
    sys.stdout.flush()
    os.execv(cmd[0], cmd)


def main(argv: list[str] | None = None) -> int:
    from infra.cli_util import run_action

    def lay() -> Layout:
        return Layout(settings())

    return run_action(argv, {"install": lambda: install(lay()), "prepare": lambda: prepare(settings(), lay()),
                             "run": lambda: run(settings(), lay())})


if __name__ == "__main__":
    sys.exit(main())
