"""The committed JSON Schema files match the models, and describe what the codec writes."""

from __future__ import annotations

import json
from pathlib import Path

from schemas import events as ev
from schemas.envelope import encode, wrap_event
from schemas.jsonschema import SCHEMA_DIR, generate, stale_files, write


def test_committed_schema_files_are_current() -> None:
    stale = stale_files()
    assert stale == [], f"JSON Schema files are stale, run `python -m schemas.jsonschema`: {stale}"


def test_stale_detection_finds_changed_missing_and_extra_files(tmp_path: Path) -> None:
    write(tmp_path)
    assert stale_files(tmp_path) == []
    changed = tmp_path / "events" / "TableDropped.v1.json"
    changed.write_text(changed.read_text().replace("table_id", "tableId"))
    (tmp_path / "events" / "RowsetsCommitted.v1.json").unlink()
    (tmp_path / "events" / "Gone.v1.json").write_text("{}")
    assert stale_files(tmp_path) == ["events/Gone.v1.json", "events/RowsetsCommitted.v1.json",
                                     "events/TableDropped.v1.json"]


def test_schema_names_the_envelope_and_payload_fields() -> None:
    schema = json.loads(generate()["events/DeleteCommitted.v1.json"])
    assert schema["properties"]["type"] == {"const": "DeleteCommitted", "type": "string"}
    assert set(schema["required"]) >= {"event_id", "type", "schema_version", "commit_ts_ms", "payload"}
    payload = schema["$defs"]["DeleteCommitted"]
    assert {"table_id", "partition_versions", "predicate"} <= set(payload["properties"])


def test_an_encoded_event_validates_against_its_schema() -> None:
    jsonschema = __import__("pytest").importorskip("jsonschema")
    envelope = wrap_event(ev.TableDropped(table_id=3, force=True), table_id=3, commit_ts_ms=9, command_id="c")
    schema = json.loads((SCHEMA_DIR / "events" / "TableDropped.v1.json").read_text())
    jsonschema.validate(json.loads(encode(envelope)), schema)
