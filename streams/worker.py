"""The worker process: a faust-streaming app that hosts Strata's agents.

It runs the sequencer (on confluent-kafka transactions, in a thread of its own: faust's
exactly-once is not trusted with the log, see NOTES.md) while it holds the workers' lease
(streams.ownership: with several workers one leads, the others stand by and share the per-table
agents), and serves `/health` and `/metrics` (Prometheus) on its web port. Its
agents (compaction, tiering, recycler, routine load) run in threads of their own. Routine load
tasks read user topics with confluent-kafka rather than as faust agents: their offsets must go on
`strata.events` with the rows (a consumer group's committed offsets would be a second truth), and
jobs come and go at run time while faust's topics are declared when the app starts.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import ssl
import threading
import time
from typing import Any

import faust
from prometheus_client import CONTENT_TYPE_LATEST, Gauge, generate_latest

from schemas.config import settings, strata_version
from storage import cache_metrics
from streams.agents import Agents
from streams.ownership import WorkShare
from streams.sequencer import Sequencer

log = logging.getLogger("strata.worker")

config = settings()


def _broker_credentials(client: dict[str, Any]) -> Any:
    """faust's own connection to the cluster, with the same security settings as every other client
    (`client`: what Settings.kafka_client gives them — on a local stack, its Strata listener)."""
    protocol = str(client.get("security.protocol", "PLAINTEXT")).upper()
    if protocol == "PLAINTEXT":
        return None
    context = ssl.create_default_context(cafile=client.get("ssl.ca.location"))
    if client.get("ssl.certificate.location"):  # mTLS: the client certificate is the principal
        context.load_cert_chain(client["ssl.certificate.location"], client.get("ssl.key.location"),
                                client.get("ssl.key.password"))
    if protocol == "SSL":
        return faust.SSLCredentials(context)
    return faust.SASLCredentials(username=client.get("sasl.username"), password=client.get("sasl.password"),
                                 mechanism=client.get("sasl.mechanism", "PLAIN"),
                                 ssl_context=context if protocol == "SASL_SSL" else None)


_client = config.kafka_client()
app = faust.App(
    "strata-worker",
    broker=";".join(f"kafka://{server.strip()}" for server in str(_client["bootstrap.servers"]).split(",")),
    broker_credentials=_broker_credentials(_client),
    web_host=config.kafka_host,
    web_port=config.worker_port,
    web_bind="127.0.0.1",
    topic_partitions=config.topic_partitions,
    topic_replication_factor=config.kafka_replication_factor,
    datadir=str(config.worker_state_dir / "faust"),
    store="memory://",
    # A restarted worker rejoins its group only once the dead member's session expires; keep that short.
    broker_session_timeout=10.0,
    broker_heartbeat_interval=2.0,
)

share = WorkShare(config, config.worker_instance or "local")
agents = Agents(config, share)


class SequencerSeat:
    """Runs the sequencer while this worker holds the lease, and only then: a fresh
    Sequencer each time the lease comes (back), started once the previous one has let go of its
    RocksDB state. Waiting for the lease after a crash costs nothing on a local stack — static
    membership gives a restarted worker its share at once."""

    def __init__(self) -> None:
        self.sequencer: Sequencer | None = None
        self.thread: threading.Thread | None = None
        self.terms = 0

    def healthy(self) -> bool:
        """Up as a leader (sequencer running), or a standby that has its share."""
        if not share.assigned:
            return False
        if not share.leads():
            return True
        return self.sequencer is not None and self.sequencer.healthy and self.thread is not None \
            and self.thread.is_alive()

    def run(self) -> None:
        while True:
            leads = share.leads()
            if leads and self.thread is None:
                self.sequencer = Sequencer(config, config.worker_state_dir / "sequencer")
                self.thread = threading.Thread(target=self.sequencer.run, name="sequencer", daemon=True)
                self.thread.start()
                self.terms += 1
                log.info("worker %s leads: sequencer started", share.instance)
            elif not leads and self.thread is not None:
                assert self.sequencer is not None
                self.sequencer.stop()
                self.thread.join()
                self.thread = None
                log.info("worker %s no longer leads: sequencer stopped", share.instance)
            time.sleep(0.1)

    def stop(self) -> None:
        if self.sequencer is not None:
            self.sequencer.stop()


seat = SequencerSeat()
STARTED_MS = int(time.time() * 1000)

SEQUENCER_UP = Gauge("strata_sequencer_up", "1 when the sequencer is running")
COMMANDS_APPLIED = Gauge("strata_sequencer_commands_applied", "commands turned into events")
COMMANDS_REJECTED = Gauge("strata_sequencer_commands_rejected", "commands answered with CommandRejected")
BAD_COMMANDS = Gauge("strata_sequencer_bad_commands", "undecodable command records skipped")
TRANSACTIONS = Gauge("strata_sequencer_transactions", "Kafka transactions of events the sequencer committed")
TRANSACTION_COMMANDS = Gauge("strata_sequencer_transaction_commands", "commands decided into those transactions")
TRANSACTION_SECONDS = Gauge("strata_sequencer_transaction_seconds", "seconds producing and committing them")
BUSY_SECONDS = Gauge("strata_sequencer_busy_seconds", "seconds spent on batches of commands, decisions to flush")
COMPACTIONS = Gauge("strata_compactions", "compactions committed by the compaction agent")
RECYCLED = Gauge("strata_recycled_rowsets", "stale rowsets recycled")
ORPHANS = Gauge("strata_orphan_files_removed", "unreferenced rowset files removed")
REMOTE_ORPHANS = Gauge("strata_remote_orphan_objects_removed", "unreferenced objects removed from resources")
RECYCLER_TABLES = Gauge("strata_recycler_tables_looked_at", "live tables whose stale rowsets the recycler's last pass "
                        "read (those with stale rowsets written since the pass before, or left by it)")
MOVED = Gauge("strata_tiering_moved_rowsets", "rowsets moved by the tiering agent (cooldown, SSD to HDD)")
MOVED_BYTES = Gauge("strata_tiering_moved_bytes", "bytes moved by the tiering agent")
TIERING_FAILURES = Gauge("strata_tiering_failures", "moves that failed and were put on backoff")
LOAD_TASKS = Gauge("strata_routine_load_tasks", "routine load jobs with a running task in this worker")
LOADED_ROWS = Gauge("strata_routine_load_rows", "rows routine load tasks of this worker committed")
PARTITIONS_ADDED = Gauge("strata_dynamic_partitions_added", "partitions the dynamic partition scheduler added")
PARTITIONS_DROPPED = Gauge("strata_dynamic_partitions_dropped", "partitions the dynamic partition scheduler dropped")
LOAD_ERROR_ROWS = Gauge("strata_routine_load_error_rows", "rows routine load tasks sent to strata.dlq")
DECODE_ERRORS = Gauge("strata_worker_projection_decode_errors", "undecodable events skipped by the agents' replica")
WORKER_SLOTS = Gauge("strata_worker_slots", "slots of strata.workers (table shares) this worker holds")
LEADER_TERMS = Gauge("strata_worker_leader_terms", "times this worker took the lease and started a sequencer")
APPLY_ERRORS = Gauge("strata_worker_projection_apply_errors", "events the agents' replica could not apply, skipped")


@app.timer(interval=1.0)
async def dynamic_partitions() -> None:
    """The dynamic partition scheduler's timer: each tick runs a pass if one is due (its interval
    passed, or a dynamic table changed); the pass blocks on the log, so it runs off the event loop."""
    if not agents.started or not share.leads():
        return
    try:
        await asyncio.get_running_loop().run_in_executor(None, agents.dynamic_partitions.tick)
    except Exception:  # noqa: BLE001 - a bad pass must not stop the timer; the next tick retries
        log.exception("dynamic partition pass failed")


def _start_sequencer() -> None:
    """Joins the workers' group and runs the sequencer seat; it does not depend on faust's own
    consumer group, whose rebalance after a crash would stall every write."""
    share.start()
    threading.Thread(target=seat.run, name="sequencer-seat", daemon=True).start()
    atexit.register(seat.stop)
    atexit.register(share.stop)


def _start_agents() -> None:
    """The agents start once this worker knows its share (and, leading, once the sequencer that
    answers their commands is up), in a thread of their own."""

    def run() -> None:
        while not seat.healthy():
            time.sleep(0.1)
        agents.start()
        atexit.register(agents.stop)

    threading.Thread(target=run, name="agents-start", daemon=True).start()


@app.page("/health")
async def health(web: Any, request: Any) -> Any:
    seq_up = seat.healthy()
    up = seq_up and agents.healthy()
    # A sequencer that stopped for good (its position is off the log) is not "starting": say why.
    fatal = seat.sequencer.fatal_error if seat.sequencer is not None else None
    status = "ok" if up else "degraded" if fatal else "starting"
    # instance, started_ms and version: what SHOW BACKENDS (query.cluster) reports of this worker.
    return web.json({"status": status, "sequencer": seq_up, "agents": agents.healthy(),
                     "leader": share.leads(), "slots": sorted(share.slots), "instance": share.instance,
                     "started_ms": STARTED_MS, "version": strata_version(),
                     **({"sequencer_error": fatal} if fatal else {})},
                    status=200 if up else 503)


@app.page("/metrics")
async def metrics(web: Any, request: Any) -> Any:
    sequencer = seat.sequencer
    SEQUENCER_UP.set(1 if sequencer is not None and sequencer.healthy and share.leads() else 0)
    COMMANDS_APPLIED.set(sequencer.commands_applied if sequencer else 0)
    COMMANDS_REJECTED.set(sequencer.commands_rejected if sequencer else 0)
    BAD_COMMANDS.set(sequencer.bad_commands if sequencer else 0)
    TRANSACTIONS.set(sequencer.transactions if sequencer else 0)
    TRANSACTION_COMMANDS.set(sequencer.transaction_commands if sequencer else 0)
    TRANSACTION_SECONDS.set(sequencer.transaction_seconds if sequencer else 0)
    BUSY_SECONDS.set(sequencer.busy_seconds if sequencer else 0)
    WORKER_SLOTS.set(len(share.slots))
    LEADER_TERMS.set(seat.terms)
    if agents.started:
        COMPACTIONS.set(agents.compaction.compactions)
        RECYCLED.set(agents.recycler.recycled_rowsets)
        RECYCLER_TABLES.set(agents.recycler.tables_looked_at)
        ORPHANS.set(agents.recycler.removed_orphans)
        REMOTE_ORPHANS.set(agents.recycler.removed_remote_orphans)
        MOVED.set(agents.tiering.cooler.moved_rowsets)
        MOVED_BYTES.set(agents.tiering.cooler.moved_bytes)
        TIERING_FAILURES.set(agents.tiering.failures)
        LOAD_TASKS.set(agents.routine_load.running_tasks)
        PARTITIONS_ADDED.set(agents.dynamic_partitions.added)
        PARTITIONS_DROPPED.set(agents.dynamic_partitions.dropped)
        LOADED_ROWS.set(agents.routine_load.loaded_rows)
        LOAD_ERROR_ROWS.set(agents.routine_load.error_rows)
        DECODE_ERRORS.set(agents.replica.follower.decode_errors)
        APPLY_ERRORS.set(agents.replica.follower.apply_errors)
        cache_metrics.publish(agents.locator.cache)
    return web.bytes(generate_latest(), content_type=CONTENT_TYPE_LATEST.split(";")[0])


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config.worker_state_dir.mkdir(parents=True, exist_ok=True)
    _start_sequencer()
    _start_agents()
    app.main()


if __name__ == "__main__":
    import sys

    sys.argv = [sys.argv[0], "worker", "--loglevel=info", f"--web-port={config.worker_port}",
                "--web-host=127.0.0.1"]
    main()
