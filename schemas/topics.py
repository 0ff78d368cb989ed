"""Kafka topic names (DESIGN §4)."""

COMMANDS_TOPIC = "strata.commands"
EVENTS_TOPIC = "strata.events"
DLQ_TOPIC = "strata.dlq"
# Nothing is written to it: its partitions are the slots the worker processes divide among
# themselves through a consumer group (one slot's owner runs that slot's share of the work).
WORKERS_TOPIC = "strata.workers"
WORKER_SLOTS = 12
# One partition: whoever holds it in the workers' lease group leads (streams.ownership).
LEADER_TOPIC = "strata.leader"
# The consumer groups on those topics (streams.ownership), which SQL servers read to list the workers.
WORKERS_GROUP = "strata-workers"
LEADER_GROUP = f"{WORKERS_GROUP}-leader"
# A worker's group members carry `strata-worker|<instance>|<web port>` as their Kafka client id.
WORKER_CLIENT_PREFIX = "strata-worker|"


# Every SQL server is a member of this group on WORKERS_TOPIC, its client id `strata-sql|<host>|<SQL port>|<HTTP
# port>`, so each can list the others (SHOW FRONTENDS).
SQL_SERVERS_GROUP = "strata-sql-servers"
SQL_CLIENT_PREFIX = "strata-sql|"


def sql_client_id(host: str, sql_port: int, http_port: int) -> str:
    return f"{SQL_CLIENT_PREFIX}{host}|{sql_port}|{http_port}"


def parse_sql_client_id(client_id: str) -> tuple[str, int, int] | None:
    """(host, SQL port, HTTP port) of a SQL server's group member; None for any other client."""
    if not client_id.startswith(SQL_CLIENT_PREFIX):
        return None
    parts = client_id[len(SQL_CLIENT_PREFIX):].split("|")
    if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
        return None
    return parts[0], int(parts[1]), int(parts[2])


def parse_worker_client_id(client_id: str) -> tuple[str, int] | None:
    """(instance, web port) of a worker's group member; None for any other client."""
    if not client_id.startswith(WORKER_CLIENT_PREFIX):
        return None
    instance, _, port = client_id[len(WORKER_CLIENT_PREFIX):].rpartition("|")
    return (instance, int(port)) if port.isdigit() else None
# Every topic Strata itself owns starts with this: its log, the DLQ, the worker lease topics.
STRATA_PREFIX = "strata."
# ... except the per-table ingest topics (`strata.ingest.<db>.<table>`), routine loads' sources.
INGEST_PREFIX = "strata.ingest."
