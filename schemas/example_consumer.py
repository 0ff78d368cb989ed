"""An outside consumer of `strata.events`, in plain confluent-kafka and `json` only — no Strata
code — that follows one table's commits. A template for integrations (the event shapes are the
JSON Schemas in `schemas/json/events/`).

    python -m schemas.example_consumer --bootstrap 127.0.0.1:9092 --db shop --table orders

Prints one JSON line per commit of the table: its commit number, UTC instant, kind (a load's source
— insert, update, delete on Unique Key tables — or delete, truncate, restore), rows and the version
each partition reached. Reads with
`isolation.level=read_committed` (the sequencer writes in transactions) from the beginning of the
log, so it can be restarted at any time; names are resolved from the catalog events it passes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from confluent_kafka import Consumer, TopicPartition

TOPIC = "strata.events"
# Event types that are commits of a table's data, and the kind shown when the payload names none.
COMMITS = {"RowsetsCommitted": "load", "DeleteCommitted": "delete", "TableRestored": "restore"}


def events(bootstrap: str, idle_timeout_s: float) -> Iterator[dict[str, Any]]:
    """Every decodable envelope on the log, oldest first, until it has been idle that long."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "example-consumer",
                         "enable.auto.commit": False, "isolation.level": "read_committed"})
    try:
        partitions = consumer.list_topics(TOPIC, timeout=10).topics[TOPIC].partitions
        consumer.assign([TopicPartition(TOPIC, p, 0) for p in partitions])  # from offset 0, every time
        while True:
            message = consumer.poll(idle_timeout_s)
            if message is None:
                return
            value = message.value()
            if message.error() or value is None:
                continue
            try:
                envelope = json.loads(value)
            except (TypeError, ValueError, RecursionError):
                continue  # not JSON (or nested past the parser's limit): skip it, as Strata's followers do
            if isinstance(envelope, dict):
                yield envelope
    finally:
        consumer.close()


class TableFollower:
    """Folds just enough of the catalog to know which table id is `db.table` at each point."""

    def __init__(self, db: str, table: str) -> None:
        self.db, self.table = db.lower(), table.lower()
        self.db_ids: dict[int, str] = {}
        self.table_id: int | None = None

    def commit(self, envelope: dict[str, Any]) -> dict[str, Any] | None:
        kind, payload = envelope.get("type"), envelope.get("payload") or {}
        if kind == "DatabaseCreated":
            self.db_ids[payload["db_id"]] = payload["name"].lower()
        elif kind == "TableCreated" and payload["name"].lower() == self.table \
                and self.db_ids.get(payload["db_id"]) == self.db:
            self.table_id = payload["table_id"]  # a re-created table of that name replaces the old one
        elif kind == "TableRenamed" and payload["table_id"] == self.table_id and payload["name"].lower() != self.table:
            self.table_id = None
        elif kind in COMMITS and payload.get("table_id") == self.table_id is not None:
            label = payload.get("kind") or payload.get("source") or COMMITS[kind]
            return {"commit_number": payload["commit_number"], "kind": label,
                    "at": datetime.fromtimestamp(envelope["commit_ts_ms"] / 1000, tz=UTC).isoformat(),
                    "rows": payload.get("num_rows", 0), "partition_versions": payload.get("partition_versions", {})}
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--db", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--idle-timeout", type=float, default=3600.0,
                        help="stop after the log has been quiet this many seconds")
    args = parser.parse_args(argv)
    follower = TableFollower(args.db, args.table)
    for envelope in events(args.bootstrap, args.idle_timeout):
        try:
            found = follower.commit(envelope)
        except (KeyError, TypeError, AttributeError, ValueError, OverflowError, OSError):
            continue  # an envelope not of the shape its type promises: skip it too
        if found is not None:
            print(json.dumps(found), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
