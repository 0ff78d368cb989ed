"""Hostile records for the codec: arbitrary bytes, arbitrary JSON, and valid envelopes mutated field
by field or byte by byte must decode or raise `DecodeError` (one of its countable reasons) — never
another exception, never a hang. Whatever decodes re-encodes to the same envelope."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas import commands as cmd
from schemas import events as ev
from schemas.envelope import DecodeError, decode_command, decode_event, encode, wrap_command, wrap_event
from schemas.model import Column, Distribution, Partition, Rowset, TableSchema
from schemas.registry import kinds
from tests.time_bound import within

_REASONS = {"malformed", "unknown_type", "newer_schema_version"}
_BOUND_S = 5.0

_ROWSET = Rowset(rowset_id="r1", partition_id=3, bucket=0, num_rows=2, size_bytes=10, path="t1/p3/b0/r1.parquet",
                 schema_version=1, checksum="ab", start_version=1, end_version=1, visible_ts_ms=5)
_SCHEMA = TableSchema(schema_version=1, columns=(Column(unique_id=1, name="k", type="INT", is_key=True),))
_EVENTS = [
    ev.DatabaseCreated(db_id=1, name="d"),
    ev.TableDropped(table_id=1),
    ev.RowsetsCommitted(table_id=1, commit_number=4, label="l1", partition_versions={3: 2}, rowsets=(_ROWSET,),
                        num_rows=2, source_offsets={"topic/0": 17}),
    ev.TableCreated(db_id=1, table_id=2, name="t", keys_model="DUPLICATE", table_schema=_SCHEMA,
                    partition_kind="UNPARTITIONED", partitions=(Partition(partition_id=1, name="t", buckets=3),),
                    distribution=Distribution(columns=("k",), buckets=3), next_column_id=2),
    ev.CommandRejected(command_type="CreateTable", code=1050, reason="exists"),
]
_VALID_EVENTS = [encode(wrap_event(e, table_id=1, commit_ts_ms=1700000000000, command_id="c")) for e in _EVENTS]
_VALID_COMMANDS = [
    encode(wrap_command(cmd.CreateDatabase(name="d"), table_id=None, issued_ts_ms=1, origin="t")),
    encode(wrap_command(cmd.CommitDelete(table_id=1, partition_ids=(1, 2), predicate="c1 = 3", description="D"),
                        table_id=1, issued_ts_ms=1, origin="t")),
]
_TYPE_NAMES = sorted(kinds("event")) + sorted(kinds("command"))

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12)


def _check(raw: bytes | str | None) -> None:
    for decode in (decode_event, decode_command):
        with within(_BOUND_S, raw):
            try:
                envelope = decode(raw)
            except DecodeError as error:
                assert error.reason in _REASONS
                assert str(error)
                continue
        # Decoded: it survives its own round trip (what a processor folds is what it would re-emit).
        assert decode(encode(envelope)) == envelope


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_arbitrary_bytes(raw: bytes) -> None:
    _check(raw)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_JSON)
def test_arbitrary_json_values(value: Any) -> None:
    _check(json.dumps(value).encode())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(["event_id", "type", "schema_version", "table_id", "commit_ts_ms",
                                        "command_id", "payload", "issued_ts_ms", "origin", "extra"]),
                       st.one_of(_JSON, st.sampled_from(_TYPE_NAMES)), max_size=8))
def test_envelope_shaped_objects(body: dict[str, Any]) -> None:
    _check(json.dumps(body).encode())


_VALUE = st.one_of(_JSON, st.sampled_from([True, -1, 0, 2**63, 10**30, 1e308, "1", "", [], {}, "x" * 1000]),
                   st.sampled_from(_TYPE_NAMES))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_VALID_EVENTS + _VALID_COMMANDS), st.data())
def test_valid_envelopes_mutated_field_by_field(raw: bytes, data: st.DataObject) -> None:
    body = json.loads(raw)
    for _ in range(data.draw(st.integers(1, 3))):
        # A field of the envelope or of its payload (one level down, where the ids and versions are).
        target = body
        if isinstance(body.get("payload"), dict) and body["payload"] and data.draw(st.booleans()):
            target = body["payload"]
        key = data.draw(st.sampled_from(sorted(target) + ["unexpected"]))
        if data.draw(st.integers(0, 3)) == 0:
            target.pop(key, None)
        else:
            target[key] = data.draw(_VALUE)
    _check(json.dumps(body).encode())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_VALID_EVENTS + _VALID_COMMANDS), st.data())
def test_valid_envelopes_mutated_byte_by_byte(raw: bytes, data: st.DataObject) -> None:
    mutated = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(mutated)))
        action = data.draw(st.sampled_from(["flip", "cut", "insert", "delete"]))
        if action == "cut":
            del mutated[at:]
        elif action == "insert":
            mutated[at:at] = data.draw(st.binary(min_size=1, max_size=8))
        elif mutated and at < len(mutated):
            if action == "flip":
                mutated[at] ^= 1 << data.draw(st.integers(0, 7))
            else:
                del mutated[at]
    _check(bytes(mutated))


@pytest.mark.parametrize("raw", [
    b"[" * 100_000,  # json's recursion limit
    b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    b"1" * 5000,  # past Python's integer digit limit
    b'{"type":"TableDropped","schema_version":' + b"9" * 5000 + b',"payload":{}}',
    b'{"type":"TableDropped","schema_version":1,"payload":{"table_id":' + b"9" * 5000 + b"}}",
    b'{"type":"TableDropped","schema_version":1,"payload":{"table_id":1e999}}',
    b'{"type":"TableDropped","schema_version":1,"payload":{"table_id":NaN}}',
    b"\xef\xbb\xbf{}",
    b"\x00" * 64,
    "{\"type\": \"\ud800\"}",
    b'"' + b"x" * 1_000_000 + b'"',
])
def test_pathological_records_are_decode_errors(raw: bytes | str) -> None:
    with within(_BOUND_S, raw[:40]):
        with pytest.raises(DecodeError):
            decode_event(raw)
        with pytest.raises(DecodeError):
            decode_command(raw)
