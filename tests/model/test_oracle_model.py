"""Model-based test: random sequences of writes against Strata (through the SQL port) and the
in-memory oracle must agree after every step, on all three keys models.

Cooldown is one of the steps: once a run attaches a storage policy (1 s ttl, on the stack's
MinIO), every later write cools in the background while the other steps go on — loads, deletes,
updates, schema changes and compactions then meet cooled and cooling rowsets."""

from __future__ import annotations

import atexit
import copy
import functools
import itertools
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pymysql
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as s
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from schemas.config import load_settings
from tests.depth import examples
from tests.model.oracle import DELETE_SIGN, SEQUENCE, OracleColumn, OracleTable, sort_rows
from tests.query.routine_load_kit import kafka_source, new_topic, produce, show, wait_for
from tests.query.s3_kit import finished_job, keys, minio, put
from tests.query.stream_load_kit import OtherServer, curl_2pc, curl_load, free_port, start_sql_server

pytestmark = pytest.mark.integration

_tables = itertools.count()
KEYS = s.integers(min_value=0, max_value=7)
VALUES = s.one_of(s.none(), s.integers(min_value=-50, max_value=50))
# Sequence values: few, so that ties and NULLs (lowest) come up often.
SEQUENCES = s.one_of(s.none(), s.integers(min_value=0, max_value=4))


# How long a merge-on-write machine waits for the delete bitmaps of its last step before it reads.
SETTLE_S = 1.5


def connect() -> pymysql.connections.Connection:
    return pymysql.connect(host="127.0.0.1", port=int(os.environ.get("STRATA_SQL_PORT", "9030")), user="root",
                           autocommit=True)


@functools.cache
def cold_policy() -> str:
    """A storage policy on the stack's MinIO with a 1 s cooldown_ttl, made once per test process."""
    config = load_settings()
    bucket = f"model-{uuid.uuid4().hex[:10]}"
    minio().make_bucket(bucket)
    name = f"model_{uuid.uuid4().hex[:8]}"
    conn = connect()
    with conn.cursor() as cur:
        cur.execute(f'CREATE RESOURCE "{name}" PROPERTIES ("type"="s3", "s3.endpoint"="{config.minio_endpoint}", '
                    f'"s3.region"="us-east-1", "s3.bucket"="{bucket}", "s3.root.path"="model", '
                    f'"s3.access_key"="{config.minio_root_user}", '
                    f'"s3.secret_key"="{config.minio_root_password.get_secret_value()}")')
        cur.execute(f'CREATE STORAGE POLICY {name} PROPERTIES ("storage_resource"="{name}", "cooldown_ttl"="1")')
    conn.close()
    return name


@functools.cache
def chunking_server() -> OtherServer:
    """A second SQL server of the stack that reads Stream Load bodies and Broker Load files in chunks
    of 16 bytes (STRATA_STREAM_LOAD_CHUNK_BYTES), started once per test process: the rules' few rows
    cross chunk boundaries, so the chunked paths of every keys model meet the oracle."""
    sql_port, http_port = free_port(), free_port()
    proc = start_sql_server(sql_port, http_port, settings={"STRATA_STREAM_LOAD_CHUNK_BYTES": "16"})
    atexit.register(proc.kill)
    return OtherServer(sql_port, http_port, proc.pid)


@functools.cache
def broker_bucket() -> str:
    """The MinIO bucket the Broker Load rule puts its files in, made once per test process."""
    bucket = f"model-in-{uuid.uuid4().hex[:10]}"
    minio().make_bucket(bucket)
    return bucket


def _literal(value: Any) -> str:
    return "NULL" if value is None else str(value)


# A BITMAP / HLL value column is written through a function of the drawn integer (the oracle holds the
# set it makes) and read through one that shows what it holds.
SET_WRITES = {"BITMAP": "to_bitmap", "HLL": "hll_hash"}
SET_READS = {"BITMAP": "bitmap_to_string", "HLL": "hll_cardinality"}


