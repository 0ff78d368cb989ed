"""Strata's Kafka topics: create them idempotently, repair drifted configs, report problems.

``python -m infra.topics [ensure|check]``.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
    ResourceType,
)

from schemas.config import Settings, settings
from schemas.topics import COMMANDS_TOPIC, DLQ_TOPIC, EVENTS_TOPIC, LEADER_TOPIC, WORKER_SLOTS, WORKERS_TOPIC

SEVEN_DAYS_MS = str(7 * 24 * 3600 * 1000)


@dataclass(frozen=True)
class TopicSpec:
    name: str
    config: Mapping[str, str] = field(default_factory=dict)
    # A fixed partition count; None: settings.topic_partitions.
    partitions: int | None = None

    def want_partitions(self, s: Settings) -> int:
        return self.partitions or s.topic_partitions


def topic_specs(s: Settings) -> tuple[TopicSpec, ...]:
    """Strata's topics as `s` wants them (replication and min.insync.replicas come from the settings)."""
    isr = str(s.kafka_min_insync_replicas)
    return (
        TopicSpec(COMMANDS_TOPIC, {"retention.ms": SEVEN_DAYS_MS, "min.insync.replicas": isr}),
        TopicSpec(EVENTS_TOPIC, {"retention.ms": "-1", "min.insync.replicas": isr}),
        TopicSpec(DLQ_TOPIC, {"retention.ms": SEVEN_DAYS_MS, "min.insync.replicas": isr}),
        # The worker slots: a fixed count however many partitions the data topics have.
        TopicSpec(WORKERS_TOPIC, {"retention.ms": SEVEN_DAYS_MS, "min.insync.replicas": isr},
                  partitions=WORKER_SLOTS),
        # The leader's lease: one partition, so exactly one worker holds it.
        TopicSpec(LEADER_TOPIC, {"retention.ms": SEVEN_DAYS_MS, "min.insync.replicas": isr}, partitions=1),
    )

_quiet = logging.getLogger("strata.infra.kafka-admin")
_quiet.addHandler(logging.NullHandler())
_quiet.propagate = False


def admin_client(s: Settings | None = None, *, anonymous: bool = False, **extra: Any) -> AdminClient:
    """An AdminClient that keeps librdkafka's connection chatter out of the terminal: Strata's own,
    or (`anonymous`) an outside client's on the local broker's plain listener."""
    s = s or settings()
    conf: dict[str, Any] = {
        **({"bootstrap.servers": f"{s.kafka_host}:{s.kafka_port}"} if anonymous else s.kafka_client()),
        "socket.timeout.ms": 5000,
        "log.connection.close": False,
        "error_cb": lambda _err: None,
        "logger": _quiet,
    }
    conf.update(extra)
    return AdminClient(conf)


def _topic_configs(admin: AdminClient, names: list[str], timeout: float) -> dict[str, dict[str, str]]:
    resources = [ConfigResource(ResourceType.TOPIC, n) for n in names]
    out: dict[str, dict[str, str]] = {}
    for res, fut in admin.describe_configs(resources, request_timeout=timeout).items():
        entries = fut.result(timeout=timeout)
        out[res.name] = {k: v.value for k, v in entries.items() if v.value is not None}
    return out


def _problems(admin: AdminClient, s: Settings, timeout: float) -> tuple[list[str], dict[str, Any]]:
    """(problems, facts) where facts says per topic what is missing or different."""
    md = admin.list_topics(timeout=timeout)
    specs = topic_specs(s)
    rf = s.kafka_replication_factor
    problems: list[str] = []
    facts: dict[str, Any] = {"missing": [], "few_partitions": {}, "configs": {}}
    present = [spec for spec in specs if spec.name in md.topics and md.topics[spec.name].error is None]
    for spec in specs:
        if spec not in present:
            problems.append(f"{spec.name}: missing")
            facts["missing"].append(spec.name)
            continue
        parts = md.topics[spec.name].partitions
        want = spec.want_partitions(s)
        if len(parts) != want:
            problems.append(f"{spec.name}: {len(parts)} partitions, want {want}")
            if len(parts) < want:
                facts["few_partitions"][spec.name] = want
        rfs = {len(p.replicas) for p in parts.values()}
        if rfs != {rf}:
            problems.append(f"{spec.name}: replication factor {sorted(rfs)}, want {rf}")
    if present:
        actual = _topic_configs(admin, [spec.name for spec in present], timeout)
        for spec in present:
            have = actual.get(spec.name, {})
            wrong = {k: v for k, v in spec.config.items() if have.get(k) != v}
            for k, v in wrong.items():
                problems.append(f"{spec.name}: {k}={have.get(k)}, want {v}")
            if wrong:
                facts["configs"][spec.name] = wrong
    return problems, facts


