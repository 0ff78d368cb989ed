"""Who may do what on the local broker: its ACLs, and the Strata principal's SCRAM credential.

The broker (infra/kafka_node.py) authenticates the Strata listener with SCRAM-SHA-512, has one super
user (the Strata principal) and lets anyone use a resource that has no ACL (user topics). These ACLs
give every resource of Strata's one, so that nobody else can use it:

- topics `strata.*` (commands, events, workers, leader, dlq) and `strata-*` (the faust worker's own);
- consumer groups and transactional ids `strata-*` (sequencer, followers, workers, routine load's
  transactions);
- the cluster itself: creating ACLs or topics through it, changing broker configs or credentials;

while `strata.ingest.*` topics, the routine-load sources, stay open to anyone (User:*), and so do
the consumer groups Strata uses to read such sources (SOURCE_GROUP_PREFIXES).

On the stack's own broker the ACLs are reconciled, not only added: whatever else is found on the
broker is deleted, since nobody but `infra/up` manages them there — an ACL slipped in before the first
start finished cannot outlive the next one. `python -m infra.kafka_acl commands` prints what a real
cluster needs for Strata (real_cluster_grants) as `kafka-acls.sh` commands.

    python -m infra.kafka_acl [ensure|check|commands]
"""

from __future__ import annotations

import shlex
import sys
import time

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from infra.toolchain import StrataError
from schemas.config import Settings, settings
from schemas.topics import INGEST_PREFIX

# Topic prefixes Strata owns: its log topics (schemas/topics.py) and the faust app's internal ones.
STRATA_TOPIC_PREFIXES = ("strata.", "strata-")
# Topics under this prefix are for outside producers (routine-load sources): open to anyone.
INGEST_TOPIC_PREFIX = INGEST_PREFIX
# Consumer groups and transactional ids of Strata's processes all start with this.
STRATA_ID_PREFIX = "strata-"
# ...except the groups Strata names when it reads a routine load's *source* with the job's own
# client settings (anonymous, on a local stack's plain listener): streams/routine_load_task.py's
# per-job group and query/kafka_source.py's. Strata keeps no state in them (offsets go on the log),
# so they stay open to anyone, as the source topics do.
SOURCE_GROUP_PREFIXES = ("strata-routine-load-", "strata-sql-metadata")
CLUSTER_RESOURCE = "kafka-cluster"
SCRAM_ITERATIONS = 8192

# None matches any name, principal and host (the stubs say str; librdkafka documents None).
_ALL = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,  # type: ignore[arg-type]
                        AclOperation.ANY, AclPermissionType.ANY)


def principal(s: Settings) -> str:
    return f"User:{s.kafka_sasl_listener_user}"


def _allow(kind: ResourceType, name: str, who: str, operation: AclOperation = AclOperation.ALL,
           pattern: ResourcePatternType = ResourcePatternType.PREFIXED) -> AclBinding:
    return AclBinding(kind, name, pattern, who, "*", operation, AclPermissionType.ALLOW)


def strata_grants(s: Settings) -> list[AclBinding]:
    """What the Strata principal needs on any cluster: its topics, groups and transactional ids."""
    strata = principal(s)
    return [
        *(_allow(ResourceType.TOPIC, prefix, strata) for prefix in STRATA_TOPIC_PREFIXES),
        _allow(ResourceType.GROUP, STRATA_ID_PREFIX, strata),
        _allow(ResourceType.TRANSACTIONAL_ID, STRATA_ID_PREFIX, strata),
    ]


def acl_specs(s: Settings) -> list[AclBinding]:
    """The ACLs the stack's broker must hold, exactly. Its Strata principal is a super user, so these
    grant it nothing: they exist so that each of Strata's resources has an ACL, which takes it out of
    allow.everyone.if.no.acl.found for everybody else."""
    return [
        *strata_grants(s),
        _allow(ResourceType.TOPIC, INGEST_TOPIC_PREFIX, "User:*"),
        *(_allow(ResourceType.GROUP, prefix, "User:*") for prefix in SOURCE_GROUP_PREFIXES),
        _allow(ResourceType.BROKER, CLUSTER_RESOURCE, principal(s), pattern=ResourcePatternType.LITERAL),
    ]