class TableMachine(RuleBasedStateMachine):
    keys_model = "DUPLICATE"
    value_aggregation: str | None = None
    value_type = "INT"  # v1's type: BITMAP / HLL machines write and read it through SET_WRITES / SET_READS
    properties = ""
    # RANGE partitions on k: p_low [0, 4) always, p_high [4, 8) dropped and added back by steps.
    partitioned = False
    # Unique Key with a hidden sequence column (function_column.sequence_type): every load names it.
    sequenced = False
    # Whether the REPLACE WITH TABLE rule runs (see TimeTravelMachine).
    replaces = True
    # Whether the machine may go on with a clone as its table (TimeTravelMachine keeps one table's history).
    adopts = True
    # Unique Key: merge-on-write (Doris' default; reads subtract delete bitmaps) or merge-on-read.
    merge_on_write = True

    def __init__(self) -> None:
        super().__init__()
        self.conn = connect()
        self.cur = self.conn.cursor()
        self.name = f"m_{self.keys_model.lower()}_{os.getpid()}_{next(_tables)}"
        self.next_column = 2
        self.cooling = False
        self.topic: str | None = None
        self.produced = 0
        self.high = True
        # Tables that took the old content's name away by a swapping REPLACE: dropped at teardown.
        self.swapped_out: list[str] = []
        # Zero-copy clones of the table: name → (their own oracle, whether they have the p_high partition).
        self.clones: dict[str, tuple[OracleTable, bool]] = {}

    def sql(self, statement: str) -> list[tuple[Any, ...]]:
        self.cur.execute(statement)
        return list(self.cur.fetchall())

    def _agg(self) -> str:
        return f" {self.value_aggregation}" if self.keys_model == "AGGREGATE" else ""

    def _written(self, name: str, value: Any) -> str:
        """The SQL writing `value` into column `name`."""
        if name == "v1" and self.value_type in SET_WRITES:
            return f"{SET_WRITES[self.value_type]}({_literal(value)})"
        return _literal(value)

    def shown(self, names: list[str]) -> str:
        """The select list reading `names` as the oracle shows them (a set column through its read function)."""
        return ", ".join(f"{SET_READS[self.value_type]}({n}) AS {n}" if n == "v1" and self.value_type in SET_READS
                         else n for n in names)

    def every_column(self, names: list[str]) -> str:
        """`*`, unless a set column must be read through its function (then the columns `names`)."""
        return self.shown(names) if self.value_type in SET_READS else "*"

    @initialize()
    def create(self) -> None:
        self.sql("CREATE DATABASE IF NOT EXISTS model_test")
        self.sql("USE model_test")
        partitions = ('PARTITION BY RANGE(k) (PARTITION p_low VALUES [("0"), ("4")), '
                      'PARTITION p_high VALUES [("4"), ("8"))) ') if self.partitioned else ""
        properties = self.properties
        if self.keys_model == "UNIQUE" and not self.merge_on_write:
            merge = '"enable_unique_key_merge_on_write" = "false"'
            properties = properties[:-1] + f", {merge})" if properties else f"PROPERTIES ({merge})"
        self.sql(f"CREATE TABLE {self.name} (k INT, v1 {self.value_type}{self._agg()}) {self.keys_model} KEY(k) "
                 f"{partitions}DISTRIBUTED BY HASH(k) BUCKETS 3 {properties}")
        self.oracle = OracleTable(self.keys_model, [OracleColumn("k"), OracleColumn("v1", self.value_aggregation)],
                                  sequenced=self.sequenced)

    @rule(rows=s.lists(s.tuples(KEYS, s.lists(VALUES, min_size=4, max_size=4)), min_size=1, max_size=6))
    def insert(self, rows: list[tuple[int, list[Any]]]) -> None:
        rows = self._placeable(rows)
        if not rows:
            return
        values = self.oracle.names[1:]
        batch = [{"k": k, **dict(zip(values, vs, strict=False))} for k, vs in rows]
        self._load(batch, self.oracle.names)
        self.oracle.insert(batch)

    # A sequenced table's loads must name their sequence values; the overwrite rule writes plain rows.
    @precondition(lambda self: not self.sequenced)
    @rule(rows=s.lists(s.tuples(KEYS, s.lists(VALUES, min_size=4, max_size=4)), max_size=6),
          partition=s.sampled_from([None, "p_low", "p_high"]))
    def overwrite(self, rows: list[tuple[int, list[Any]]], partition: str | None) -> None:
        """INSERT OVERWRITE of the whole table, or (partitioned runs) of one partition with rows of it
        only; no rows at all empties what it covers."""
        if not self.partitioned or (partition == "p_high" and not self.high):
            partition = None
        low = partition == "p_low"
        rows = [r for r in self._placeable(rows) if partition is None or (r[0] < 4) == low]
        values = self.oracle.names[1:]
        batch = [{"k": k, **dict(zip(values, vs, strict=False))} for k, vs in rows]
        names = ", ".join(self.oracle.names)
        source = ("VALUES " + ", ".join("(" + ", ".join(self._written(n, r.get(n)) for n in self.oracle.names) + ")"
                                        for r in batch) if batch else f"SELECT {names} FROM {self.name} WHERE 1 = 0")
        scope = f" PARTITION ({partition})" if partition else ""
        self.sql(f"INSERT OVERWRITE TABLE {self.name}{scope} ({names}) {source}")
        self.oracle.overwrite(batch, (lambda r: True) if partition is None else (lambda r: (r["k"] < 4) == low))

    def _load(self, batch: list[dict[str, Any]], names: list[str], *, sequence: bool | None = None,
              table: str | None = None) -> None:
        """INSERTs `batch`'s `names` columns into `table` (default: the machine's); with `sequence` (default:
        on a sequenced table) the rows name their sequence value (NULL when a row has none), a row with
        DELETE_SIGN its delete sign."""
        hidden = {SEQUENCE: "__DORIS_SEQUENCE_COL__", DELETE_SIGN: "__DORIS_DELETE_SIGN__"}
        sequence = self.sequenced if sequence is None else sequence
        extra = [h for h in hidden if (h == SEQUENCE and sequence) or any(h in r for r in batch)]
        columns = ", ".join([*names, *(hidden[h] for h in extra)])
        tuples = ", ".join("(" + ", ".join(self._written(n, r.get(n)) for n in [*names, *extra]) + ")" for r in batch)
        self.sql(f"INSERT INTO {table or self.name} ({columns}) VALUES {tuples}")

    @precondition(lambda self: self.keys_model == "UNIQUE")
    @rule(rows=s.lists(s.tuples(KEYS, s.lists(VALUES, min_size=4, max_size=4), SEQUENCES, s.booleans()),
                       min_size=1, max_size=6))
    def cdc_load(self, rows: list[tuple[int, list[Any], int | None, bool]]) -> None:
        """A CDC batch: upserts and deletes by `__DORIS_DELETE_SIGN__`, with sequence values when the
        table has them."""
        rows = [r for r in rows if self.high or r[0] < 4]
        if not rows:
            return
        values = self.oracle.names[1:]
        batch = [{"k": k, **dict(zip(values, vs, strict=False)), DELETE_SIGN: int(sign),
                  **({SEQUENCE: seq} if self.sequenced else {})} for k, vs, seq, sign in rows]
        self._load(batch, self.oracle.names)
        self.oracle.insert(batch)

    # Partial column updates are a merge-on-write table's (Doris ignores the session variable on the others,
    # and Stream Load refuses partial_columns there).
    @precondition(lambda self: self.keys_model == "UNIQUE" and self.merge_on_write and len(self.oracle.columns) > 2)
    @rule(rows=s.lists(s.tuples(KEYS, s.lists(VALUES, min_size=4, max_size=4), SEQUENCES), min_size=1, max_size=4),
          data=s.data(), with_sequence=s.booleans())
    def partial_update(self, rows: list[tuple[int, list[Any], int | None]], data: s.DataObject,
                       with_sequence: bool) -> None:
        """SET enable_unique_key_partial_update: an INSERT naming some value columns keeps the others."""
        rows = [r for r in rows if self.high or r[0] < 4]
        if not rows:
            return
        value_names = self.oracle.names[1:]
        named = data.draw(s.lists(s.sampled_from(value_names), min_size=1, max_size=len(value_names) - 1,
                                  unique=True))
        given = [n for n in value_names if n in named]
        batch = [{"k": k, **dict(zip(given, vs, strict=False)),
                  **({SEQUENCE: seq} if self.sequenced and with_sequence else {})} for k, vs, seq in rows]
        self.sql("SET enable_unique_key_partial_update = true")
        try:
            self._load(batch, ["k", *given], sequence=self.sequenced and with_sequence)
        finally:
            self.sql("SET enable_unique_key_partial_update = false")
        self.oracle.partial_insert(batch, ["k", *given])

    # A routine load job stays with its table id, so after a swap its rows would land under the other name.
    @precondition(lambda self: self.topic is None and self.replaces)
    @rule(rows=s.lists(s.tuples(KEYS, s.lists(VALUES, min_size=4, max_size=4)), max_size=6), swap=s.booleans())
    def replace_with_table(self, rows: list[tuple[int, list[Any]]], swap: bool) -> None:
        """ALTER TABLE … REPLACE WITH TABLE (dbt-doris' `table` materialization): a table made LIKE this
        one and loaded with `rows` takes the name; with swap the old content lives on under the other
        name, without it the old table is dropped."""
        side = f"{self.name}_r{next(_tables)}"
        self.sql(f"CREATE TABLE {side} LIKE {self.name}")
        replacement = OracleTable(self.keys_model, copy.deepcopy(self.oracle.columns), sequenced=self.sequenced)
        values = self.oracle.names[1:]
        batch = [{"k": k, **dict(zip(values, vs, strict=False))} for k, vs in self._placeable(rows)]
        if batch:
            self._load(batch, self.oracle.names, table=side)
            replacement.insert(batch)
        self.sql(f"ALTER TABLE {self.name} REPLACE WITH TABLE {side} PROPERTIES ('swap' = '{str(swap).lower()}')")
        if swap:
            self.swapped_out.append(side)
        self.oracle = replacement
        self.name_taken()

    def name_taken(self) -> None:
        """Called after another table took the machine's name (time travel machines note the instant)."""

    @rule(batches=s.lists(s.lists(s.tuples(KEYS, s.lists(VALUES, min_size=4, max_size=4)), min_size=1, max_size=3),
                          min_size=1, max_size=3))
    def group_commit_insert(self, batches: list[list[tuple[int, list[Any]]]]) -> None:
        """A few inserts through group commit (sync_mode) must fold like plain inserts, in order."""
        self.sql(f'ALTER TABLE {self.name} SET ("group_commit_interval_ms" = "20")')
        self.sql("SET group_commit = sync_mode")
        try:
            for rows in batches:
                self.insert(rows)
        finally:
            self.sql("SET group_commit = off_mode")

    # A job must map the hidden sequence column (and a set column's function: left to Stream Load here).
    @precondition(lambda self: not self.sequenced and self.value_type == "INT")
    @rule(rows=s.lists(s.tuples(KEYS, s.lists(VALUES, min_size=4, max_size=4)), min_size=1, max_size=6))
    def routine_load(self, rows: list[tuple[int, list[Any]]]) -> None:
        """Rows produced to the topic a routine load job reads must fold like an INSERT of them, under
        the schema of the moment (the job outlives ADD and DROP COLUMN)."""
        rows = self._placeable(rows)
        if not rows:
            return
        if self.topic is None:
            self.topic = new_topic()
            self.sql(f'CREATE ROUTINE LOAD {self.name}_job ON {self.name} PROPERTIES ("format" = "json", '
                     f'"max_batch_interval" = "0.1") {kafka_source(self.topic)}')
        values = self.oracle.names[1:]
        batch = [{"k": k, **dict(zip(values, vs, strict=False))} for k, vs in rows]
        self.produced += produce(self.topic, [{n: r.get(n) for n in self.oracle.names} for r in batch])
        wait_for(lambda: show(self.conn, f"{self.name}_job")["Statistic"]["loadedRows"] >= self.produced,
                 f"{self.produced} rows loaded by {self.name}_job", timeout=30)
        self.oracle.insert(batch)

    @rule(rows=s.lists(s.tuples(KEYS, s.lists(VALUES, min_size=4, max_size=4), SEQUENCES, s.booleans()),
                       min_size=1, max_size=6), two_phase=s.booleans())
    def stream_load(self, rows: list[tuple[int, list[Any], int | None, bool]], two_phase: bool) -> None:
        """Rows sent by Stream Load (curl, CSV, NULL as \\N) fold like an INSERT of them: on a Unique Key
        table with merge_type MERGE (a row whose `del` field is 1 deletes its key) and the sequence
        column mapped by function_column.sequence_col; half the time through two-phase commit."""
        rows = [r for r in rows if self.high or r[0] < 4]
        if not rows:
            return
        unique = self.keys_model == "UNIQUE"
        fields = [*self.oracle.names, *(["sq"] if self.sequenced else []), *(["del"] if unique else [])]
        if self.value_type in SET_WRITES:  # the file's v1 is an integer: the mapping makes the set of it
            fields = ["v1_in" if f == "v1" else f for f in fields] + [f"v1={SET_WRITES[self.value_type]}(v1_in)"]
        headers = {"column_separator": ",", "columns": ", ".join(fields), "label": f"sl_{uuid.uuid4().hex}"}
        if unique:
            headers |= {"merge_type": "MERGE", "delete": "del = 1"}
        if self.sequenced:
            headers["function_column.sequence_col"] = "sq"
        if two_phase:
            headers["two_phase_commit"] = "true"
        values = self.oracle.names[1:]
        batch = [{"k": k, **dict(zip(values, vs, strict=False)),
                  **({DELETE_SIGN: int(sign)} if unique else {}), **({SEQUENCE: seq} if self.sequenced else {})}
                 for k, vs, seq, sign in rows]
        text = "".join(",".join("\\N" if v is None else str(v) for v in
                                [*(r.get(n) for n in self.oracle.names), *([r[SEQUENCE]] if self.sequenced else []),
                                 *([r[DELETE_SIGN]] if unique else [])]) + "\n" for r in batch)
        with tempfile.NamedTemporaryFile("w", suffix=".csv") as body:
            body.write(text)
            body.flush()
            # 2PC loads are read whole (and committed through the stack's server): the others in chunks.
            base = None if two_phase else chunking_server().base
            reply = curl_load(Path(body.name), "model_test", self.name, headers, base=base)
        assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == len(batch), reply
        if two_phase:
            assert curl_2pc("model_test", "commit", txn_id=reply["TxnId"])["status"] == "Success"
        self.oracle.insert(batch)

    # Broker Load names no sequence column here (Doris maps one with ORDER BY, not built): plain tables only.
    @precondition(lambda self: not self.sequenced and self.value_type == "INT")
    @rule(rows=s.lists(s.tuples(KEYS, s.lists(VALUES, min_size=4, max_size=4)), min_size=1, max_size=6))
    def broker_load(self, rows: list[tuple[int, list[Any]]]) -> None:
        """Rows in a CSV object on the stack's MinIO, loaded by an asynchronous Broker Load (LOAD LABEL …
        WITH S3): once FINISHED they fold like an INSERT of them, in the file's order."""
        rows = self._placeable(rows)
        if not rows:
            return
        values = self.oracle.names[1:]
        batch = [{"k": k, **dict(zip(values, vs, strict=False))} for k, vs in rows]
        label, bucket = f"bl_{uuid.uuid4().hex}", broker_bucket()
        put(bucket, f"{label}.csv", "".join(",".join("\\N" if r.get(n) is None else str(r.get(n))
                                                     for n in self.oracle.names) + "\n" for r in batch).encode())
        config = load_settings()
        user = (config.minio_root_user, config.minio_root_password.get_secret_value())
        loader = chunking_server().connect("model_test")  # the job runs on the server that takes it
        try:
            loader.cursor().execute(f'LOAD LABEL model_test.{label} (DATA INFILE("s3://{bucket}/{label}.csv") INTO '
                                    f'TABLE {self.name} COLUMNS TERMINATED BY "," ({", ".join(self.oracle.names)})) '
                                    f'WITH S3 ({keys(user, "aws")})')
        finally:
            loader.close()
        job = finished_job(self.conn, "LOAD", label, timeout_s=60)
        assert job["State"] == "FINISHED", job
        self.oracle.insert(batch)

    # A clone reads the table's files: every later write, compaction, cooldown, REPLACE and recycle of the
    # table must leave it exactly as cloned, and its own writes must not show on the table.
    @precondition(lambda self: hasattr(self, "oracle") and len(self.clones) < 2)
    @rule()
    def clone(self) -> None:
        self._clone("", copy.deepcopy(self.oracle), self.high)

    def _clone(self, as_of: str, oracle: OracleTable, high: bool) -> None:
        """CREATE TABLE … CLONE the table `as_of` (a clause, or now), which then held `oracle`'s rows."""
        name = f"{self.name.split('_clone')[0]}_clone{next(_tables)}"
        self.sql(f"CREATE TABLE {name} CLONE {self.name}{as_of}")
        self.clones[name] = (oracle, high)

    @precondition(lambda self: bool(self.clones))
    @rule(data=s.data(), rows=s.lists(s.tuples(KEYS, s.lists(VALUES, min_size=4, max_size=4)), max_size=4),
          deleted=s.one_of(s.none(), KEYS), compact=s.booleans())
    def write_clone(self, data: s.DataObject, rows: list[tuple[int, list[Any]]], deleted: int | None,
                    compact: bool) -> None:
        """A clone's own load, delete and compaction: its rows change, the table's do not (the invariants)."""
        name = data.draw(s.sampled_from(sorted(self.clones)))
        oracle, high = self.clones[name]
        batch = [{"k": k, **dict(zip(oracle.names[1:], vs, strict=False))} for k, vs in rows if high or k < 4]
        if batch:
            self._load(batch, oracle.names, table=name)
            oracle.insert(batch)
        if deleted is not None:
            self.sql(f"DELETE FROM {name} WHERE k = {deleted}")
            oracle.delete(lambda r: r["k"] == deleted)
        if compact:
            self.sql(f"ADMIN COMPACT TABLE {name} WHERE type = 'BASE'")

    # Every write path on a clone: the machine goes on with a clone as its table, and the table it leaves
    # joins the clones, whose rows must not move (the invariant below) while each rule writes the new one.
    @precondition(lambda self: bool(self.clones) and self.topic is None and self.adopts)
    @rule(data=s.data())
    def adopt_clone(self, data: s.DataObject) -> None:
        name = data.draw(s.sampled_from(sorted(self.clones)))
        oracle, high = self.clones.pop(name)
        self.clones[self.name] = (self.oracle, self.high)
        self.name, self.oracle, self.high = name, oracle, high

    @invariant()
    def clones_hold_their_own_rows(self) -> None:
        for name, (oracle, _) in self.clones.items():
            got = sort_rows(self.sql(f"SELECT {self.shown(oracle.names)} FROM {name}"))
            assert got == oracle.result(), f"clone {name}"

    def _placeable(self, rows: list[tuple[int, list[Any]]]) -> list[tuple[int, list[Any]]]:
        """The rows a partition can hold now (a row of a dropped range would fail its statement)."""
        return rows if self.high else [r for r in rows if r[0] < 4]

    @precondition(lambda self: self.partitioned and self.high)
    @rule()
    def drop_partition(self) -> None:
        self.sql(f"ALTER TABLE {self.name} DROP PARTITION p_high")
        self.oracle.delete(lambda r: r["k"] >= 4, remember=False)
        self.high = False

    @precondition(lambda self: self.partitioned and not self.high)
    @rule()
    def add_partition(self) -> None:
        self.sql(f'ALTER TABLE {self.name} ADD PARTITION p_high VALUES [("4"), ("8"))')
        self.high = True

    @rule(k=KEYS)
    def delete_key(self, k: int) -> None:
        self.sql(f"DELETE FROM {self.name} WHERE k = {k}")
        self.oracle.delete(lambda r: r["k"] == k)

    @precondition(lambda self: self.keys_model != "AGGREGATE")
    @rule(bound=s.integers(min_value=-50, max_value=50))
    def delete_by_value(self, bound: int) -> None:
        self.sql(f"DELETE FROM {self.name} WHERE v1 > {bound}")
        self.oracle.delete(lambda r: r["v1"] is not None and r["v1"] > bound)

    @precondition(lambda self: self.keys_model == "UNIQUE")
    @rule(k=KEYS, delta=s.integers(min_value=-5, max_value=5))
    def update(self, k: int, delta: int) -> None:
        self.sql(f"UPDATE {self.name} SET v1 = v1 + {delta} WHERE k <= {k}")
        self.oracle.update("v1", lambda v: None if v is None else v + delta, lambda r: r["k"] <= k)

    @precondition(lambda self: len(self.oracle.columns) < 5)
    @rule(default=s.integers(min_value=0, max_value=9))
    def add_column(self, default: int) -> None:
        name = f"c{self.next_column}"
        self.next_column += 1
        aggregation = "REPLACE" if self.keys_model == "AGGREGATE" else None
        agg = f" {aggregation}" if aggregation else ""
        self.sql(f"ALTER TABLE {self.name} ADD COLUMN {name} INT{agg} DEFAULT \"{default}\"")
        self.oracle.add_column(OracleColumn(name, aggregation, default))

    @precondition(lambda self: len(self.oracle.columns) > 2)
    @rule(data=s.data())
    def drop_column(self, data: s.DataObject) -> None:
        name = data.draw(s.sampled_from([c.name for c in self.oracle.columns[2:]]))
        self.sql(f"ALTER TABLE {self.name} DROP COLUMN {name}")
        self.oracle.drop_column(name)

    # A file a clone shares stays where it is (one table may not move another's files): with clones, not
    # every rowset would ever reach MinIO.
    @precondition(lambda self: not self.cooling and not self.clones)
    @rule()
    def cool_down(self) -> None:
        """Attaches the cold policy and waits until every live rowset is on MinIO; from then on
        each later write cools in the background, under the other steps."""
        self.cooling = True
        self.sql(f'ALTER TABLE {self.name} SET ("storage_policy"="{cold_policy()}")')
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            tiers = {t for (t,) in self.sql(f"SELECT DISTINCT TIER FROM information_schema.rowsets WHERE TABLE_SCHEMA"
                                            f" = 'model_test' AND TABLE_NAME = '{self.name}' AND STATE = 'visible'")}
            if not tiers or tiers == {f"remote:{cold_policy()}"}:
                return
            time.sleep(0.2)
        raise AssertionError(f"{self.name} did not cool down within 30 s")

    @rule(base=s.booleans())
    def compact(self, base: bool) -> None:
        self.sql(f"ADMIN COMPACT TABLE {self.name} WHERE type = '{'BASE' if base else 'CUMULATIVE'}'")

    @rule()
    def truncate(self) -> None:
        self.sql(f"TRUNCATE TABLE {self.name}")
        self.oracle.truncate()

    def settle(self) -> None:
        """On a merge-on-write table, gives the worker a moment to commit the delete bitmaps of the last
        writes, so that reads meet them (a tablet without them merges on read: the same rows, slower)."""
        if self.keys_model != "UNIQUE" or not self.merge_on_write:
            return
        deadline = time.monotonic() + SETTLE_S
        while time.monotonic() < deadline:
            plan = " ".join(str(r[0]) for r in self.sql(f"EXPLAIN SELECT * FROM {self.name}") if "merge:" in str(r[0]))
            if "merge-on-read" not in plan:
                return
            time.sleep(0.05)

    @invariant()
    def agrees(self) -> None:
        if not hasattr(self, "oracle"):
            return
        self.settle()
        got = sort_rows(self.sql(f"SELECT {self.shown(self.oracle.names)} FROM {self.name}"))
        assert got == self.oracle.result()

    def teardown(self) -> None:
        try:
            for name in [self.name, *self.swapped_out, *self.clones]:
                self.sql(f"DROP TABLE IF EXISTS {name} FORCE")
        finally:
            self.conn.close()