def check_topics(s: Settings | None = None, admin: AdminClient | None = None,
                 timeout: float = 10.0) -> list[str]:
    """Every way the topics differ from topic_specs(s) (empty when all is well)."""
    s = s or settings()
    problems, _ = _problems(admin or admin_client(s), s, timeout)
    return problems


def ensure_topics(s: Settings | None = None, admin: AdminClient | None = None,
                  timeout: float = 20.0) -> list[str]:
    """Creates missing topics, adds partitions, fixes configs. Returns what it did."""
    s = s or settings()
    admin = admin or admin_client(s)
    _, facts = _problems(admin, s, timeout)
    actions: list[str] = []
    if facts["missing"]:
        new = [NewTopic(spec.name, num_partitions=spec.want_partitions(s),
                        replication_factor=s.kafka_replication_factor, config=dict(spec.config))
               for spec in topic_specs(s) if spec.name in facts["missing"]]
        for name, fut in admin.create_topics(new, request_timeout=timeout).items():
            try:
                fut.result(timeout=timeout)
                actions.append(f"created {name}")
            except KafkaException as exc:
                if exc.args[0].name() != "TOPIC_ALREADY_EXISTS":  # a concurrent creator won
                    raise
    if facts["few_partitions"]:
        grow = [NewPartitions(n, want) for n, want in facts["few_partitions"].items()]
        for name, fut in admin.create_partitions(grow, request_timeout=timeout).items():
            fut.result(timeout=timeout)
            actions.append(f"grew {name} to {facts['few_partitions'][name]} partitions")
    if facts["configs"]:
        resources = [
            ConfigResource(ResourceType.TOPIC, name, incremental_configs=[
                ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in wrong.items()
            ])
            for name, wrong in facts["configs"].items()
        ]
        for res, fut in admin.incremental_alter_configs(resources, request_timeout=timeout).items():
            fut.result(timeout=timeout)
            actions.append(f"altered {res.name}: " + ", ".join(
                f"{k}={v}" for k, v in facts["configs"][res.name].items()))
    return actions


def ensure_and_check(s: Settings | None = None, timeout: float = 30.0,
                     admin: AdminClient | None = None) -> tuple[list[str], list[str]]:
    """ensure_topics, then check until clean (metadata propagates asynchronously) or timeout."""
    s = s or settings()
    admin = admin or admin_client(s)
    actions = ensure_topics(s, admin)
    deadline = time.monotonic() + timeout

    def check() -> list[str]:
        try:
            return check_topics(s, admin)
        except KafkaException as exc:
            # A topic just created is not yet known to every broker of a cluster: not a problem yet.
            if exc.args and exc.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART and time.monotonic() < deadline:
                return [f"not yet known to every broker: {exc.args[0].str()}"]
            raise

    problems = check()
    while problems and time.monotonic() < deadline:
        time.sleep(0.2)
        problems = check()
    return actions, problems


def main(argv: list[str] | None = None) -> int:
    from infra.cli_util import guarded

    args = sys.argv[1:] if argv is None else argv
    action = args[0] if args else "ensure"

    def go() -> int:
        if action == "ensure":
            actions, problems = ensure_and_check()
            for a in actions:
                print(f"strata: topics: {a}")
        elif action == "check":
            problems = check_topics()
        else:
            print(f"strata: unknown action {action!r} (ensure|check)", file=sys.stderr)
            return 2
        for p in problems:
            print(f"strata: topic problem: {p}", file=sys.stderr)
        return 1 if problems else 0

    return guarded(go)


if __name__ == "__main__":
    sys.exit(main())
