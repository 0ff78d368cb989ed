"""The event and command codec: round trips for every kind, and clear, typed decode errors."""

from __future__ import annotations

import json

import pytest

from schemas import commands as cmd
from schemas import events as ev
from schemas.envelope import (
    DecodeError,
    NewerSchemaVersion,
    UnknownType,
    decode_command,
    decode_event,
    encode,
    wrap_command,
    wrap_event,
)
from schemas.model import Column, Distribution, Partition, Rowset, TableSchema
from schemas.registry import kinds

ROWSET = Rowset(rowset_id="r1", partition_id=3, bucket=0, num_rows=2, size_bytes=10, path="t1/p3/b0/r1.parquet",
                schema_version=1, checksum="ab", start_version=1, end_version=1, visible_ts_ms=5)


def test_rowsets_committed_round_trips_with_every_field() -> None:
    event = ev.RowsetsCommitted(table_id=1, commit_number=4, label="l1", partition_versions={3: 2},
                                rowsets=(ROWSET,), num_rows=2, source_offsets={"topic/0": 17})
    envelope = wrap_event(event, table_id=1, commit_ts_ms=1700000000000, command_id="c1")
    decoded = decode_event(encode(envelope))
    assert decoded == envelope
    assert isinstance(decoded.payload, ev.RowsetsCommitted)
    assert decoded.payload.partition_versions == {3: 2}
    assert decoded.payload.rowsets[0].path == "t1/p3/b0/r1.parquet"


def test_table_created_round_trips() -> None:
    schema = TableSchema(schema_version=1, columns=(Column(unique_id=1, name="k", type="INT", is_key=True),
                                                    Column(unique_id=2, name="v", type="DECIMAL(10,2)",
                                                           aggregation="SUM")))
    event = ev.TableCreated(db_id=1, table_id=2, name="t", keys_model="AGGREGATE", table_schema=schema,
                            partition_kind="UNPARTITIONED", partitions=(Partition(partition_id=1, name="t",
                                                                                  buckets=3),),
                            distribution=Distribution(columns=("k",), buckets=3), next_column_id=3)
    decoded = decode_event(encode(wrap_event(event, table_id=2, commit_ts_ms=1, command_id=None)))
    assert decoded.payload == event


def test_commands_round_trip() -> None:
    command = cmd.CommitDelete(table_id=1, partition_ids=(1, 2), predicate="c1 = 3", description="DELETE")
    envelope = wrap_command(command, table_id=1, issued_ts_ms=1, origin="test")
    assert decode_command(encode(envelope)) == envelope


def test_every_kind_is_registered_once_with_a_distinct_type() -> None:
    events, commands = kinds("event"), kinds("command")
    assert "RowsetsCommitted" in events and "CommandRejected" in events
    assert "CommitRowsets" in commands and "CreateTable" in commands
    assert all(cls.TYPE == name for name, cls in {**events, **commands}.items())


@pytest.mark.parametrize("raw, error, text", [
    (None, DecodeError, "empty record"),
    (b"\xff\xfe", DecodeError, "not JSON"),
    (b"[1, 2]", DecodeError, "not a JSON object"),
    (b'{"type": "Nope", "schema_version": 1}', UnknownType, "unknown event type 'Nope'"),
    (b'{"type": "TableDropped", "schema_version": 99, "payload": {}}', NewerSchemaVersion, "newer than 1"),
    (b'{"type": "TableDropped", "schema_version": "1"}', DecodeError, "schema_version missing"),
    (b'{"type": "TableDropped", "schema_version": 1, "payload": {"table_id": "x"}}', DecodeError,
     "invalid payload"),
])
def test_bad_records_raise_a_countable_decode_error(raw: bytes | None, error: type[DecodeError], text: str) -> None:
    with pytest.raises(error) as caught:
        decode_event(raw)
    assert text in str(caught.value)
    assert caught.value.reason in ("malformed", "unknown_type", "newer_schema_version")


def test_envelope_missing_field_is_a_decode_error() -> None:
    body = json.loads(encode(wrap_event(ev.TableDropped(table_id=1), table_id=1, commit_ts_ms=1, command_id=None)))
    del body["commit_ts_ms"]
    with pytest.raises(DecodeError, match="invalid event envelope"):
        decode_event(json.dumps(body))


def test_a_command_is_not_decoded_as_an_event() -> None:
    raw = encode(wrap_command(cmd.CreateDatabase(name="d"), table_id=None, issued_ts_ms=1, origin="t"))
    with pytest.raises(UnknownType):
        decode_event(raw)


def test_the_sequencer_position_rides_on_an_event_and_is_absent_from_the_others() -> None:
    plain = wrap_event(ev.TableDropped(table_id=3, force=False), table_id=3, commit_ts_ms=9, command_id="c")
    assert "commands_position" not in json.loads(encode(plain))
    last = plain.model_copy(update={"commands_position": {0: 41, 2: 7}})
    decoded = decode_event(encode(last))
    assert decoded.commands_position == {0: 41, 2: 7} and decoded == last
    assert decode_event(encode(plain)).commands_position is None