def real_cluster_grants(s: Settings) -> list[AclBinding]:
    """The ACLs a real cluster (allow.everyone.if.no.acl.found=false, Strata not a super user) needs
    for Strata: its own resources, and IdempotentWrite on the cluster, which brokers before 3.0 ask of
    idempotent producers. Outside producers, routine-load source principals and readers of
    strata.events get their own grants from the cluster's admin (see README, Security)."""
    return [*strata_grants(s), _allow(ResourceType.BROKER, CLUSTER_RESOURCE, principal(s),
                                      AclOperation.IDEMPOTENT_WRITE, ResourcePatternType.LITERAL)]


def _present(admin: AdminClient, timeout: float) -> set[AclBinding]:
    return set(admin.describe_acls(_ALL, request_timeout=timeout).result(timeout=timeout))


def acl_problems(s: Settings, admin: AdminClient, timeout: float = 10.0) -> list[str]:
    """How the broker's ACLs differ from acl_specs(s) (empty when they match)."""
    want, have = set(acl_specs(s)), _present(admin, timeout)
    return ([f"ACL missing: {_describe(b)}" for b in acl_specs(s) if b not in have]
            + [f"ACL not Strata's: {_describe(b)}" for b in sorted(have - want, key=str)])


def ensure_acls(s: Settings, admin: AdminClient, timeout: float = 20.0) -> list[str]:
    """Creates the missing ACLs and deletes every other one; what it did."""
    want = acl_specs(s)
    have = _present(admin, timeout)
    actions: list[str] = []
    missing = [b for b in want if b not in have]
    if missing:
        for binding, fut in admin.create_acls(missing, request_timeout=timeout).items():
            fut.result(timeout=timeout)
            actions.append(f"ACL added: {_describe(binding)}")
    extra = sorted(have - set(want), key=str)
    if extra:
        filters = [AclBindingFilter(b.restype, b.name, b.resource_pattern_type, b.principal, b.host, b.operation,
                                    b.permission_type) for b in extra]
        for _flt, fut in admin.delete_acls(filters, request_timeout=timeout).items():
            for gone in fut.result(timeout=timeout):
                actions.append(f"ACL deleted: {_describe(gone)}")
    return actions


def _name(value: object) -> str:
    """An enum member's name (confluent-kafka's stubs type these fields as enum | str | int)."""
    return str(getattr(value, "name", value))


def _describe(b: AclBinding) -> str:
    kind = b.resource_pattern_type
    pattern = "" if kind == ResourcePatternType.LITERAL else f" ({_name(kind).lower()})"
    return (f"{_name(b.permission_type)} {b.principal} {_name(b.operation)} on {_name(b.restype)} "
            f"{b.name!r}{pattern}")


# ---------------------------------------------------------------- the Strata principal's credential


def _login_error(s: Settings, timeout: float) -> KafkaError | None:
    """None when the Strata principal can log in on the Strata listener, else the error seen."""
    from infra.topics import admin_client

    errors: list[KafkaError] = []
    admin = admin_client(s, error_cb=errors.append)
    try:
        admin.list_topics(timeout=timeout)
        return None
    except KafkaException as exc:
        admin.poll(0.2)  # serves error_cb
        auth = [e for e in errors if e.code() == KafkaError._AUTHENTICATION]
        return auth[0] if auth else exc.args[0]


