"""An outside consumer of `strata.events`, in plain confluent-kafka and `json` only — no Strata
code — that follows one table's commits. A template for integrations (the event shapes are the
JSON Schemas in `schemas/json/events/`).

    python -m schemas.example_consumer --bootstrap 127.0.0.1:9094 --db shop --table orders \
        --property security.protocol=SASL_PLAINTEXT --property sasl.mechanism=SCRAM-SHA-512 \
        --property sasl.username=strata --password-file var/secrets/kafka-strata.password

Only Strata's principal may read `strata.events` (the broker's ACLs): give the consumer a principal
that may, with librdkafka settings (`--property`, repeatable) and its password from a file (kept off
the command line). On a local stack that is the Strata listener (port 9094) and the password
`infra/up` generated; on a real cluster, a principal an admin allowed to Read and Describe the topic.

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
COMMITS = {"RowsetsCommitted": "load", "DeleteCommitted": "delete", "TableRestored": "restore",
           "TableOverwritten": "overwrite"}


class NotReadable(Exception):
    """The broker does not let this consumer read the log (no such topic, or not authorized)."""


def events(bootstrap: str, idle_timeout_s: float, properties: dict[str, str] | None = None
           ) -> Iterator[dict[str, Any]]:
    """Every decodable envelope on the log, oldest first, until it has been idle that long."""
    consumer = Consumer({**(properties or {}), "bootstrap.servers": bootstrap, "group.id": "example-consumer",
                         "enable.auto.commit": False, "isolation.level": "read_committed"})
    try:
        topic = consumer.list_topics(TOPIC, timeout=10).topics[TOPIC]
        if topic.error is not None or not topic.partitions:
            raise NotReadable(f"{TOPIC} cannot be read at {bootstrap}: "
                              f"{topic.error.str() if topic.error is not None else 'no partitions'}")
        partitions = topic.partitions
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
        elif kind == "TableReplaced" and self.table_id in (payload["table_id"], payload["with_table_id"]):
            # ALTER TABLE a REPLACE WITH TABLE b: b takes a's name; a takes b's (swap) or is dropped.
            if self.table_id == payload["table_id"]:
                self.table_id = payload["with_table_id"]
            else:
                self.table_id = payload["table_id"] if payload["swap"] else None
        elif kind in COMMITS and payload.get("table_id") == self.table_id is not None:
            label = payload.get("kind") or payload.get("source") or COMMITS[kind]
            return {"commit_number": payload["commit_number"], "kind": label,
                    "at": datetime.fromtimestamp(envelope["commit_ts_ms"] / 1000, tz=UTC).isoformat(),
                    "rows": payload.get("num_rows", 0), "partition_versions": payload.get("partition_versions", {})}
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bootstrap", default="127.0.0.1:9094")
    parser.add_argument("--db", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--idle-timeout", type=float, default=3600.0,
                        help="stop after the log has been quiet this many seconds")
    parser.add_argument("--property", action="append", default=[], metavar="KEY=VALUE",
                        help="a librdkafka setting (security.protocol, sasl.mechanism, sasl.username, …)")
    parser.add_argument("--password-file", help="a file holding sasl.password")
    args = parser.parse_args(argv)
    properties: dict[str, str] = {}
    for item in args.property:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"--property {item!r}: expected KEY=VALUE")
        properties[key.strip()] = value
    if args.password_file:
        try:
            with open(args.password_file) as fh:
                properties["sasl.password"] = fh.read().strip()
        except OSError as exc:
            parser.error(f"--password-file: {exc.strerror}: {args.password_file}")
    follower = TableFollower(args.db, args.table)
    try:
        for envelope in events(args.bootstrap, args.idle_timeout, properties):
            try:
                found = follower.commit(envelope)
            except (KeyError, TypeError, AttributeError, ValueError, OverflowError, OSError):
                continue  # an envelope not of the shape its type promises: skip it too
            if found is not None:
                print(json.dumps(found), flush=True)
    except NotReadable as exc:
        print(f"example_consumer: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
