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
# Every topic Strata itself owns starts with this: its log, the DLQ, the worker lease topics.
STRATA_PREFIX = "strata."
# ... except the per-table ingest topics (`strata.ingest.<db>.<table>`), routine loads' sources.
INGEST_PREFIX = "strata.ingest."
