"""`trusted` builds the fold's records without validating them again: the same instance, the same bytes."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from projections.decided import Outcome
from projections.state import CommitRecord, LabelRecord, RowsetRecord, record_bytes, trusted
from schemas.model import Rowset

ROWSET = Rowset(rowset_id="r1", partition_id=3, bucket=1, num_rows=7, size_bytes=9, path="t1/p3/b1/r1.parquet",
                schema_version=2, checksum="c", start_version=4, end_version=5, visible_ts_ms=6, column_ids=(1, 2))


@pytest.mark.parametrize(("cls", "values"), [
    (RowsetRecord, {"rowset": ROWSET, "stale_ts_ms": None, "replaced_by_keeping": False}),
    (RowsetRecord, {"rowset": ROWSET, "stale_ts_ms": 12, "replaced_by_keeping": True}),
    (CommitRecord, {"commit_number": 3, "ts_ms": 10, "kind": "load", "partition_versions": {1: 2, 3: 4},
                    "rows_added": 5, "rows_removed": 0, "description": "Zürich ☃ \"quoted\"\n\x01"}),
    (LabelRecord, {"label": "lab\\el ☃", "command_id": None, "commit_number": 1, "ts_ms": 2, "num_rows": 3}),
    (Outcome, {"event_id": "e", "type": "CommandRejected", "commit_ts_ms": 1, "code": 1105, "reason": "\t\u2028"}),
])
def test_a_trusted_record_is_the_validated_one(cls: type[BaseModel], values: dict) -> None:
    validated = cls(**values)
    built = trusted(cls, **values)
    assert type(built) is cls and built == validated
    assert record_bytes(built) == record_bytes(validated)
    assert built.model_fields_set == validated.model_fields_set
    assert built.model_dump_json(exclude_unset=True) == validated.model_dump_json(exclude_unset=True)


def test_a_trusted_record_names_every_field_in_order() -> None:
    with pytest.raises(TypeError, match="declaration order"):
        trusted(LabelRecord, label="l", command_id=None, commit_number=1, ts_ms=2)  # num_rows missing
    with pytest.raises(TypeError, match="declaration order"):
        trusted(LabelRecord, command_id=None, label="l", commit_number=1, ts_ms=2, num_rows=3)
    with pytest.raises(TypeError, match="declaration order"):
        trusted(LabelRecord, label="l", command_id=None, commit_number=1, ts_ms=2, num_rows=3, extra=1)
