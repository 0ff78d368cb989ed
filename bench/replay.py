"""Replay throughput: events/s of rebuilding a projection from offset 0 of strata.events (what
`strata replay` runs), its checksum against the live SQL server's projection, and the
sequencer's commands/s while the log is filled.

    .venv/bin/python -m bench.replay [--commands 100000] [--via-cli] [--keep-stack]

1. One SQL INSERT writes one real rowset file for table `pad`.
2. Its committed rowset (read from the SQL server's projection, read-only) is the template:
   --commands CommitRowsets commands, each naming a copy with a fresh rowset_id (and the path
   built from it) but the same size/checksum and a unique label, go straight to strata.commands (confluent_kafka
   Producer, idempotent, acks=all).
3. The sequencer drains them (watched on the worker's strata_sequencer_commands_applied gauge):
   commands/s. Then a SELECT on another table makes the SQL replica catch up.
4. `projections.replay.replay()` (the function behind `strata replay`; --via-cli runs the CLI
   itself) rebuilds var/bench/state/replay-bench from offset 0; its checksum must equal
   `projections.replay.checksum()` of var/bench/state/sql-39030 at the same offsets (read before the
   replay, and again after it in case agents committed meanwhile: the replay reads to the log's end).
Goal: replay ≥ 50,000 events/s on a log of ≥ 100,000 events, checksums equal. Prints one JSON object.

`pad` is never SELECTed afterwards: its copies name files that were never written (the path must
be the one built from each rowset's id). For the same reason it is created with
"disable_auto_compaction" = "true".
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import uuid

from bench.stack import (
    BENCH_ENV,
    add_stack_args,
    bench_stack,
    create_table_sql,
    emit,
    fresh_database,
    log,
    machine,
    sequencer_gauges,
    sql_connect,
    sql_projection_path,
)
from projections.replay import checksum as projection_checksum
from schemas.config import REPO_ROOT, Settings
from schemas.model import NewRowset
from storage.paths import rowset_path

GOAL_EVENTS_PER_S = 50_000
MIN_LOG_EVENTS = 100_000


def _offsets_key(offsets: dict[tuple[str, int], int]) -> tuple[tuple[tuple[str, int], int], ...]:
    return tuple(sorted(offsets.items()))


def events_end_offset(s: Settings) -> int:
    from confluent_kafka import Consumer, TopicPartition

    from schemas.topics import EVENTS_TOPIC

    # As Strata's principal: the broker lets nobody else read strata.events.
    c = Consumer(s.kafka_client(**{"group.id": f"bench-probe-{uuid.uuid4().hex[:6]}",
                                   "isolation.level": "read_committed", "enable.auto.commit": False}))
    try:
        parts = c.list_topics(EVENTS_TOPIC, timeout=10).topics[EVENTS_TOPIC].partitions
        return sum(c.get_watermark_offsets(TopicPartition(EVENTS_TOPIC, p), timeout=10, cached=False)[1]
                   for p in parts)
    finally:
        c.close()


def template_rowset(s: Settings, db: str, table: str) -> tuple[int, NewRowset]:
    """(table_id, NewRowset) of the table's first committed rowset, from the SQL server's projection."""
    from projections.projection import Projection

    projection = Projection(sql_projection_path(s), read_only=True)
    try:
        database = projection.database_by_name(db)
        found = projection.table_by_name(database.db_id, table) if database else None
        assert found is not None, f"{db}.{table} not in the SQL projection"
        record = next(iter(projection.rowset_records(found.table_id)))
        fields = {k: v for k, v in record.rowset.model_dump().items() if k in NewRowset.model_fields}
        return found.table_id, NewRowset(**fields)
    finally:
        projection.close()


def pad_and_probe(s: Settings, prefix: str, probe: str) -> tuple[str, int, NewRowset]:
    """A fresh database with tables `pad` and `probe`, one row each: (database, pad's table id, pad's
    rowset, the template of `produce_commands`)."""
    db = fresh_database(s, prefix)
    conn = sql_connect(s, db)
    try:
        with conn.cursor() as cur:
            # No automatic compaction of `pad`: its rowsets would be merged in one DuckDB query by the
            # worker's agent (100k inputs, files that are not there), on this run and on every later
            # start of the bench stack.
            cur.execute(create_table_sql("pad", "DUPLICATE", properties={"disable_auto_compaction": "true"}))
            cur.execute(create_table_sql(probe, "DUPLICATE"))
            cur.execute("INSERT INTO pad VALUES (1, 1)")
            cur.execute(f"INSERT INTO {probe} VALUES (1, 1)")
    finally:
        conn.close()
    table_id, template = template_rowset(s, db, "pad")
    return db, table_id, template


def produce_commands(s: Settings, table_id: int, template, n: int, run_id: str) -> float:
    from confluent_kafka import Producer

    from schemas.commands import CommitRowsets
    from schemas.envelope import encode, wrap_command
    from schemas.topics import COMMANDS_TOPIC

    # As Strata's principal: the broker lets nobody else write strata.commands.
    producer = Producer(s.kafka_client(**{"enable.idempotence": True, "acks": "all", "linger.ms": 20,
                                          "batch.num.messages": 10000, "queue.buffering.max.messages": 200000}))
    errors: list[str] = []

    def on_delivery(err, _msg) -> None:
        if err is not None:
            errors.append(str(err))

    key = str(table_id).encode()
    t0 = time.perf_counter()
    for i in range(n):
        rowset_id = uuid.uuid4().hex
        # The sequencer takes only the path built from the rowset's ids (storage.paths); no file is
        # there, and none is read: `pad` is never scanned.
        rowset = template.model_copy(update={"rowset_id": rowset_id, "path": rowset_path(
            table_id, template.partition_id, template.bucket, rowset_id)})
        command = CommitRowsets(table_id=table_id, label=f"bench_replay_{run_id}_{i}", rowsets=(rowset,),
                                num_rows=rowset.num_rows, source="insert")
        envelope = wrap_command(command, table_id=table_id, issued_ts_ms=int(time.time() * 1000),
                                origin="bench-replay")
        while True:
            try:
                producer.produce(COMMANDS_TOPIC, key=key, value=encode(envelope), on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 1000 == 0:
            producer.poll(0)
    left = producer.flush(120)
    if left or errors:
        raise SystemExit(f"bench/replay: {left} commands undelivered, errors: {errors[:3]}")
    return time.perf_counter() - t0


def wait_sequenced(s: Settings, target_applied: float, rejected_before: float, t_start: float,
                   timeout: float) -> float:
    last_log = 0.0
    while True:
        g = sequencer_gauges(s)
        if g.get("commands_rejected", 0) > rejected_before:
            rejected = g["commands_rejected"] - rejected_before
            raise SystemExit(f"bench/replay: the sequencer rejected {rejected:.0f} of the commands "
                             "(see var/bench/run/worker.log)")
        if g.get("commands_applied", 0) >= target_applied:
            return time.perf_counter() - t_start
        now = time.perf_counter()
        if now - t_start > timeout:
            raise SystemExit(f"bench/replay: sequencer not done after {timeout:.0f}s "
                             f"({g.get('commands_applied')} of {target_applied:.0f} applied)")
        if now - last_log > 5:
            left = target_applied - g.get("commands_applied", 0)
            log(f"replay: sequencer: {left:,.0f} commands to go ({now - t_start:.0f} s)")
            last_log = now
        time.sleep(0.2)


def sql_catch_up(s: Settings, db: str, timeout: float) -> float:
    """SELECTs until one succeeds (each waits up to command_timeout_s for the replica)."""
    import pymysql

    t0 = time.perf_counter()
    conn = sql_connect(s, db)
    try:
        while True:
            try:
                with conn.cursor() as cur:
                    cur.execute("SELECT count(*) FROM probe")
                    cur.fetchall()
                return time.perf_counter() - t0
            except pymysql.err.MySQLError as exc:
                if time.perf_counter() - t0 > timeout:
                    raise SystemExit(f"bench/replay: replica behind after {timeout:.0f}s: {exc}") from None
                log(f"replay: SQL replica still catching up ({exc.args[-1]}) …")
    finally:
        conn.close()


def run_replay_in_process(s: Settings, into) -> dict:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from projections.replay import replay

    with Progress(TextColumn("replaying strata.events"), BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=Console(stderr=True)) as bar:
        task = bar.add_task("replay", total=None)
        result = replay(s, into, lambda done, total: bar.update(task, completed=done, total=total))
    return {"events": result.events, "seconds": result.seconds, "events_per_second": result.events_per_second,
            "checksum": result.checksum, "decode_errors": result.decode_errors,
            "how": "projections.replay.replay"}


def run_replay_cli(s: Settings, into) -> dict:
    env = dict(os.environ, **BENCH_ENV, COLUMNS="100000")  # rich would wrap the JSON line at 80 columns
    t0 = time.perf_counter()
    proc = subprocess.run([str(REPO_ROOT / ".venv" / "bin" / "strata"), "replay", "--into", str(into)],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"bench/replay: strata replay failed ({proc.returncode}): {proc.stderr[-2000:]}")
    line = next(ln for ln in reversed(proc.stdout.splitlines()) if ln.startswith("{"))
    out = json.loads(line)
    return {"events": out["events"], "seconds": out["seconds"], "events_per_second": out["events_per_second"],
            "checksum": out["checksum"], "decode_errors": out["decode_errors"], "how": "strata replay (CLI)",
            "cli_wall_s": round(wall, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commands", type=int, default=100_000, help="CommitRowsets commands to produce")
    ap.add_argument("--via-cli", action="store_true", help="time `strata replay` as a subprocess instead")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds to wait for the sequencer / replica")
    add_stack_args(ap)
    args = ap.parse_args(argv)
    run_id = uuid.uuid4().hex[:8]

    with bench_stack(args.keep_stack) as s:
        db, table_id, template = pad_and_probe(s, "bench_replay", "probe")
        log(f"replay: template rowset {template.rowset_id} ({template.path}, {template.size_bytes} B)")

        g0 = sequencer_gauges(s)
        events_before = events_end_offset(s)
        log(f"replay: producing {args.commands:,} CommitRowsets to strata.commands …")
        t0 = time.perf_counter()
        produce_s = produce_commands(s, table_id, template, args.commands, run_id)
        log(f"replay: produced in {produce_s:.1f} s; waiting for the sequencer …")
        sequenced_s = wait_sequenced(s, g0.get("commands_applied", 0) + args.commands,
                                     g0.get("commands_rejected", 0), t0, args.timeout)
        events_after = events_end_offset(s)
        log(f"replay: sequenced {args.commands:,} commands in {sequenced_s:.1f} s; SQL replica catching up …")
        replica_lag_s = sql_catch_up(s, db, args.timeout)
        replica_total_s = time.perf_counter() - t0
        live_checksum, live_offsets = projection_checksum(
            sql_projection_path(s))
        into = s.state_dir / "replay-bench"
        log(f"replay: replaying strata.events from offset 0 into {into} …")
        result = run_replay_cli(s, into) if args.via_cli else run_replay_in_process(s, into)
        # On a stack other benchmarks used, agents may still commit while we replay (a recycler's grace
        # ending): the live replica is read again afterwards, and the replay is compared at equal offsets.
        live_after, live_offsets_after = projection_checksum(sql_projection_path(s))
        _, replayed_offsets = projection_checksum(into)
        seq_checksum, seq_offsets = projection_checksum(
            s.state_dir / "sequencer")

    eps = result["events_per_second"]
    # Checksums are compared at equal offsets: the replay against the live replica as it was before the
    # replay or, when agents committed meanwhile (the replay reads to the end), as it is after it.
    by_offsets = {_offsets_key(live_offsets): live_checksum, _offsets_key(live_offsets_after): live_after}
    compared_with = by_offsets.get(_offsets_key(replayed_offsets))
    match = compared_with is not None and result["checksum"] == compared_with
    emit({
        "bench": "replay",
        "goal": f"replay >= {GOAL_EVENTS_PER_S} events/s on a log of >= {MIN_LOG_EVENTS} events, "
                "replayed checksum == live SQL projection checksum",
        "goal_met": bool(eps >= GOAL_EVENTS_PER_S and result["events"] >= MIN_LOG_EVENTS and match),
        "replay": {**{k: (round(v, 3) if isinstance(v, float) else v) for k, v in result.items()}},
        "checksum_equal": match,
        "live_checksum": live_checksum,
        "live_offsets": {f"{t}/{p}": o for (t, p), o in live_offsets.items()},
        "live_offsets_after_replay": {f"{t}/{p}": o for (t, p), o in live_offsets_after.items()},
        "replayed_offsets": {f"{t}/{p}": o for (t, p), o in replayed_offsets.items()},
        "checksum_compared_at": "live replica before the replay" if replayed_offsets == live_offsets else
                                "live replica after the replay" if replayed_offsets == live_offsets_after else
                                "no live state at the replay's offsets (the replica moved on): not compared",
        "sequencer_projection_checksum_equal": by_offsets.get(_offsets_key(seq_offsets)) == seq_checksum,
        "sequencer": {"commands": args.commands, "produce_s": round(produce_s, 2),
                      "produce_to_sequenced_s": round(sequenced_s, 2),
                      "commands_per_s": round(args.commands / sequenced_s),
                      "events_end_offset_before": events_before, "events_end_offset_after": events_after,
                      "note": "produce and sequencing overlap; commands/s = commands / (first produce → "
                              "last command applied)"},
        "sql_replica": {"extra_catch_up_after_sequencer_s": round(replica_lag_s, 2),
                        "produce_to_replica_caught_up_s": round(replica_total_s, 2)},
        "sizes": {"commands": args.commands, "log_events_replayed": result["events"], "database": db,
                  "table_id": table_id},
        "machine": machine(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
