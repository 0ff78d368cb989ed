"""The keys the fold writes in one format each still begin with the prefixes their scans seek."""

from __future__ import annotations

import pytest

from projections import keys


@pytest.mark.parametrize(("table_id", "partition_id", "bucket", "version", "ts_ms", "name"), [
    (1, 1, 0, 1, 0, "r"),
    (42, 10_001, 63, 9_999_999_998, 1_796_410_650_483, "784f6347ba784f1bb1e08319cb5cd7f8"),
    (7, 3, 5, 12, 999, "label ☃ Zürich/with/slashes"),
])
def test_one_step_keys_extend_their_prefixes(table_id: int, partition_id: int, bucket: int, version: int,
                                             ts_ms: int, name: str) -> None:
    assert keys.version_key(table_id, partition_id, ts_ms) == \
        keys.version_prefix(table_id, partition_id) + f"{ts_ms:015d}".encode()
    rowset = keys.rowset_key(table_id, partition_id, bucket, version - 1, version, name)
    assert rowset.startswith(keys.tablet_prefix(table_id, partition_id, bucket))
    assert rowset.startswith(keys.rowset_prefix(table_id, partition_id))
    assert rowset.startswith(keys.rowset_prefix(table_id))
    assert rowset == keys.tablet_prefix(table_id, partition_id, bucket) + \
        f"{version:010d}/{9_999_999_999 - (version - 1):010d}/{name}".encode()
    assert keys.commit_key(table_id, version) == keys.commit_prefix(table_id) + f"{version:010d}".encode()
    assert keys.label_key(table_id, name) == f"l/{table_id:010d}/".encode() + name.encode()
    assert keys.file_holder_key(name, "x") == keys.file_holder_prefix(name) + b"x"
