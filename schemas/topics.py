"""Kafka topic names (DESIGN §4)."""

COMMANDS_TOPIC = "strata.commands"
EVENTS_TOPIC = "strata.events"
DLQ_TOPIC = "strata.dlq"