def ensure_credential(s: Settings, timeout: float = 20.0) -> list[str]:
    """Makes sure the Strata principal can log in on the local broker.

    A storage formatted by infra/kafka_node.py has the credential from the start. One formatted before
    the Strata listener existed has none, and no ACL yet either: then the credential is added through
    the plain listener, which such a broker still lets anyone administer — the ACLs that end that come
    right after (ensure_acls). A broker that refuses the password and is locked down already holds
    another password than this home's file: that cannot be repaired from outside, it is reported.
    """
    from infra.topics import admin_client

    deadline = time.monotonic() + timeout
    error = _login_error(s, 5.0)
    while error is not None and error.code() != KafkaError._AUTHENTICATION and time.monotonic() < deadline:
        time.sleep(0.5)  # a broker that just started (on a busy machine) may answer late: not a refusal
        error = _login_error(s, 5.0)
    if error is None:
        return []
    if error.code() != KafkaError._AUTHENTICATION:
        raise StrataError(f"Kafka: the Strata listener {s.kafka_host}:{s.kafka_sasl_listener_port} does not "
                          f"answer: {error.str()}")
    password = s.local_kafka_password()
    assert password is not None  # kafka_node.prepare made it before the broker started
    upsert = UserScramCredentialUpsertion(s.kafka_sasl_listener_user,
                                          ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, SCRAM_ITERATIONS),
                                          password.encode())
    anonymous = admin_client(s, anonymous=True)
    try:
        for fut in anonymous.alter_user_scram_credentials([upsert], request_timeout=timeout).values():
            fut.result(timeout=timeout)
    except KafkaException as exc:
        raise StrataError(
            f"Kafka refuses the Strata principal's password ({s.kafka_password_file}) and cannot be told the "
            f"right one ({exc.args[0].name()}): the file does not belong to this storage. Put the right file "
            f"back, or start over: infra/down, then delete {s.home}/kafka* and run infra/up") from None
    deadline = time.monotonic() + timeout
    while (error := _login_error(s, 3.0)) is not None:
        if time.monotonic() > deadline:
            raise StrataError(f"Kafka: the Strata principal still cannot log in after its credential was added: "
                              f"{error.str()}")
        time.sleep(0.3)
    return [f"SCRAM credential added for {principal(s)} (storage formatted before the Strata listener)"]


def secure(s: Settings, admin: AdminClient | None = None, timeout: float = 20.0) -> list[str]:
    """The credential, then the ACLs, of the stack's own broker; what it did."""
    from infra.topics import admin_client

    actions = ensure_credential(s, timeout)
    return actions + ensure_acls(s, admin or admin_client(s), timeout)


# ---------------------------------------------------------------- a real cluster


def kafka_acls_commands(s: Settings, bootstrap: str = "<broker:port>",
                        command_config: str = "admin.properties") -> list[str]:
    """real_cluster_grants(s) as kafka-acls.sh commands, to run with an admin's credentials."""
    kinds = {"TOPIC": "--topic", "GROUP": "--group", "TRANSACTIONAL_ID": "--transactional-id", "BROKER": "--cluster"}
    operations = {"ALL": "All", "IDEMPOTENT_WRITE": "IdempotentWrite"}
    out = []
    for b in real_cluster_grants(s):
        kind = kinds[_name(b.restype)]
        resource = kind if kind == "--cluster" else f"{kind} {shlex.quote(b.name)}"
        pattern = " --resource-pattern-type prefixed" if b.resource_pattern_type == ResourcePatternType.PREFIXED else ""
        out.append(f"kafka-acls.sh --bootstrap-server {bootstrap} --command-config {command_config} --add "
                   f"--allow-principal {shlex.quote(b.principal)} --operation {operations[_name(b.operation)]} "
                   f"{resource}{pattern}")
    return out


def main(argv: list[str] | None = None) -> int:
    from infra.cli_util import guarded
    from infra.topics import admin_client

    args = sys.argv[1:] if argv is None else argv
    action = args[0] if args else "check"

    def go() -> int:
        s = settings()
        if action == "commands":
            print("\n".join(kafka_acls_commands(s, s.kafka_bootstrap)))
            return 0
        if action == "ensure":
            for a in secure(s):
                print(f"strata: kafka: {a}")
            return 0
        if action != "check":
            print(f"strata: unknown action {action!r} (ensure|check|commands)", file=sys.stderr)
            return 2
        problems = acl_problems(s, admin_client(s))
        for p in problems:
            print(f"strata: kafka: {p}", file=sys.stderr)
        return 1 if problems else 0

    return guarded(go)


if __name__ == "__main__":
    sys.exit(main())
