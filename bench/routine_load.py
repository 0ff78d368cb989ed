"""ROUTINE LOAD from Kafka: throughput against a plain Kafka consumer, and end-to-end lag.

    .venv/bin/python -m bench.routine_load [--rows 1000000] [--partitions 1] [--lag-records 200]
        [--lag-interval-ms 50] [--batch-interval 0.2] [--kafka-property KEY=VALUE …] [--no-breakdown]
        [--keep-stack]

1. Throughput. --rows JSON records of ~100 bytes each
   (`{"id": i, "name": "user<i>", "score": f, "ts": "2026-12-01 10:00:00", "tag": "…"}`) go to a fresh
   topic (--partitions partitions, round robin) with a plain confluent-kafka Producer (linger,
   large batches, lz4) before anything is timed.
   (a) The peer: a plain confluent-kafka Consumer (fresh group id, partitions assigned from the
       beginning) that only consumes and `json.loads` every value; timed from its creation until
       --rows records are parsed → rows/s.
   (b) ROUTINE LOAD: a Duplicate Key table (id BIGINT, name VARCHAR(32), score DOUBLE, ts DATETIME,
       tag VARCHAR(64)), one job with OFFSET_BEGINNING, max_batch_rows 200000, max_batch_interval 1;
       timed from CREATE ROUTINE LOAD until `SELECT count(*)` (polled every 0.2 s) is --rows → rows/s.
       Then count(*) and count(DISTINCT id) must both be --rows (exactly once) and the job's
       Statistic must agree. The count timeline (when each batch became visible) and SHOW ROUTINE
       LOAD's Statistic snapshots are reported.
   (c) Breakdown (unless --no-breakdown): the task's per-batch pipeline replayed in this process on
       one batch of max_batch_rows records of the same topic — consume (after 1 s of prefetch, with
       the per-record calls of the task's `_collect`), `records_table`,
       `load_batch` (DuckDB parse + typing), `write_rowsets` (Parquet, into a scratch directory) —
       each stage timed, to tell where a batch's time goes (the worker's `_commit` logs nothing).
2. End-to-end lag. A second job (max_batch_interval --batch-interval) on its own 1-partition topic
   and table; after one warm-up record is visible, --lag-records records are produced one at a
   time every --lag-interval-ms (each carries its produce time, epoch seconds, in `score`). A second
   connection polls `SELECT max(id)` every 20 ms; a record's lag is from just before its produce()
   to the reply of the first poll that shows it (ids only grow and one partition commits in order)
   → p50/p99 ms. No goal: reported only.
Both jobs are stopped at the end. --kafka-property KEY=VALUE (repeatable) passes a librdkafka consumer
property to both jobs (FROM KAFKA's "property.KEY"), the peer and the breakdown alike; by default
every consumer runs on librdkafka's defaults.
Goal: routine load rows/s >= 50 % of the peer's AND >= 100,000 rows/s, loaded exactly once.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, Message, Producer, TopicPartition
from confluent_kafka.admin import NewTopic

from bench.stack import (
    add_stack_args,
    bench_stack,
    emit,
    fresh_database,
    log,
    machine,
    percentiles_ms,
    sql_connect,
    sql_projection_path,
)
from schemas.config import Settings

GOAL_RATIO = 0.5
GOAL_ROWS_PER_S = 100_000
RECORD_BYTES = 100
BATCH_ROWS = 200_000
BATCH_INTERVAL_S = 1
COUNT_POLL_S = 0.2
LAG_POLL_S = 0.02
COLUMNS = "id BIGINT, name VARCHAR(32), score DOUBLE, ts DATETIME, tag VARCHAR(64)"
_PAD = "abcdefghijklmnopqrstuvwxyz0123456789" * 2


def record(i: int) -> bytes:
    """One ~100-byte JSON row (exactly RECORD_BYTES while the id has at most 9 digits)."""
    head = f'{{"id": {i}, "name": "user{i}", "score": {i % 100_000 / 8}, "ts": "2026-12-01 10:00:00", "tag": "'
    room = max(1, RECORD_BYTES - len(head) - 2)
    start = i % 36
    return (head + _PAD[start:start + room] + '"}').encode()


def create_topic(s: Settings, partitions: int) -> str:
    from infra.topics import admin_client

    name = f"bench-routine-load-{uuid.uuid4().hex[:10]}"
    admin = admin_client(s)  # kept referenced until the result: a collected client cancels the request
    futures = admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)],
                                  request_timeout=30)
    futures[name].result(30)
    return name


def end_offsets(s: Settings, topic: str, partitions: int) -> int:
    consumer = Consumer({"bootstrap.servers": s.kafka_bootstrap, "group.id": f"bench-wm-{uuid.uuid4().hex}"})
    try:
        return sum(consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions))
    finally:
        consumer.close()


def produce_rows(s: Settings, topic: str, rows: int, partitions: int) -> dict[str, Any]:
    producer = Producer({"bootstrap.servers": s.kafka_bootstrap, "linger.ms": 50, "batch.size": 1_000_000,
                         "compression.type": "lz4", "queue.buffering.max.messages": 1_000_000,
                         "queue.buffering.max.kbytes": 1_048_576, "acks": "all"})
    t0 = time.perf_counter()
    total_bytes = 0
    for i in range(rows):
        value = record(i)
        total_bytes += len(value)
        while True:
            try:
                producer.produce(topic, value=value, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    left = producer.flush(120)
    wall = time.perf_counter() - t0
    if left:
        raise SystemExit(f"bench/routine_load: {left} records still unsent after flush")
    landed = end_offsets(s, topic, partitions)
    if landed != rows:
        raise SystemExit(f"bench/routine_load: topic {topic} holds {landed} records, expected {rows}")
    return {"wall_s": round(wall, 3), "rows_per_s": round(rows / wall, 1), "bytes": total_bytes,
            "avg_record_bytes": round(total_bytes / rows, 1)}


def peer_consume(s: Settings, topic: str, rows: int, partitions: int, timeout_s: float,
                 client: dict[str, str]) -> dict[str, Any]:
    t0 = time.perf_counter()
    consumer = Consumer({**client, "bootstrap.servers": s.kafka_bootstrap, "group.id": f"bench-peer-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "enable.partition.eof": False})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    parsed = 0
    ids = 0
    try:
        while parsed < rows:
            if time.perf_counter() - t0 > timeout_s:
                raise SystemExit(f"bench/routine_load: the peer consumer parsed only {parsed} of {rows} records")
            for message in consumer.consume(num_messages=10_000, timeout=1.0):
                if message.error() is not None:
                    raise SystemExit(f"bench/routine_load: peer consumer error {message.error()}")
                ids += json.loads(message.value())["id"]  # type: ignore[arg-type]
                parsed += 1
        wall = time.perf_counter() - t0
    finally:
        consumer.close()
    if ids != rows * (rows - 1) // 2:
        raise SystemExit("bench/routine_load: the peer consumer read unexpected ids")
    return {"rows_per_s": round(rows / wall, 1), "wall_s": round(wall, 3)}


def _show(cur: Any, job: str) -> dict[str, Any]:
    cur.execute(f"SHOW ROUTINE LOAD FOR {job}")
    names = [d[0] for d in cur.description]
    row = dict(zip(names, cur.fetchone(), strict=True))
    return {"state": row["State"], "statistic": json.loads(row["Statistic"]), "progress": json.loads(row["Progress"]),
            "lag": json.loads(row["Lag"]), "other_msg": row["OtherMsg"], "reason": row["ReasonOfStateChanged"]}


def _create_job(cur: Any, db: str, job: str, table: str, s: Settings, topic: str, interval_s: float,
                client: dict[str, str]) -> None:
    extra = "".join(f', "property.{k}"="{v}"' for k, v in client.items())
    cur.execute(f'CREATE ROUTINE LOAD {db}.{job} ON {table} PROPERTIES ("format"="json", '
                f'"max_batch_interval"="{interval_s:g}", "max_batch_rows"="{BATCH_ROWS}") '
                f'FROM KAFKA ("kafka_broker_list"="{s.kafka_bootstrap}", "kafka_topic"="{topic}", '
                f'"property.kafka_default_offsets"="OFFSET_BEGINNING"{extra})')


def _create_table(cur: Any, table: str, buckets: int) -> None:
    cur.execute(f'CREATE TABLE {table} ({COLUMNS}) ENGINE=OLAP DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) '
                f'BUCKETS {buckets} PROPERTIES ("replication_num" = "1")')


def stop_job(cur: Any, job: str) -> None:
    try:
        cur.execute(f"STOP ROUTINE LOAD FOR {job}")
    except Exception as exc:  # noqa: BLE001 - best effort at the end; reported, the result still prints
        log(f"routine_load: could not stop job {job}: {exc}")


def routine_load_throughput(s: Settings, db: str, topic: str, rows: int, buckets: int,
                            timeout_s: float, client: dict[str, str]) -> dict[str, Any]:
    conn = sql_connect(s, db)
    job, table = "rl_throughput", "t_throughput"
    with conn.cursor() as cur:
        _create_table(cur, table, buckets)
        timeline: list[tuple[float, int]] = []
        stats: list[dict[str, Any]] = []
        t0 = time.perf_counter()
        _create_job(cur, db, job, table, s, topic, BATCH_INTERVAL_S, client)
        created_s = time.perf_counter() - t0
        count = 0
        last_show = 0.0
        try:
            while True:
                cur.execute(f"SELECT count(*) FROM {table}")
                count = cur.fetchone()[0]
                now = time.perf_counter() - t0
                if not timeline or timeline[-1][1] != count:
                    timeline.append((now, count))
                if count >= rows:
                    break
                if now - last_show >= 1.0:
                    last_show = now
                    shown = _show(cur, job)
                    stats.append({"t_s": round(now, 2), **shown["statistic"]})
                    if shown["state"] != "RUNNING" or shown["statistic"]["errorRows"]:
                        raise SystemExit(f"bench/routine_load: job {job} {shown['state']}: {shown}")
                if now > timeout_s:
                    raise SystemExit(f"bench/routine_load: only {count} of {rows} rows after {now:.0f} s")
                time.sleep(COUNT_POLL_S)
            wall = time.perf_counter() - t0
            cur.execute(f"SELECT count(*), count(DISTINCT id), min(id), max(id) FROM {table}")
            total, distinct, lo, hi = cur.fetchone()
            final = _show(cur, job)
        finally:
            stop_job(cur, job)
    conn.close()
    statistic = final["statistic"]
    exactly_once = (total, distinct, lo, hi) == (rows, rows, 0, rows - 1) and statistic["loadedRows"] == rows \
        and statistic["errorRows"] == 0
    # When each batch became visible: the count's steps (a 0.2 s poll, so ±0.2 s).
    steps = [{"t_s": round(t, 2), "rows": c} for t, c in timeline if c]
    first_visible = steps[0]["t_s"] if steps else None
    gaps = [round(b["t_s"] - a["t_s"], 2) for a, b in zip(steps, steps[1:], strict=False)]
    return {
        "rows_per_s": round(rows / wall, 1), "wall_s": round(wall, 3), "create_statement_s": round(created_s, 3),
        "first_rows_visible_s": first_visible,
        "steady_rows_per_s": round((steps[-1]["rows"] - steps[0]["rows"]) / (steps[-1]["t_s"] - steps[0]["t_s"]), 1)
        if len(steps) > 1 and steps[-1]["t_s"] > steps[0]["t_s"] else None,
        "count": total, "distinct_ids": distinct, "exactly_once": exactly_once,
        "committed_batches": statistic["committedTaskNum"], "statistic": statistic, "progress": final["progress"],
        "visible_steps": steps, "seconds_between_steps": gaps, "statistic_samples": stats,
    }


def batch_breakdown(s: Settings, db: str, topic: str, rows: int, partitions: int,
                    client: dict[str, str]) -> dict[str, Any]:
    """The routine load task's per-batch work, stage by stage, on one batch of this topic, in this
    process (the same functions `streams.routine_load_task._commit` calls; rowsets go to a scratch
    directory and are never committed)."""
    import duckdb

    from projections.load_source import load_batch, plan_load, records_table
    from projections.projection import Projection
    from projections.routine_loads import RoutineLoadJob
    from projections.rows import write_rowsets
    from storage.tiers import LOCAL_MEDIA, LocalTiers

    n = min(rows, BATCH_ROWS)
    projection = Projection(sql_projection_path(s), read_only=True)
    try:
        database = projection.database_by_name(db)
        assert database is not None
        table = projection.table_by_name(database.db_id, "t_throughput")
        assert table is not None
        job: RoutineLoadJob | None = projection.routine_load(database.db_id, "rl_throughput")
        assert job is not None
        spec = job.spec
    finally:
        projection.close()
    consumer = Consumer({**client, "bootstrap.servers": s.kafka_bootstrap,
                         "group.id": f"bench-breakdown-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "enable.auto.offset.store": False,
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed",
                         "enable.partition.eof": False})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    messages: list[Message] = []
    t0 = time.perf_counter()
    try:
        while not messages:  # the consumer is up and fetching; then librdkafka prefetches, as in the task
            messages.extend(m for m in consumer.consume(num_messages=1, timeout=1.0) if m.error() is None)
            if time.perf_counter() - t0 > 60:
                raise SystemExit("bench/routine_load: breakdown could not read its batch")
        first_s = time.perf_counter() - t0
        time.sleep(1.0)
        t = time.perf_counter()
        size = 0
        while len(messages) < n:  # what the task's `_collect` does per record
            for message in consumer.consume(num_messages=min(10_000, n - len(messages)), timeout=1.0):
                if message.error() is not None:
                    continue
                _ = message.partition(), message.offset()
                value = message.value()
                size += len(value) if value else 0
                messages.append(message)
            if time.perf_counter() - t > 60:
                raise SystemExit("bench/routine_load: breakdown could not read its batch")
        stages: dict[str, float] = {"collect_s": time.perf_counter() - t}
    finally:
        consumer.close()
    cur = duckdb.connect()
    t = time.perf_counter()
    plan = plan_load(spec, table)
    stages["plan_load_s"] = time.perf_counter() - t
    t = time.perf_counter()
    records = records_table([m.partition() for m in messages], [m.offset() for m in messages],
                            [m.value() for m in messages])
    stages["records_table_s"] = time.perf_counter() - t
    t = time.perf_counter()
    loaded = load_batch(cur, table, spec, plan, records)
    stages["load_batch_s"] = time.perf_counter() - t
    with tempfile.TemporaryDirectory(prefix="bench-rl-") as scratch:
        tiers = LocalTiers({name: Path(scratch) / name for name in LOCAL_MEDIA})
        t = time.perf_counter()
        rowsets = write_rowsets(tiers, table, loaded.rows)
        stages["write_rowsets_s"] = time.perf_counter() - t
    cur.close()
    total = sum(stages.values())
    return {"batch_rows": n, "loaded_rows": loaded.rows.num_rows, "rowsets": len(rowsets),
            "first_record_s": round(first_s, 3), "note": "collect_s: from a consumer that had 1 s to prefetch",
            **{k: round(v, 3) for k, v in stages.items()}, "total_s": round(total, 3),
            "rows_per_s_cpu_bound": round(n / total, 1) if total else None}


def lag(s: Settings, db: str, records: int, interval_ms: float, batch_interval_s: float,
        buckets: int, client: dict[str, str]) -> dict[str, Any]:
    topic = create_topic(s, 1)
    job, table = "rl_lag", "t_lag"
    conn = sql_connect(s, db)
    producer = Producer({"bootstrap.servers": s.kafka_bootstrap, "linger.ms": 0, "acks": "all"})
    produced: dict[int, float] = {}
    visible: dict[int, float] = {}
    poll_query_s: list[float] = []
    done = threading.Event()
    failure: list[BaseException] = []

    def poller() -> None:
        try:
            pconn = sql_connect(s, db)
            with pconn, pconn.cursor() as pcur:
                seen = -1
                while not done.is_set():
                    q0 = time.perf_counter()
                    pcur.execute(f"SELECT max(id) FROM {table}")
                    top = pcur.fetchone()[0]
                    q1 = time.perf_counter()
                    poll_query_s.append(q1 - q0)
                    if top is not None and top > seen:
                        for i in range(seen + 1, top + 1):
                            visible[i] = q1
                        seen = top
                        if seen >= records:
                            return
                    time.sleep(max(0.0, LAG_POLL_S - (time.perf_counter() - q0)))
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            failure.append(exc)

    def send(i: int) -> None:
        produced[i] = time.perf_counter()
        value = (f'{{"id": {i}, "name": "lag{i}", "score": {time.time():.6f}, "ts": "2026-12-01 10:00:00", '
                 f'"tag": "lag"}}').encode()
        producer.produce(topic, value=value, partition=0)
        producer.poll(0)

    with conn.cursor() as cur:
        _create_table(cur, table, buckets)
        _create_job(cur, db, job, table, s, topic, batch_interval_s, client)
        thread = threading.Thread(target=poller, name="lag-poller", daemon=True)
        try:
            thread.start()
            send(0)  # warm-up: the task is up and has read once before anything is measured
            producer.flush(10)
            deadline = time.perf_counter() + 60
            while 0 not in visible:
                if failure or time.perf_counter() > deadline:
                    raise SystemExit(f"bench/routine_load: the warm-up record never became visible {failure}")
                time.sleep(0.01)
            warmup_s = visible[0] - produced[0]
            t0 = time.perf_counter()
            for i in range(1, records + 1):
                wait = t0 + (i - 1) * interval_ms / 1000 - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                send(i)
            producer.flush(10)
            thread.join(timeout=60)
            done.set()
            if failure:
                raise SystemExit(f"bench/routine_load: lag poller failed: {failure[0]!r}")
            missing = [i for i in range(1, records + 1) if i not in visible]
            if missing:
                raise SystemExit(f"bench/routine_load: {len(missing)} lag records never became visible")
            cur.execute(f"SELECT count(*), count(DISTINCT id) FROM {table}")
            total, distinct = cur.fetchone()
            final = _show(cur, job)
        finally:
            done.set()
            stop_job(cur, job)
    conn.close()
    return {"lag": percentiles_ms([visible[i] - produced[i] for i in range(1, records + 1)]),
            "warmup_record_s": round(warmup_s, 3), "count": total, "distinct_ids": distinct,
            "exactly_once": total == distinct == records + 1,
            "committed_batches": final["statistic"]["committedTaskNum"],
            "poll_query": percentiles_ms(poll_query_s), "topic": topic}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000, help="records for the throughput part")
    ap.add_argument("--partitions", type=int, default=1, help="partitions of the throughput topic")
    ap.add_argument("--buckets", type=int, default=1, help="buckets of the tables")
    ap.add_argument("--lag-records", type=int, default=200, help="records produced one at a time for the lag part")
    ap.add_argument("--lag-interval-ms", type=float, default=50, help="time between two lag records")
    ap.add_argument("--batch-interval", type=float, default=0.2, help="max_batch_interval (s) of the lag job")
    ap.add_argument("--timeout-s", type=float, default=None,
                    help="give up on the routine load after this long (default 60 s + 1 s per 5,000 rows)")
    ap.add_argument("--kafka-property", action="append", default=[], metavar="KEY=VALUE",
                    help="a librdkafka consumer property for both jobs (as FROM KAFKA's property.KEY), the peer "
                         "and the breakdown, e.g. max.partition.fetch.bytes=16777216; repeatable; default none")
    ap.add_argument("--no-breakdown", action="store_true", help="skip replaying one batch's stages in process")
    add_stack_args(ap)
    args = ap.parse_args(argv)
    if args.rows < 1 or args.partitions < 1 or args.lag_records < 1:
        ap.error("--rows, --partitions and --lag-records must be at least 1")
    timeout_s = args.timeout_s or 60 + args.rows / 5_000
    client = dict(kv.split("=", 1) for kv in args.kafka_property)

    with bench_stack(args.keep_stack) as s:
        db = fresh_database(s, "bench_routine_load")
        topic = create_topic(s, args.partitions)
        log(f"routine_load: producing {args.rows} records to {topic} ({args.partitions} partitions) …")
        produced = produce_rows(s, topic, args.rows, args.partitions)
        log(f"routine_load: produced in {produced['wall_s']} s; the peer consumer reads them …")
        peer = peer_consume(s, topic, args.rows, args.partitions, timeout_s, client)
        log(f"routine_load: peer {peer['rows_per_s']} rows/s; ROUTINE LOAD …")
        loaded = routine_load_throughput(s, db, topic, args.rows, args.buckets, timeout_s, client)
        log(f"routine_load: routine load {loaded['rows_per_s']} rows/s ({loaded['committed_batches']} batches)")
        breakdown = None
        if not args.no_breakdown:
            log("routine_load: replaying one batch's stages in process …")
            breakdown = batch_breakdown(s, db, topic, args.rows, args.partitions, client)
            log(f"routine_load: breakdown {breakdown}")
        log(f"routine_load: lag: {args.lag_records} records every {args.lag_interval_ms} ms, "
            f"max_batch_interval {args.batch_interval} s …")
        latency = lag(s, db, args.lag_records, args.lag_interval_ms, args.batch_interval, args.buckets, client)
        log(f"routine_load: lag {latency['lag']}")
    rl, pr = loaded["rows_per_s"], peer["rows_per_s"]
    ratio = rl / pr if pr else 0.0
    goals = {"ratio_at_least_0.5": ratio >= GOAL_RATIO, "rows_per_s_at_least_100k": rl >= GOAL_ROWS_PER_S,
             "exactly_once": bool(loaded["exactly_once"])}
    emit({
        "bench": "routine_load",
        "goal": "ROUTINE LOAD rows/s >= 50% of a plain confluent-kafka consumer that only json.loads each record, "
                "and >= 100,000 rows/s, same run, every row loaded exactly once (lag: reported, no goal)",
        "goal_met": all(goals.values()),
        "goals": goals,
        "routine_load": loaded,
        "peer_consumer": peer,
        "ratio_routine_load_over_peer": round(ratio, 3),
        "batch_breakdown": breakdown,
        "lag": latency,
        "produce": produced,
        "sizes": {"rows": args.rows, "partitions": args.partitions, "buckets": args.buckets,
                  "record_bytes": produced["avg_record_bytes"], "max_batch_rows": BATCH_ROWS,
                  "max_batch_interval_s": BATCH_INTERVAL_S, "count_poll_s": COUNT_POLL_S,
                  "lag_records": args.lag_records, "lag_interval_ms": args.lag_interval_ms,
                  "lag_max_batch_interval_s": args.batch_interval, "lag_poll_s": LAG_POLL_S,
                  "table": f"DUPLICATE KEY(id) ({COLUMNS}), {args.buckets} bucket(s)", "database": db,
                  "kafka_properties": client, "topic": topic},
        "machine": machine(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