class UniqueMachine(TableMachine):
    keys_model = "UNIQUE"


class SequencedUniqueMachine(TableMachine):
    keys_model = "UNIQUE"
    sequenced = True
    properties = 'PROPERTIES ("function_column.sequence_type" = "int")'


class PartitionedUniqueMachine(TableMachine):
    keys_model = "UNIQUE"
    partitioned = True


class MergeOnReadUniqueMachine(TableMachine):
    keys_model = "UNIQUE"
    merge_on_write = False


class MergeOnReadSequencedUniqueMachine(SequencedUniqueMachine):
    merge_on_write = False


class PartitionedDuplicateMachine(TableMachine):
    partitioned = True


class AggregateSumMachine(TableMachine):
    keys_model = "AGGREGATE"
    value_aggregation = "SUM"


class AggregateMaxMachine(TableMachine):
    keys_model = "AGGREGATE"
    value_aggregation = "MAX"


class AggregateBitmapMachine(TableMachine):
    keys_model = "AGGREGATE"
    value_aggregation = "BITMAP_UNION"
    value_type = "BITMAP"


class AggregateHllMachine(TableMachine):
    keys_model = "AGGREGATE"
    value_aggregation = "HLL_UNION"
    value_type = "HLL"


_settings = settings(max_examples=examples(ci=12, nightly=25), stateful_step_count=20, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

TestDuplicate = TableMachine.TestCase
TestUnique = UniqueMachine.TestCase
TestSequencedUnique = SequencedUniqueMachine.TestCase
TestAggregateSum = AggregateSumMachine.TestCase
TestAggregateMax = AggregateMaxMachine.TestCase
TestAggregateBitmap = AggregateBitmapMachine.TestCase
TestAggregateHll = AggregateHllMachine.TestCase
TestPartitionedUnique = PartitionedUniqueMachine.TestCase
TestPartitionedDuplicate = PartitionedDuplicateMachine.TestCase
TestMergeOnReadUnique = MergeOnReadUniqueMachine.TestCase
TestMergeOnReadSequencedUnique = MergeOnReadSequencedUniqueMachine.TestCase
for _case in (TestDuplicate, TestAggregateSum, TestAggregateMax, TestAggregateBitmap, TestAggregateHll,
              TestMergeOnReadUnique, TestMergeOnReadSequencedUnique):
    _case.settings = _settings
# Merge-on-write Unique histories wait for each commit's delete bitmaps, the slowest examples of the
# suite; CI tries fewer of them (nightly as many as the others), beside the merge-on-read classes'.
for _case in (TestUnique, TestSequencedUnique):
    _case.settings = settings(_settings, max_examples=examples(ci=8, nightly=25))
for _case in (TestPartitionedUnique, TestPartitionedDuplicate):
    _case.settings = settings(_settings, max_examples=examples(ci=5, nightly=10))
del _case
